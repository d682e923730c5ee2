/**
 * Custom primitives and concern filtering end to end: the committed `examples/petstore-plus`
 * project (Petstore + two extra tools, two prompts, static/file/dynamic resources, a resource
 * template and three concerns) is checked against its manifest (`--check`), copied into
 * `.cache/primitives`, compiled with tsc and started over stdio, once per SDK `Client`. Each
 * step of seed 002's workflow is reproduced: the declaration, every configuration channel
 * (initialize request, initialized notification, `concerns/update`, per-request `_meta`),
 * filtered listings, a dynamic update with its list_changed notifications, `enforce`, and two
 * concurrent clients with different preferences. A handler with the wrong signature fails tsc.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListPromptsResultSchema,
  ListToolsResultSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { startBackend } from '../../examples/petstore/backend.mjs';
import { main } from '../../src/cli/main.js';
import { rejection } from '../helpers/mcp.js';
import { ROOT, run, typecheck } from '../helpers/project.js';

const EXAMPLE = path.join(ROOT, 'examples/petstore-plus');
const work = path.join(ROOT, '.cache/primitives');
const project = path.join(work, 'server');
const META_KEY = 'io.mcpgen/concerns';
const OPERATION_TOOLS = ['listPets', 'createPet', 'getPetById', 'updatePet', 'deletePet', 'store_inventory'];
const ALL_TOOLS = [...OPERATION_TOOLS, 'adoption_fee', 'pet_name_ideas', 'adoption_interview'];
const ALL_RESOURCES = ['petstore://policies/adoption', 'petstore://docs/handbook', 'petstore://brand/logo', 'petstore://server/status'];
const TEMPLATE = 'petstore://species/{species}/care';

let backend: { url: string; server: { close(): void }; requests: Array<{ method: string; path: string }> };
const clients: Client[] = [];

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  cpSync(path.join(EXAMPLE, 'server'), project, { recursive: true, filter: (src) => !/[\\/](node_modules|dist)$/.test(src) });
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  // the committed example is what its manifest generates (and its handlers exist)
  expect(await main(['build', 'examples/petstore-plus/mcpgen.yaml', '--out', path.relative(ROOT, project), '--check'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  backend = (await startBackend({ port: 0 })) as typeof backend;
});

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  backend?.server.close();
});

type Notes = { tools: number; prompts: number; resources: number };

/**
 * Starts one server process and connects a Client to it. `concerns` go into the initialize
 * request; `initialized` into the params of `notifications/initialized` (the SDK client sends
 * none, so the transport adds them on the wire).
 */
async function connect(opts: { concerns?: Record<string, string>; initialized?: Record<string, unknown> } = {}): Promise<{ client: Client; notes: Notes }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(project, 'dist/server.js')],
    env: { PATH: process.env.PATH ?? '', PETSTORE_PLUS_BASE_URL: backend.url },
    stderr: 'pipe',
  });
  if (opts.initialized) {
    const send = transport.send.bind(transport);
    const params = opts.initialized;
    transport.send = (message: JSONRPCMessage) =>
      send('method' in message && message.method === 'notifications/initialized' ? { ...message, params } : message);
  }
  const client = new Client({ name: 'primitives-e2e', version: '1' }, opts.concerns ? { capabilities: { experimental: { concerns: opts.concerns } } } : {});
  const notes: Notes = { tools: 0, prompts: 0, resources: 0 };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void notes.tools++);
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => void notes.prompts++);
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void notes.resources++);
  await client.connect(transport);
  clients.push(client);
  return { client, notes };
}

type Lists = { tools: string[]; prompts: string[]; resources: string[]; templates: string[] };
async function lists(client: Client): Promise<Lists> {
  const [tools, prompts, resources, templates] = await Promise.all([
    client.listTools(),
    client.listPrompts(),
    client.listResources(),
    client.listResourceTemplates(),
  ]);
  return {
    tools: tools.tools.map((t) => t.name),
    prompts: prompts.prompts.map((p) => p.name),
    resources: resources.resources.map((r) => r.uri),
    templates: templates.resourceTemplates.map((t) => t.uriTemplate),
  };
}

const Updated = z.looseObject({ concerns: z.record(z.string(), z.string()), changed: z.boolean() });
const Listed = z.looseObject({
  concerns: z.array(z.looseObject({ name: z.string() })),
  presets: z.record(z.string(), z.record(z.string(), z.string())).optional(),
});
type AnyRequest = Parameters<Client['request']>[0];
const update = (client: Client, params: Record<string, unknown>) => client.request({ method: 'concerns/update', params } as unknown as AnyRequest, Updated);
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** Waits until `check` holds (notifications arrive asynchronously), at most ~2 s. */
async function eventually(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('custom primitives', () => {
  it('lists operation and extra tools, prompts, resources and the template to a client that knows nothing of concerns', async () => {
    const { client } = await connect();
    expect(await lists(client)).toEqual({ tools: ALL_TOOLS, prompts: ['adopt_a_pet', 'care_plan'], resources: ALL_RESOURCES, templates: [TEMPLATE] });
    const caps = client.getServerCapabilities()!;
    expect(caps.tools).toEqual({ listChanged: true });
    expect(caps.prompts).toEqual({ listChanged: true });
    // handler resources and the template can change: clients may subscribe
    expect(caps.resources).toEqual({ subscribe: true, listChanged: true });
    // exposeInMeta: mapped primitives carry their mapping
    const fee = (await client.listTools()).tools.find((t) => t.name === 'adoption_fee')!;
    expect(fee._meta).toEqual({ concerns: { risk: 'low', audience: 'customer' } });
    expect(fee.outputSchema).toMatchObject({ type: 'object', required: ['fee', 'currency', 'covers'] });
    expect(fee.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
  });

  it('runs extra tools after validating their arguments, and operation tools beside them', async () => {
    const { client } = await connect();
    const fee = (await client.callTool({ name: 'adoption_fee', arguments: { species: 'dog', ageYears: 9 } })) as CallToolResult;
    expect(fee.isError).toBeFalsy();
    expect(fee.structuredContent).toEqual({ fee: 75, currency: 'USD', covers: ['vaccinations', 'microchip', 'neutering', 'senior health check'] });
    const invalid = (await client.callTool({ name: 'adoption_fee', arguments: { species: 'dragon', ageYears: -1 } })) as CallToolResult;
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/species: must be one of "dog", "cat", "rabbit", "other"/);
    expect(text(invalid)).toMatch(/ageYears: must be >= 0/);
    const names = (await client.callTool({ name: 'pet_name_ideas', arguments: { species: 'cat', count: 2 } })) as CallToolResult;
    expect(text(names)).toBe('Miso\nLuna');
    const failed = (await client.callTool({ name: 'pet_name_ideas', arguments: { species: 'fish' } })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(text(failed)).toBe('Tool pet_name_ideas failed: no name ideas for a fish (try dog, cat or rabbit)');
    const pets = (await client.callTool({ name: 'listPets', arguments: {} })) as CallToolResult;
    expect(pets.isError).toBeFalsy();
    expect(text(pets)).toContain('Rex');
  });

  it('adoption_interview asks the user a form, then the model for a name (the documented example of ctx.elicit and ctx.sample)', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(project, 'dist/server.js')],
      env: { PATH: process.env.PATH ?? '', PETSTORE_PLUS_BASE_URL: backend.url },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'primitives-e2e', version: '1' }, { capabilities: { elicitation: { form: {} }, sampling: {} } });
    const forms: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      forms.push(req.params);
      return { action: 'accept', content: { species: 'dog', budget: 200, firstPet: true } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: 'assistant', model: 'scripted', content: { type: 'text', text: 'Pancake' } }));
    await client.connect(transport);
    clients.push(client);
    const result = (await client.callTool({ name: 'adoption_interview', arguments: {} })) as CallToolResult;
    expect(result.isError, text(result)).toBeFalsy();
    expect(text(result)).toBe('A dog named Pancake, with a budget of 200 USD — a first pet: ask the staff for the starter guide.');
    expect(forms).toEqual([expect.objectContaining({ message: 'Tell us about the pet you would like to adopt.' })]);
  });

  it('renders prompt templates and refuses a missing required argument', async () => {
    const { client } = await connect();
    const adopt = await client.getPrompt({ name: 'adopt_a_pet', arguments: { species: 'cat', budget: '120' } });
    expect(adopt.messages).toEqual([
      {
        role: 'user',
        content: {
          type: 'text',
          text: 'I would like to adopt a cat. My budget is 120 USD.\nList the available ones with listPets, check the fee with adoption_fee, and recommend one.',
        },
      },
    ]);
    const noBudget = await client.getPrompt({ name: 'adopt_a_pet', arguments: { species: '<b>dog</b>' } });
    expect((noBudget.messages[0]!.content as { text: string }).text).toMatch(/^I would like to adopt a <b>dog<\/b>\.\n/);
    const plan = await client.getPrompt({ name: 'care_plan', arguments: { petName: 'Rex', species: 'dog' } });
    expect(plan.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    const err = await rejection(client.getPrompt({ name: 'care_plan', arguments: { petName: 'Rex' } }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('missing required argument "species"');
  });

  it('serves static, embedded and dynamic resources and a resource template', async () => {
    const { client } = await connect();
    const read = async (uri: string) => (await client.readResource({ uri })).contents[0] as { uri: string; mimeType?: string; text?: string; blob?: string };
    expect((await read('petstore://policies/adoption')).text).toMatch(/^Adopters must be 18 or older/);
    const handbook = await read('petstore://docs/handbook');
    expect(handbook).toEqual({
      uri: 'petstore://docs/handbook',
      mimeType: 'text/markdown',
      text: readFileSync(path.join(EXAMPLE, 'docs/handbook.md'), 'utf8'),
    });
    const logo = await read('petstore://brand/logo');
    expect(logo.mimeType).toBe('image/png');
    expect(Buffer.from(logo.blob!, 'base64')).toEqual(readFileSync(path.join(EXAMPLE, 'docs/logo.png')));
    const status = JSON.parse((await read('petstore://server/status')).text!) as { uptimeSeconds: number; node: string };
    expect(status.node).toBe(process.version);
    const care = await read('petstore://species/rabbit/care');
    expect(care).toMatchObject({ mimeType: 'text/markdown', text: expect.stringMatching(/^# Rabbit care/) as unknown });
    const broken = await rejection(client.readResource({ uri: 'petstore://species/dragon/care' }));
    expect(broken.code).toBe(-32603);
    expect(broken.message).toContain('no care sheet for "dragon"');
    // -32602 in every era: the v2 SDK sends resource-not-found as invalid params (2026-07-28's code) to legacy clients too
    expect((await rejection(client.readResource({ uri: 'petstore://nothing/here' }))).code).toBe(-32602);
  });
});

describe('concern filtering (seed 002 workflow)', () => {
  it('1. declares its concerns in the initialize result and answers concerns/list', async () => {
    const { client } = await connect();
    const declared = (client.getServerCapabilities()!.experimental as { concerns: Record<string, unknown> }).concerns;
    expect(declared).toEqual({
      declarations: [
        { name: 'risk', description: 'How much harm a mistaken call can do.', values: ['low', 'high'], default: 'low' },
        { name: 'audience', description: 'Who the primitive is meant for.', values: ['customer', 'staff'] },
        { name: 'detail', description: 'How long the output is.', values: ['brief', 'full'], default: 'brief' },
      ],
      methods: ['concerns/list', 'concerns/update'],
      metaKey: META_KEY,
      presets: ['front-desk', 'back-office', 'low-risk'],
      presetKey: 'concernPreset',
      presetMetaKey: 'io.mcpgen/concernPreset',
    });
    const listed = await client.request({ method: 'concerns/list' } as unknown as AnyRequest, Listed);
    expect(listed.concerns).toEqual(declared.declarations);
    expect(listed.presets).toEqual({ 'front-desk': { audience: 'customer', risk: 'low' }, 'back-office': { audience: 'staff' }, 'low-risk': { risk: 'low' } });
  });

  it('2a. takes preferences from the initialize request', async () => {
    const { client } = await connect({ concerns: { audience: 'customer' } });
    expect(await lists(client)).toEqual({
      tools: ['listPets', 'getPetById', 'adoption_fee', 'pet_name_ideas', 'adoption_interview'],
      prompts: ['adopt_a_pet', 'care_plan'],
      resources: ['petstore://policies/adoption', 'petstore://brand/logo'],
      templates: [TEMPLATE],
    });
  });

  it('2b. takes preferences (and presets) from the initialized notification params', async () => {
    const { client } = await connect({ initialized: { concerns: { risk: 'low', detail: 'brief' } } });
    expect(await lists(client)).toEqual({
      tools: ['listPets', 'getPetById', 'store_inventory', 'adoption_fee', 'pet_name_ideas', 'adoption_interview'],
      prompts: ['adopt_a_pet'],
      resources: ['petstore://policies/adoption', 'petstore://brand/logo', 'petstore://server/status'],
      templates: [],
    });
    const staff = await connect({ initialized: { preset: 'back-office' } });
    expect((await lists(staff.client)).tools).toEqual(ALL_TOOLS.filter((t) => !['adoption_fee', 'pet_name_ideas', 'adoption_interview'].includes(t)));
  });

  it('3. updates preferences with concerns/update (partial, idempotent) and sends list_changed', async () => {
    const { client, notes } = await connect({ concerns: { audience: 'staff' } });
    expect((await lists(client)).tools).toEqual(OPERATION_TOOLS);

    // partial: audience stays staff; the full-detail handbook and template disappear
    expect(await update(client, { concerns: { detail: 'brief' } })).toEqual({ concerns: { audience: 'staff', detail: 'brief' }, changed: true });
    await eventually(() => notes.resources > 0);
    expect(notes).toEqual({ tools: 0, prompts: 0, resources: 1 });
    expect(await lists(client)).toEqual({
      tools: OPERATION_TOOLS,
      prompts: [],
      resources: ['petstore://brand/logo', 'petstore://server/status'],
      templates: [],
    });

    // the seed's "relax" step: switch audience; tools change, so tools/list_changed arrives
    expect(await update(client, { concerns: { audience: 'customer', risk: 'low' } })).toEqual({
      concerns: { audience: 'customer', detail: 'brief', risk: 'low' },
      changed: true,
    });
    await eventually(() => notes.tools > 0 && notes.prompts > 0 && notes.resources > 1);
    expect(notes).toEqual({ tools: 1, prompts: 1, resources: 2 });
    expect((await lists(client)).tools).toEqual(['listPets', 'getPetById', 'adoption_fee', 'pet_name_ideas', 'adoption_interview']);

    // idempotent: the same update changes nothing and notifies nobody
    expect((await update(client, { concerns: { audience: 'customer' } })).changed).toBe(false);
    // a preset replaces everything; null unsets one concern
    expect((await update(client, { preset: 'back-office', concerns: { detail: null } })).concerns).toEqual({ audience: 'staff' });
    await eventually(() => notes.tools > 1);
    expect(notes.tools).toBe(2);
  });

  it('3b. rejects an unknown value with invalid-params naming the allowed values', async () => {
    const { client } = await connect();
    const err = await rejection(update(client, { concerns: { risk: 'medium' } }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('concern "risk": unknown value "medium" (allowed values: "low", "high")');
    expect((await rejection(update(client, { concerns: { colour: 'red' } }))).message).toContain('declared concerns: "risk", "audience", "detail"');
    expect((await lists(client)).tools).toEqual(ALL_TOOLS);
  });

  it('4. honours per-request _meta preferences, for that request only', async () => {
    const { client } = await connect({ concerns: { audience: 'customer' } });
    const staffTools = await client.request(
      { method: 'tools/list', params: { _meta: { [META_KEY]: { audience: 'staff', risk: 'low' } } } },
      ListToolsResultSchema,
    );
    expect(staffTools.tools.map((t) => t.name)).toEqual(['listPets', 'getPetById', 'store_inventory']);
    const prompts = await client.request({ method: 'prompts/list', params: { _meta: { [META_KEY]: { detail: 'brief' } } } }, ListPromptsResultSchema);
    expect(prompts.prompts.map((p) => p.name)).toEqual(['adopt_a_pet']);
    expect((await lists(client)).tools).toEqual(['listPets', 'getPetById', 'adoption_fee', 'pet_name_ideas', 'adoption_interview']);
    const err = await rejection(client.request({ method: 'tools/list', params: { _meta: { [META_KEY]: { audience: 'everyone' } } } }, ListToolsResultSchema));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('allowed values: "customer", "staff"');
  });

  it('5. enforce: refuses calls, gets and reads of filtered-out primitives', async () => {
    const { client } = await connect({ concerns: { risk: 'low', audience: 'customer' } });
    const call = await rejection(client.callTool({ name: 'deletePet', arguments: { petId: 1 } }));
    expect(call.code).toBe(-32602);
    expect(call.message).toContain('Tool deletePet is not available with the current concern preferences (risk=low, audience=customer)');
    expect(backend.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
    expect((await rejection(client.readResource({ uri: 'petstore://docs/handbook' }))).message).toContain('Resource petstore://docs/handbook is not available');
    await update(client, { concerns: { detail: 'brief' } });
    expect((await rejection(client.getPrompt({ name: 'care_plan', arguments: { petName: 'Rex', species: 'dog' } }))).message).toContain(
      'Prompt care_plan is not available',
    );
    expect((await rejection(client.readResource({ uri: 'petstore://species/dog/care' }))).message).toContain(
      'Resource template petstore://species/{species}/care is not available',
    );
    // visible ones still work
    expect(((await client.callTool({ name: 'adoption_fee', arguments: { species: 'cat', ageYears: 1 } })) as CallToolResult).isError).toBeFalsy();
    // a per-request _meta preference applies to calls too
    expect((await rejection(client.callTool({ name: 'store_inventory', arguments: {} }))).message).toContain('Tool store_inventory is not available');
    const asStaff = (await client.callTool({ name: 'store_inventory', arguments: {}, _meta: { [META_KEY]: { audience: 'staff' } } })) as CallToolResult;
    expect(asStaff.isError).toBeFalsy();
    expect(backend.requests.at(-1)).toMatchObject({ method: 'GET', path: '/store/inventory' });
  });

  it('keeps preferences per session: two concurrent clients each see their own lists', async () => {
    const [customer, staff] = await Promise.all([connect({ concerns: { audience: 'customer' } }), connect({ concerns: { audience: 'staff' } })]);
    const [a, b] = await Promise.all([lists(customer.client), lists(staff.client)]);
    expect(a.tools).toEqual(['listPets', 'getPetById', 'adoption_fee', 'pet_name_ideas', 'adoption_interview']);
    expect(b.tools).toEqual(OPERATION_TOOLS);
    expect(a.resources).not.toEqual(b.resources);
    // one client's update leaves the other untouched
    await update(customer.client, { concerns: { risk: 'high' } });
    const [a2, b2] = await Promise.all([lists(customer.client), lists(staff.client)]);
    expect(a2.tools).toEqual([]);
    expect(b2).toEqual(b);
    expect(staff.notes.tools).toBe(0);
  });
});

describe('typed handlers', () => {
  const cases: Array<[string, string]> = [
    ['wrong argument type', 'export async function adoptionFee(args: { species: number }): Promise<string> {\n  return String(args.species);\n}\n'],
    [
      'wrong result type',
      "import type { AdoptionFeeArgs } from '../extra-tools.gen.js';\n\nexport async function adoptionFee(args: AdoptionFeeArgs): Promise<{ fee: string }> {\n  return { fee: args.species };\n}\n",
    ],
  ];
  it.each(cases)('a handler with the %s fails tsc at the tool that uses it', async (label, source) => {
    const broken = path.join(work, `broken-${label.replace(/\W+/g, '-')}`);
    cpSync(project, broken, { recursive: true, filter: (src) => !/[\\/](node_modules|dist)$/.test(src) });
    writeFileSync(path.join(broken, 'src/handlers/adoption.ts'), source);
    const r = await typecheck(broken);
    expect(r.ok).toBe(false);
    const errors = r.output.split('\n').filter((l) => /error TS\d+/.test(l));
    expect(errors).toHaveLength(1);
    const m =
      /src\/extra-tools\.gen\.ts\((\d+),\d+\): error TS2322: .*is not assignable to type '\(args: AdoptionFeeArgs, ctx: ExtraToolContext<ApiClient>\) => AdoptionFeeResult \| Promise<AdoptionFeeResult>'/.exec(
        errors[0]!,
      );
    expect(m, r.output).not.toBeNull();
    const line = readFileSync(path.join(broken, 'src/extra-tools.gen.ts'), 'utf8').split('\n')[Number(m![1]) - 1];
    expect(line).toContain('"handler": $handlers_adoption.adoptionFee');
  });

  it('the committed handlers type-check', async () => {
    expect((await typecheck(project)).ok).toBe(true);
  });
});

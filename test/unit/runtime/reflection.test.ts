import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, CreateMessageRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, CreateMessageRequest, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/log.js';
import { installPrompts } from '../../../templates/runtime/prompts.js';
import { gateKey } from '../../../templates/runtime/reflection-key.js';
import { PERSIST_TOOL_NAME, ReflectionGate } from '../../../templates/runtime/reflection.js';
import type { GateHint, ReflectionConfig } from '../../../templates/runtime/reflection.js';

const work = mkdtempSync(path.join(tmpdir(), 'mcpgen-reflection-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let dirs = 0;
const freshDir = (): string => path.join(work, `store${++dirs}`);

const logs: string[] = [];
beforeAll(() => {
  setLogSink((line) => logs.push(line));
});
const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const CRS_TEMPLATE = 'Before reprojecting from {{source}} to {{target}}, justify the target CRS.';
const DATUM_TEMPLATE = 'Justify the datum transformation for {{source}}.';
const crsGate = { domain: 'crs', prompt: 'justify_crs', template: CRS_TEMPLATE, promptArgs: { source: '{{src}}', target: '{{dst}}' } };
const datumGate = { domain: 'datum', prompt: 'justify_datum', template: DATUM_TEMPLATE, promptArgs: { source: '{{src}}' } };

const GOOD = { intent: 'web map tiles', alternatives: ['EPSG:4326', 'EPSG:3857'], choice: 'EPSG:3857 for tiles', confidence: 0.8 };

function baseConfig(overrides: Partial<ReflectionConfig> = {}): ReflectionConfig {
  return {
    storeDir: freshDir(),
    domains: ['crs', 'datum'],
    gates: { reproject: [crsGate], warp: [crsGate], transform: [crsGate, datumGate], structured: [datumGate] },
    toolsWithOutputSchema: ['structured'],
    ...overrides,
  };
}

const TOOLS: Tool[] = ['reproject', 'warp', 'transform', 'plain', 'structured', 'structured_unlisted'].map((name) => ({
  name,
  inputSchema: { type: 'object' },
  ...(name.startsWith('structured') ? { outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } : {}),
}));

type Model = (req: CreateMessageRequest) => string | Promise<string>;

async function connect(gate: ReflectionGate, model?: Model): Promise<{ client: Client; samplingRequests: CreateMessageRequest[]; runs: string[] }> {
  const server = new Server({ name: 'r', version: '1' }, { capabilities: { tools: {}, prompts: {} } });
  const runs: string[] = [];
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: gate.exposesPersistTool ? [...TOOLS, gate.persistTool] : TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    if (name === PERSIST_TOOL_NAME) return gate.persist(args);
    const verdict = await gate.check(name, args, { server, signal: extra.signal, requestId: extra.requestId });
    if (!verdict.ok) return verdict.result;
    runs.push(name);
    return name.startsWith('structured') ? { content: [{ type: 'text', text: '{"ok":true}' }], structuredContent: { ok: true } } : { content: [{ type: 'text', text: `ran ${name}` }] };
  });
  installPrompts(server, gate.promptsFor());
  const samplingRequests: CreateMessageRequest[] = [];
  const client = new Client({ name: 'host', version: '1' }, model ? { capabilities: { sampling: {} } } : {});
  if (model) {
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      samplingRequests.push(req);
      return { role: 'assistant', model: 'fake', content: { type: 'text', text: await model(req) } };
    });
  }
  const [ct, st] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(st), client.connect(ct)]);
  open.push(client);
  await client.listTools();
  return { client, samplingRequests, runs };
}

const ARGS = { src: 'EPSG:4326', dst: 'EPSG:3857' };
const call = (client: Client, name: string, args: Record<string, unknown> = ARGS) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const textOf = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const hintOf = (r: CallToolResult): GateHint => r.structuredContent as GateHint;
/** Text of a sampling message's content (a block or an array of blocks). */
const samplingText = (content: CreateMessageRequest['params']['messages'][number]['content'] | undefined): string =>
  (Array.isArray(content) ? content : content === undefined ? [] : [content]).map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('reflection gate: host flow (client without sampling)', () => {
  it('hints, serves the prompt, persists, then the retry runs the tool', async () => {
    const gate = new ReflectionGate(baseConfig());
    const { client, runs } = await connect(gate);
    expect(await call(client, 'plain')).toMatchObject({ content: [{ text: 'ran plain' }] });

    const miss = await call(client, 'reproject');
    expect(miss.isError).toBe(true);
    const hint = hintOf(miss);
    const expectedHash = gateKey({ domain: 'crs', templateText: CRS_TEMPLATE, promptArgs: { source: 'EPSG:4326', target: 'EPSG:3857' } });
    expect(hint).toEqual({ prompt: 'justify_crs', prompt_args: { source: 'EPSG:4326', target: 'EPSG:3857' }, hash: expectedHash, domain: 'crs', remaining: 1 });
    const text = textOf(miss);
    expect(text).toContain('1. Get the prompt: prompts/get with name "justify_crs"');
    expect(text).toContain('2. Have the model answer it with only a JSON object');
    expect(text).toContain(`3. Call the tool persist_justification with {"hash": "${expectedHash}", "domain": "crs"`);
    expect(text).toContain('Then call reproject again with the same arguments.');
    expect(text).toContain('Before reprojecting from EPSG:4326 to EPSG:3857');
    expect(JSON.parse(miss.content[1]?.type === 'text' ? miss.content[1].text : '')).toEqual(hint);

    const prompt = await client.getPrompt({ name: hint.prompt, arguments: hint.prompt_args });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Before reprojecting from EPSG:4326 to EPSG:3857, justify the target CRS.' } }]);

    const stored = await call(client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: hint.domain, justification: GOOD });
    expect(stored.isError).toBeFalsy();
    expect(textOf(stored)).toMatch(/Justification stored .* call reproject again/);
    const file = JSON.parse(readFileSync(path.join(gate.store.dir, 'crs', `${hint.hash}.json`), 'utf8')) as Record<string, unknown>;
    expect(file).toMatchObject({ hash: hint.hash, domain: 'crs', tool: 'reproject', prompt: 'justify_crs', promptArgs: hint.prompt_args, justification: GOOD, source: 'host' });

    expect(await call(client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
    expect(await call(client, 'reproject', { dst: 'EPSG:3857  ', src: ' EPSG:4326' })).toMatchObject({ content: [{ text: 'ran reproject' }] });
    expect(runs).toEqual(['plain', 'reproject', 'reproject']);
    expect((await call(client, 'reproject', { ...ARGS, dst: 'EPSG:2154' })).isError).toBe(true);
  });

  it('lists the gate prompts with their arguments and the persist tool with domains and schema', async () => {
    const gate = new ReflectionGate(baseConfig());
    const { client } = await connect(gate);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['justify_crs', 'justify_datum']);
    expect(prompts[0]?.arguments).toEqual([
      { name: 'source', required: true },
      { name: 'target', required: true },
    ]);
    const persist = (await client.listTools()).tools.find((t) => t.name === PERSIST_TOOL_NAME);
    expect(persist?.inputSchema).toMatchObject({
      required: ['hash', 'domain', 'justification'],
      properties: { domain: { enum: ['crs', 'datum'] }, justification: { required: ['intent', 'alternatives', 'choice', 'confidence'] } },
    });
    expect(persist?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
  });

  it('satisfies chained gates one after another', async () => {
    const gate = new ReflectionGate(baseConfig());
    const { client, runs } = await connect(gate);
    const first = hintOf(await call(client, 'transform'));
    expect(first).toMatchObject({ domain: 'crs', remaining: 2 });
    expect((await call(client, PERSIST_TOOL_NAME, { hash: first.hash, domain: 'crs', justification: GOOD })).isError).toBeFalsy();
    const second = hintOf(await call(client, 'transform'));
    expect(second).toMatchObject({ domain: 'datum', prompt: 'justify_datum', prompt_args: { source: 'EPSG:4326' }, remaining: 1 });
    expect((await call(client, PERSIST_TOOL_NAME, { hash: second.hash, domain: 'datum', justification: GOOD })).isError).toBeFalsy();
    expect(await call(client, 'transform')).toMatchObject({ content: [{ text: 'ran transform' }] });
    expect(runs).toEqual(['transform']);
  });

  it('counts only the unsatisfied gates in remaining', async () => {
    const gate = new ReflectionGate(baseConfig());
    const { client } = await connect(gate);
    // `structured` has the same datum gate: satisfying it satisfies the second gate of `transform`
    const miss = await call(client, 'structured');
    const datumHint = JSON.parse(miss.content[1]?.type === 'text' ? miss.content[1].text : '') as GateHint;
    await call(client, PERSIST_TOOL_NAME, { hash: datumHint.hash, domain: 'datum', justification: GOOD });
    expect(hintOf(await call(client, 'transform'))).toMatchObject({ domain: 'crs', remaining: 1 });
  });

  it('shares a domain-scoped justification between tools, not a tool-scoped one', async () => {
    const shared = new ReflectionGate(baseConfig());
    const a = await connect(shared);
    const hint = hintOf(await call(a.client, 'reproject'));
    await call(a.client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: 'crs', justification: GOOD });
    expect(await call(a.client, 'warp')).toMatchObject({ content: [{ text: 'ran warp' }] });

    const perTool = new ReflectionGate(baseConfig({ scope: 'tool' }));
    const b = await connect(perTool);
    const h1 = hintOf(await call(b.client, 'reproject'));
    await call(b.client, PERSIST_TOOL_NAME, { hash: h1.hash, domain: 'crs', justification: GOOD });
    expect(await call(b.client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
    const h2 = hintOf(await call(b.client, 'warp'));
    expect(h2.hash).not.toBe(h1.hash);
    expect(h1.hash).toBe(gateKey({ domain: 'crs', templateText: CRS_TEMPLATE, promptArgs: h1.prompt_args, tool: 'reproject' }));
  });

  it('a changed template gives a new key, so old justifications are not hit', async () => {
    const config = baseConfig();
    const gate = new ReflectionGate(config);
    const { client } = await connect(gate);
    const hint = hintOf(await call(client, 'reproject'));
    await call(client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: 'crs', justification: GOOD });
    expect((await call(client, 'reproject')).isError).toBeFalsy();

    const changed = new ReflectionGate({ ...config, gates: { reproject: [{ ...crsGate, template: CRS_TEMPLATE + ' Be brief.' }] } });
    const next = await connect(changed);
    const again = await call(next.client, 'reproject');
    expect(again.isError).toBe(true);
    expect(hintOf(again).hash).not.toBe(hint.hash);
  });

  it('treats a stored justification that no longer matches the schema as a miss', async () => {
    const config = baseConfig();
    const gate = new ReflectionGate(config);
    const { client } = await connect(gate);
    const hint = hintOf(await call(client, 'reproject'));
    await call(client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: 'crs', justification: GOOD });
    const stricter = new ReflectionGate({ ...config, justificationSchema: { type: 'object', required: ['risk'] } });
    const next = await connect(stricter);
    expect((await call(next.client, 'reproject')).isError).toBe(true);
  });

  it('keeps structuredContent out of the hint of a tool with an output schema', async () => {
    const gate = new ReflectionGate(baseConfig({ gates: { structured: [datumGate], structured_unlisted: [datumGate] } }));
    const { client } = await connect(gate);
    const miss = await call(client, 'structured');
    expect(miss.isError).toBe(true);
    expect(miss.structuredContent).toBeUndefined();
    expect(JSON.parse(miss.content[1]?.type === 'text' ? miss.content[1].text : '')).toMatchObject({ domain: 'datum', remaining: 1 });
    // why: the SDK client checks structuredContent against the output schema even on isError
    await expect(call(client, 'structured_unlisted')).rejects.toThrow(/output schema/);
  });
});

describe('reflection gate: persist_justification refusals', () => {
  async function issued(): Promise<{ client: Client; hint: GateHint; gate: ReflectionGate }> {
    const gate = new ReflectionGate(baseConfig({ store: { maxJustificationBytes: 2048 } }));
    const { client } = await connect(gate);
    return { client, gate, hint: hintOf(await call(client, 'reproject')) };
  }
  const persist = async (client: Client, args: unknown): Promise<string> => {
    const r = await call(client, PERSIST_TOOL_NAME, args as Record<string, unknown>);
    expect(r.isError).toBe(true);
    return textOf(r);
  };

  it('refuses forged or malformed hashes', async () => {
    const { client, hint } = await issued();
    const forged = gateKey({ domain: 'crs', templateText: CRS_TEMPLATE, promptArgs: { source: 'x', target: 'y' } });
    expect(await persist(client, { hash: forged, domain: 'crs', justification: GOOD })).toContain('hash: was not issued by this server');
    expect(await persist(client, { hash: `sha256:${hint.hash}`, domain: 'crs', justification: GOOD })).toContain('hash: must be the 64 lower-case hex digits');
    expect(await persist(client, { hash: hint.hash.toUpperCase(), domain: 'crs', justification: GOOD })).toContain('hash: must be the 64');
  });

  it('refuses traversal, undeclared and mismatched domains', async () => {
    const { client, hint, gate } = await issued();
    expect(await persist(client, { hash: hint.hash, domain: '../x', justification: GOOD })).toContain('domain: must be one of the declared reflection domains ("crs", "datum")');
    expect(await persist(client, { hash: hint.hash, domain: '../../etc', justification: GOOD })).toContain('domain: must be one of the declared');
    expect(await persist(client, { hash: hint.hash, domain: 'other', justification: GOOD })).toContain('domain: must be one of the declared');
    expect(await persist(client, { hash: hint.hash, domain: 'datum', justification: GOOD })).toContain('domain: must be "crs", the domain of the hint that issued this hash');
    expect(await gate.store.get('crs', hint.hash)).toBeUndefined();
  });

  it('reports invalid justifications field by field', async () => {
    const { client, hint } = await issued();
    const text = await persist(client, { hash: hint.hash, domain: 'crs', justification: { alternatives: ['a', 3], choice: '', confidence: 1.5, extra: true } });
    expect(text).toContain('- justification.confidence: must be <= 1');
    expect(text).toContain('- justification.intent: is required');
    expect(text).toContain('- justification.alternatives[1]: must be string');
    expect(text).toContain('- justification.choice: must NOT have fewer than 1 characters');
    expect(text).toContain('- justification.extra: is not an accepted property');
    expect(await persist(client, { hash: hint.hash, domain: 'crs', justification: 'because' })).toContain('- justification: must be object');
  });

  it('refuses missing fields, unknown arguments and oversize justifications', async () => {
    const { client, hint } = await issued();
    const missing = await persist(client, {});
    expect(missing).toContain('- hash: is required');
    expect(missing).toContain('- domain: is required');
    expect(missing).toContain('- justification: is required');
    expect(await persist(client, { hash: hint.hash, domain: 'crs', justification: GOOD, note: 1 })).toContain('- note: is not an accepted argument');
    expect(await persist(client, { hash: hint.hash, domain: 'crs', justification: { ...GOOD, intent: 'x'.repeat(5000) } })).toMatch(/justification: is \d+ bytes of JSON; the limit is 2048 bytes/);
  });
});

describe('reflection gate: sampling (client with sampling)', () => {
  it('asks the model, validates, persists and runs in one call; then hits the cache with no sampling', async () => {
    const gate = new ReflectionGate(baseConfig());
    const { client, samplingRequests, runs } = await connect(gate, () => 'Sure! Here it is:\n```json\n' + JSON.stringify(GOOD) + '\n```\nHope that helps.');
    expect(await call(client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
    expect(samplingRequests).toHaveLength(1);
    const params = samplingRequests[0]?.params;
    expect(params?.maxTokens).toBe(800);
    expect(params?.systemPrompt).toMatch(/exactly one JSON object/);
    expect(samplingText(params?.messages[0]?.content)).toContain('Before reprojecting from EPSG:4326 to EPSG:3857, justify the target CRS.');
    const hash = gateKey({ domain: 'crs', templateText: CRS_TEMPLATE, promptArgs: { source: 'EPSG:4326', target: 'EPSG:3857' } });
    expect(await gate.store.get('crs', hash)).toMatchObject({ source: 'sampling', justification: GOOD, tool: 'reproject' });

    expect(await call(client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
    expect(await call(client, 'warp')).toMatchObject({ content: [{ text: 'ran warp' }] });
    expect(samplingRequests).toHaveLength(1);
    expect(runs).toEqual(['reproject', 'reproject', 'warp']);
  });

  it('retries once with the validation errors, then succeeds', async () => {
    const gate = new ReflectionGate(baseConfig());
    const replies = [JSON.stringify({ ...GOOD, confidence: 7 }), `{"intent": "x", "alternatives": [], "choice": "y", "confidence": 0.5}`];
    const { client, samplingRequests } = await connect(gate, () => replies.shift() ?? '');
    expect(await call(client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
    expect(samplingRequests).toHaveLength(2);
    const retry = samplingRequests[1]?.params.messages ?? [];
    expect(retry.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(samplingText(retry[2]?.content)).toContain('justification.confidence: must be <= 1');
  });

  it('falls back to the host hint after two invalid answers (mode auto)', async () => {
    const gate = new ReflectionGate(baseConfig());
    const { client, samplingRequests } = await connect(gate, () => 'I would rather not.');
    const miss = await call(client, 'reproject');
    expect(miss.isError).toBe(true);
    expect(hintOf(miss)).toMatchObject({ domain: 'crs', remaining: 1 });
    expect(samplingRequests).toHaveLength(2);
    const hint = hintOf(miss);
    expect((await call(client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: 'crs', justification: GOOD })).isError).toBeFalsy();
    expect(await call(client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
    expect(samplingRequests).toHaveLength(2);
  });

  it('falls back to the host hint when the sampling request fails', async () => {
    const gate = new ReflectionGate(baseConfig());
    const { client } = await connect(gate, () => {
      throw new Error('user declined');
    });
    const miss = await call(client, 'reproject');
    expect(hintOf(miss)).toMatchObject({ domain: 'crs' });
    expect(logs.some((l) => l.includes('sampling for reproject (crs) failed'))).toBe(true);
  });

  it('chained gates are sampled one after another', async () => {
    const gate = new ReflectionGate(baseConfig());
    const { client, samplingRequests } = await connect(gate, () => JSON.stringify(GOOD));
    expect(await call(client, 'transform')).toMatchObject({ content: [{ text: 'ran transform' }] });
    expect(samplingRequests).toHaveLength(2);
  });

  it('mode host never samples', async () => {
    const gate = new ReflectionGate(baseConfig({ mode: 'host' }));
    const { client, samplingRequests } = await connect(gate, () => JSON.stringify(GOOD));
    expect(hintOf(await call(client, 'reproject'))).toMatchObject({ domain: 'crs' });
    expect(samplingRequests).toHaveLength(0);
  });

  it('mode sampling fails without client sampling and never hints', async () => {
    const gate = new ReflectionGate(baseConfig({ mode: 'sampling' }));
    expect(gate.exposesPersistTool).toBe(false);
    const { client } = await connect(gate);
    const r = await call(client, 'reproject');
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    expect(textOf(r)).toMatch(/the client does not support MCP sampling, which this server requires for its reflection gates \(reflection mode "sampling"\)\.$/);

    const withModel = await connect(gate, () => 'nope');
    const bad = await call(withModel.client, 'reproject');
    expect(bad.structuredContent).toBeUndefined();
    expect(textOf(bad)).toContain("no valid justification could be obtained from the client's model:\n- justification: the reply contained no JSON object");
    expect(textOf(bad)).toMatch(/\nCalling the tool again asks again\.$/);
  });
});

describe('reflection gate: configuration', () => {
  it('refuses undeclared domains and one prompt with two templates', () => {
    expect(() => new ReflectionGate(baseConfig({ gates: { a: [{ ...crsGate, domain: 'nope' }] } }))).toThrow(/not declared/);
    expect(() => new ReflectionGate(baseConfig({ gates: { a: [crsGate], b: [{ ...crsGate, template: 'other' }] } }))).toThrow(/two different templates/);
  });

  it('marks a prompt argument optional when some gate does not supply it', () => {
    const gate = new ReflectionGate(baseConfig({ gates: { a: [crsGate], b: [{ ...crsGate, promptArgs: { source: '{{src}}' } }] } }));
    expect(gate.promptsFor()[0]?.arguments).toEqual([
      { name: 'source', required: true },
      { name: 'target', required: false },
    ]);
    expect(gate.gatedTools()).toEqual(['a', 'b']);
  });

  it('renders prompt arguments from nested tool arguments and the json helper', async () => {
    const gate = new ReflectionGate(baseConfig({ gates: { t: [{ ...datumGate, promptArgs: { source: '{{body.crs}} {{json body.opts}}' } }] } }));
    const { client } = await connect(gate);
    const hint = hintOf(await call(client, 't', { body: { crs: 'EPSG:2154', opts: { a: 1 } } }));
    expect(hint.prompt_args).toEqual({ source: 'EPSG:2154 {"a":1}' });
  });

  it('renders {{json}} canonically, so key order in the tool arguments does not change the key', async () => {
    const gate = new ReflectionGate(baseConfig({ gates: { t: [{ ...datumGate, promptArgs: { source: '{{json body}}' } }] } }));
    const { client } = await connect(gate);
    const a = hintOf(await call(client, 't', { body: { b: [1, { y: 2, x: 1 }], a: 'z' } }));
    const b = hintOf(await call(client, 't', { body: { a: 'z', b: [1, { x: 1, y: 2 }] } }));
    expect(a.prompt_args).toEqual({ source: '{"a":"z","b":[1,{"x":1,"y":2}]}' });
    expect(b.hash).toBe(a.hash);
  });

  it('gates only the tools it names: inherited property names are not gates', () => {
    const gate = new ReflectionGate(baseConfig());
    expect(['constructor', 'toString', '__proto__', 'plain'].map((t) => gate.isGated(t))).toEqual([false, false, false, false]);
    expect(['reproject', 'transform'].map((t) => gate.isGated(t))).toEqual([true, true]);
  });
});

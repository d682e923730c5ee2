import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage, ServerCapabilities, Tool } from '@modelcontextprotocol/server';
import { InMemoryTransport, Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import type { ConcernControl, ConcernMappings } from '../../../templates/runtime/concerns/concern-protocol.js';
import { concernCapability, DEFAULT_CONCERNS_META_KEY, installConcerns } from '../../../templates/runtime/concerns/concern-protocol.js';
import type { ConcernDeclaration, ConcernPresets } from '../../../templates/runtime/concerns/concerns.js';
import { ConcernSession, matches, validatePreferences } from '../../../templates/runtime/concerns/concerns.js';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import { installPrompts } from '../../../templates/runtime/primitives/prompts.js';
import { installResources } from '../../../templates/runtime/primitives/resources.js';
import type { Era } from '../../helpers/linked.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

const declarations: ConcernDeclaration[] = [
  { name: 'security', description: 'Security level', values: ['high', 'medium', 'low'], default: 'medium' },
  { name: 'cost', values: ['minimal', 'moderate', 'high'] },
];
const presets: ConcernPresets = { cheap: { cost: 'minimal' } };

const mappings: ConcernMappings = {
  tools: { encrypt: { security: 'high', cost: 'minimal' }, logData: { security: 'medium' }, audit: { security: ['high', 'medium'] } },
  prompts: { review: { security: 'high' } },
  resources: { 'docs://secure': { security: 'high' } },
  resourceTemplates: { 'docs://vault/{id}': { security: 'high' } },
};
const TOOL_NAMES = ['encrypt', 'logData', 'audit', 'validate'];
const TOOLS: Tool[] = TOOL_NAMES.map((name) => ({ name, inputSchema: { type: 'object' } }));

const UpdateResult = z.looseObject({ concerns: z.record(z.string(), z.string()), changed: z.boolean() });
const ListResult = z.looseObject({ concerns: z.array(z.looseObject({ name: z.string() })) });

const logs: string[] = [];
beforeAll(() => {
  setLogSink((line) => logs.push(line));
});

describe('matches', () => {
  const cases: [string, Parameters<typeof matches>[0], Record<string, string>, boolean][] = [
    ['no preferences ⇒ everything', { security: 'high' }, {}, true],
    ['mapped and equal', { security: 'high' }, { security: 'high' }, true],
    ['mapped and different', { security: 'high' }, { security: 'low' }, false],
    ['unmapped concern matches all values', { security: 'high' }, { cost: 'high' }, true],
    ['no mapping at all', undefined, { security: 'low', cost: 'high' }, true],
    ['empty mapping', {}, { security: 'low' }, true],
    ['multi-valued mapping, listed', { security: ['high', 'medium'] }, { security: 'medium' }, true],
    ['multi-valued mapping, not listed', { security: ['high', 'medium'] }, { security: 'low' }, false],
    ['every configured concern must match', { security: 'high', cost: 'minimal' }, { security: 'high', cost: 'high' }, false],
    ['all configured concerns match', { security: 'high', cost: 'minimal' }, { security: 'high', cost: 'minimal' }, true],
  ];
  it.each(cases)('%s', (_label, mapping, prefs, expected) => {
    expect(matches(mapping, prefs)).toBe(expected);
  });
});

describe('validatePreferences', () => {
  it('accepts declared values and null (unset)', () => {
    expect(validatePreferences(declarations, { security: 'high', cost: null })).toEqual({ preferences: { security: 'high', cost: null }, problems: [] });
  });
  it('names the allowed values of an unknown value', () => {
    const { problems, preferences } = validatePreferences(declarations, { security: 'extreme', cost: 'minimal' });
    expect(problems).toEqual(['concern "security": unknown value "extreme" (allowed values: "high", "medium", "low")']);
    expect(preferences).toEqual({ cost: 'minimal' });
  });
  it('names the declared concerns for an unknown concern, and rejects non-strings and non-objects', () => {
    expect(validatePreferences(declarations, { speed: 'fast' }).problems).toEqual(['unknown concern "speed" (declared concerns: "security", "cost")']);
    expect(validatePreferences(declarations, { security: 3 }).problems[0]).toMatch(/value must be a string, one of "high", "medium", "low"/);
    expect(validatePreferences(declarations, ['high']).problems).toHaveLength(1);
    expect(validatePreferences(declarations, 'high').problems).toHaveLength(1);
  });
});

describe('ConcernSession', () => {
  it('updates partially and idempotently, and overlays a per-request override', () => {
    const s = new ConcernSession();
    expect(s.setAll({ security: 'high' })).toBe(true);
    expect(s.update({ cost: 'minimal' })).toBe(true);
    expect(s.update({ cost: 'minimal' })).toBe(false);
    expect(s.preferences()).toEqual({ security: 'high', cost: 'minimal' });
    expect(s.effective({ security: 'low', cost: null })).toEqual({ security: 'low' });
    expect(s.preferences()).toEqual({ security: 'high', cost: 'minimal' });
    expect(s.update({ security: null })).toBe(true);
    expect(s.preferences()).toEqual({ cost: 'minimal' });
    expect(s.setAll({ cost: 'minimal' })).toBe(false);
  });
});

/** What the tests call on either client (both SDK clients have these). */
type TestClient = {
  listTools(params?: object): Promise<{ tools: Tool[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown>; _meta?: object }): Promise<{ content?: unknown; isError?: boolean }>;
  listPrompts(params?: object): Promise<{ prompts: Array<{ name: string; _meta?: object }> }>;
  getPrompt(params: { name: string; _meta?: object }): Promise<unknown>;
  listResources(params?: object): Promise<{ resources: Array<{ uri: string }> }>;
  listResourceTemplates(params?: object): Promise<{ resourceTemplates: Array<{ uriTemplate: string }> }>;
  readResource(params: { uri: string; _meta?: object }): Promise<unknown>;
  request(request: { method: string; params?: object }, schema: z.ZodType): Promise<unknown>;
  getServerCapabilities(): ServerCapabilities | undefined;
  close(): Promise<void>;
};
type Pair = { client: TestClient; controls: ConcernControl[]; notes: string[] };

/** Awaits `p`, expects a JSON-RPC error (v1 `McpError` or v2 `ProtocolError`) and returns its code, message and data. */
async function rejected(p: Promise<unknown>): Promise<{ code: number; message: string; data?: unknown }> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(typeof (err as { code?: unknown } | undefined)?.code).toBe('number');
  return err as { code: number; message: string; data?: unknown };
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  logs.length = 0;
});

const capabilities: ServerCapabilities = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { listChanged: true },
  experimental: { concerns: concernCapability(declarations, DEFAULT_CONCERNS_META_KEY, presets) as never },
};

type ServerOpts = { exposeInMeta?: boolean; enforce?: boolean };

/** A fresh server instance for `era` with concerns, a tiny gated tools/list and tools/call, prompts and resources. */
function makeServer(era: Era, opts: ServerOpts = {}, controls: ConcernControl[] = []): Server {
  const server = new Server({ name: 'concerned', version: '1.0.0' }, { capabilities });
  const control = installConcerns(server, {
    declarations,
    mappings,
    presets,
    exposeInMeta: opts.exposeInMeta ?? false,
    enforce: opts.enforce ?? false,
    capabilities,
    era,
  });
  controls.push(control);
  server.setRequestHandler('tools/list', (_req, ctx) => ({
    tools: TOOLS.filter((t) => control.visible('tools', t.name, ctx)).map((t) => control.decorate('tools', t.name, t)),
  }));
  server.setRequestHandler('tools/call', (req, ctx) => {
    control.assertAllowed('tools', req.params.name, ctx);
    return { content: [{ type: 'text', text: 'ok' }] };
  });
  installPrompts(
    server,
    [
      { name: 'review', messages: [{ role: 'user', text: 'Review' }] },
      { name: 'plain', messages: [{ role: 'user', text: 'Hi' }] },
    ],
    { gate: control },
  );
  installResources(
    server,
    {
      resources: [
        { uri: 'docs://secure', name: 'secure', text: 's' },
        { uri: 'docs://open', name: 'open', text: 'o' },
      ],
      templates: [
        { uriTemplate: 'docs://vault/{id}', name: 'vault', handler: () => 'v' },
        { uriTemplate: 'docs://pub/{id}', name: 'pub', handler: () => 'p' },
      ],
    },
    { gate: control },
  );
  return server;
}

async function connect(era: Era, opts: ServerOpts & { clientConcerns?: Record<string, unknown> } = {}): Promise<Pair> {
  const controls: ConcernControl[] = [];
  const notes: string[] = [];
  const client = await linkedClient(({ era: e }) => makeServer(e, opts, controls), era, {
    ...(opts.clientConcerns ? { capabilities: { experimental: { concerns: opts.clientConcerns } } } : {}),
    setup: (c) => {
      if (era === 'legacy') {
        const legacy = c as LegacyClient;
        legacy.setNotificationHandler(ToolListChangedNotificationSchema, () => void notes.push('tools'));
        legacy.setNotificationHandler(PromptListChangedNotificationSchema, () => void notes.push('prompts'));
        legacy.setNotificationHandler(ResourceListChangedNotificationSchema, () => void notes.push('resources'));
      } else {
        const modern = c as unknown as { setNotificationHandler(method: string, h: () => void): void };
        modern.setNotificationHandler('notifications/tools/list_changed', () => void notes.push('tools'));
        modern.setNotificationHandler('notifications/prompts/list_changed', () => void notes.push('prompts'));
        modern.setNotificationHandler('notifications/resources/list_changed', () => void notes.push('resources'));
      }
    },
  });
  open.push(client);
  return { client: client as unknown as TestClient, controls, notes };
}

const withMeta = (meta?: Record<string, unknown>) => (meta ? { _meta: { [DEFAULT_CONCERNS_META_KEY]: meta } } : undefined);
const toolNames = async (client: TestClient, meta?: Record<string, unknown>): Promise<string[]> =>
  (await client.listTools(withMeta(meta))).tools.map((t) => t.name);
const promptNames = async (client: TestClient, meta?: Record<string, unknown>): Promise<string[]> =>
  (await client.listPrompts(withMeta(meta))).prompts.map((p) => p.name);
const resourceUris = async (client: TestClient, meta?: Record<string, unknown>): Promise<string[]> =>
  (await client.listResources(withMeta(meta))).resources.map((r) => r.uri);
const templateUris = async (client: TestClient, meta?: Record<string, unknown>): Promise<string[]> =>
  (await client.listResourceTemplates(withMeta(meta))).resourceTemplates.map((r) => r.uriTemplate);
const update = (client: TestClient, params: Record<string, unknown>) =>
  client.request({ method: 'concerns/update', params }, UpdateResult) as Promise<z.infer<typeof UpdateResult>>;
const flush = () => new Promise((r) => setTimeout(r, 10));

describe.each(ERAS)('concern protocol, both eras (%s)', (era) => {
  it('publishes the capability and answers concerns/list', async () => {
    const { client } = await connect(era);
    expect(client.getServerCapabilities()?.experimental?.concerns).toEqual({
      declarations,
      methods: ['concerns/list', 'concerns/update'],
      metaKey: 'io.mcpgen/concerns',
      presets: ['cheap'],
      presetKey: 'concernPreset',
      presetMetaKey: 'io.mcpgen/concernPreset',
    });
    const list = (await client.request({ method: 'concerns/list' }, ListResult)) as z.infer<typeof ListResult>;
    expect(list.concerns).toEqual(declarations);
    expect(list.presets).toEqual(presets);
  });

  it('shows everything to a client that knows nothing of concerns (defaults are not applied)', async () => {
    const { client } = await connect(era);
    expect(await toolNames(client)).toEqual(TOOL_NAMES);
    expect(await promptNames(client)).toEqual(['review', 'plain']);
  });

  it("filters the tools, prompts, resources and templates lists by the request's _meta preferences", async () => {
    const { client } = await connect(era);
    expect(await toolNames(client, { security: 'low' })).toEqual(['validate']);
    expect(await promptNames(client, { security: 'low' })).toEqual(['plain']);
    expect(await resourceUris(client, { security: 'low' })).toEqual(['docs://open']);
    expect(await templateUris(client, { security: 'low' })).toEqual(['docs://pub/{id}']);
    expect(await toolNames(client, { security: 'medium' })).toEqual(['logData', 'audit', 'validate']);
    expect(await templateUris(client, { security: 'high' })).toEqual(['docs://vault/{id}', 'docs://pub/{id}']);
    // for that request only
    expect(await toolNames(client)).toEqual(TOOL_NAMES);
    expect(await templateUris(client)).toEqual(['docs://vault/{id}', 'docs://pub/{id}']);
  });

  it('names a preset in _meta, with concerns on top of it', async () => {
    const { client } = await connect(era);
    const names = async (meta: Record<string, unknown>) => (await client.listTools({ _meta: meta })).tools.map((t) => t.name);
    expect(await names({ 'io.mcpgen/concernPreset': 'cheap' })).toEqual(['encrypt', 'logData', 'audit', 'validate'].filter((n) => n !== 'nothing'));
    expect(await names({ 'io.mcpgen/concernPreset': 'cheap', [DEFAULT_CONCERNS_META_KEY]: { security: 'medium' } })).toEqual(['logData', 'audit', 'validate']);
    const err = await rejected(names({ 'io.mcpgen/concernPreset': 'gold' }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('Unknown concern preset "gold" (presets: "cheap")');
  });

  it('rejects invalid _meta preferences with -32602 naming the allowed values', async () => {
    const { client } = await connect(era);
    const err = await rejected(toolNames(client, { security: 'extreme' }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('allowed values: "high", "medium", "low"');
  });

  it('exposes mappings in _meta when asked', async () => {
    const { client } = await connect(era, { exposeInMeta: true });
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'audit')?._meta).toEqual({ concerns: { security: ['high', 'medium'] } });
    expect(tools.find((t) => t.name === 'validate')?._meta).toBeUndefined();
    expect((await client.listPrompts()).prompts[0]?._meta).toEqual({ concerns: { security: 'high' } });
    const plain = await connect(era);
    expect((await plain.client.listTools()).tools.every((t) => t._meta === undefined)).toBe(true);
  });

  it('refuses hidden primitives with enforce (preferences in _meta), allows them without', async () => {
    const low = { _meta: { [DEFAULT_CONCERNS_META_KEY]: { security: 'low' } } };
    const enforced = await connect(era, { enforce: true });
    const err = await rejected(enforced.client.callTool({ name: 'encrypt', arguments: {}, ...low }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('Tool encrypt is not available with the current concern preferences (security=low)');
    expect((await enforced.client.callTool({ name: 'encrypt', arguments: {} })).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect((await enforced.client.callTool({ name: 'validate', arguments: {}, ...low })).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect((await rejected(enforced.client.getPrompt({ name: 'review', ...low }))).code).toBe(-32602);
    expect((await rejected(enforced.client.readResource({ uri: 'docs://secure', ...low }))).code).toBe(-32602);
    expect((await rejected(enforced.client.readResource({ uri: 'docs://vault/1', ...low }))).message).toContain(
      'Resource template docs://vault/{id} is not available',
    );

    const lax = await connect(era);
    expect((await lax.client.callTool({ name: 'encrypt', arguments: {}, ...low })).isError).toBeFalsy();
    expect(lax.controls[0]?.enforce).toBe(false);
  });
});

describe('concern protocol, legacy era (sessions)', () => {
  it('reads preferences from the initialize request (capabilities.experimental)', async () => {
    const { client } = await connect('legacy', { clientConcerns: { security: 'high' } });
    expect(await toolNames(client)).toEqual(['encrypt', 'audit', 'validate']);
    expect(await resourceUris(client)).toEqual(['docs://secure', 'docs://open']);
  });

  it('applies the valid part of invalid initialize preferences and logs the rest', async () => {
    const { client } = await connect('legacy', { clientConcerns: { security: 'low', cost: 'lots' } });
    expect(await toolNames(client)).toEqual(['validate']);
    expect(logs.join('')).toMatch(/unknown value "lots" \(allowed values: "minimal", "moderate", "high"\)/);
  });

  it('reads preferences from the initialized notification params (raw wire) and still calls oninitialized', async () => {
    let initializedCalled = false;
    const [clientT, serverT] = InMemoryTransport.createLinkedPair();
    serveStdio(
      ({ era }) => {
        const server = makeServer(era);
        server.oninitialized = () => void (initializedCalled = true);
        return server;
      },
      { transport: serverT },
    );
    const responses = new Map<number, JSONRPCMessage>();
    clientT.onmessage = (m) => {
      if ('id' in m && typeof m.id === 'number') responses.set(m.id, m);
    };
    await clientT.start();
    await clientT.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    await flush();
    await clientT.send({ jsonrpc: '2.0', method: 'notifications/initialized', params: { concerns: { security: 'medium' } } });
    await clientT.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    await flush();
    expect(initializedCalled).toBe(true);
    const res = responses.get(2) as unknown as { result: { tools: Tool[] } };
    expect(res.result.tools.map((t) => t.name)).toEqual(['logData', 'audit', 'validate']);
    await clientT.close();
  });

  it('concerns/update is partial and idempotent and sends list_changed on this instance only when a list changes', async () => {
    const { client, notes } = await connect('legacy');
    expect(await update(client, { concerns: { security: 'low' } })).toEqual({ concerns: { security: 'low' }, changed: true });
    await flush();
    expect(notes.sort()).toEqual(['prompts', 'resources', 'tools']);
    expect(await toolNames(client)).toEqual(['validate']);
    notes.length = 0;

    // preferences change, but every cost-mapped tool is already hidden: no list changes
    expect(await update(client, { concerns: { cost: 'high' } })).toEqual({ concerns: { security: 'low', cost: 'high' }, changed: true });
    await flush();
    expect(notes).toEqual([]);

    expect(await update(client, { concerns: { security: 'high' } })).toEqual({ concerns: { security: 'high', cost: 'high' }, changed: true });
    await flush();
    expect(notes.sort()).toEqual(['prompts', 'resources', 'tools']);
    expect(await toolNames(client)).toEqual(['audit', 'validate']);
    notes.length = 0;

    expect(await update(client, { concerns: { security: 'high' } })).toEqual({ concerns: { security: 'high', cost: 'high' }, changed: false });
    await flush();
    expect(notes).toEqual([]);

    expect(await update(client, { concerns: { cost: null } })).toEqual({ concerns: { security: 'high' }, changed: true });
    await flush();
    expect(notes).toEqual(['tools']); // only encrypt reappears
    expect(await update(client, { concerns: { security: null } })).toEqual({ concerns: {}, changed: true });
    expect(await toolNames(client)).toEqual(TOOL_NAMES);
  });

  it('selects a preset', async () => {
    const { client } = await connect('legacy', { clientConcerns: { security: 'low' } });
    expect((await update(client, { preset: 'cheap' })).concerns).toEqual({ cost: 'minimal' });
    expect((await rejected(update(client, { preset: 'gold' }))).code).toBe(-32602);
  });

  it('rejects an unknown value with -32602 naming the allowed values, changing nothing', async () => {
    const { client } = await connect('legacy');
    const err = await rejected(update(client, { concerns: { security: 'extreme', cost: 'minimal' } }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('allowed values: "high", "medium", "low"');
    expect(await toolNames(client)).toEqual(TOOL_NAMES);
    expect((await rejected(update(client, { concerns: { speed: 'fast' } }))).message).toContain('declared concerns: "security", "cost"');
    expect((await rejected(update(client, { concerns: 'high' }))).code).toBe(-32602);
    expect((await rejected(update(client, {}))).code).toBe(-32602);
  });

  it('overlays a per-request _meta override on the session for that request only', async () => {
    const { client } = await connect('legacy', { clientConcerns: { security: 'high' } });
    expect(await toolNames(client, { security: 'medium' })).toEqual(['logData', 'audit', 'validate']);
    expect(await toolNames(client, { cost: 'minimal' })).toEqual(['encrypt', 'audit', 'validate']);
    expect(await toolNames(client, { security: null })).toEqual(TOOL_NAMES);
    expect(await toolNames(client)).toEqual(['encrypt', 'audit', 'validate']);
  });

  it('refuses hidden primitives with enforce from the session preferences', async () => {
    const enforced = await connect('legacy', { enforce: true, clientConcerns: { security: 'low' } });
    expect((await rejected(enforced.client.callTool({ name: 'encrypt', arguments: {} }))).message).toContain('(security=low)');
    expect(enforced.controls[0]?.visible('tools', 'encrypt')).toBe(false);
  });

  it('sends no list_changed for kinds the server did not declare with listChanged', async () => {
    const caps: ServerCapabilities = { tools: {}, experimental: { concerns: concernCapability(declarations) as never } };
    const controls: ConcernControl[] = [];
    const notes: string[] = [];
    const client = await linkedClient(
      ({ era }) => {
        const server = new Server({ name: 'quiet', version: '1' }, { capabilities: caps });
        controls.push(installConcerns(server, { declarations, mappings, exposeInMeta: true, enforce: false, capabilities: caps, era }));
        server.setRequestHandler('tools/list', () => ({ tools: [] }));
        return server;
      },
      'legacy',
      { setup: (c) => (c as LegacyClient).setNotificationHandler(ToolListChangedNotificationSchema, () => void notes.push('tools')) },
    );
    open.push(client);
    expect((await update(client as unknown as TestClient, { concerns: { security: 'low' } })).changed).toBe(true);
    await flush();
    expect(notes).toEqual([]);
    expect(controls[0]?.decorate('tools', 'encrypt', { name: 'encrypt', _meta: { other: 1 } })).toEqual({
      name: 'encrypt',
      _meta: { other: 1, concerns: { security: 'high', cost: 'minimal' } },
    });
  });

  it('keeps preferences per session (a server instance per connection)', async () => {
    const a = await connect('legacy');
    const b = await connect('legacy');
    await update(a.client, { concerns: { security: 'high' } });
    await update(b.client, { concerns: { security: 'medium' } });
    expect(await toolNames(a.client)).toEqual(['encrypt', 'audit', 'validate']);
    expect(await toolNames(b.client)).toEqual(['logData', 'audit', 'validate']);
    expect(a.controls[0]?.session.preferences()).toEqual({ security: 'high' });
    expect(b.controls[0]?.session.preferences()).toEqual({ security: 'medium' });
  });
});

describe('concern protocol, modern era (2026-07-28: no session)', () => {
  it("ignores preferences declared in the client capabilities: only each request's _meta counts", async () => {
    const { client, controls } = await connect('modern', { clientConcerns: { security: 'high' } });
    expect(await toolNames(client)).toEqual(TOOL_NAMES);
    expect(await toolNames(client, { security: 'high' })).toEqual(['encrypt', 'audit', 'validate']);
    expect(controls.every((c) => Object.keys(c.session.preferences()).length === 0)).toBe(true);
  });

  it('refuses concerns/update with -32602 telling the client to use _meta, and sends no list_changed', async () => {
    const { client, notes } = await connect('modern');
    const err = await rejected(update(client, { concerns: { security: 'low' } }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('concerns/update is not supported in protocol revision 2026-07-28');
    expect(err.message).toContain(
      'send your concern preferences in the _meta of each request instead: _meta["io.mcpgen/concerns"] = { "<concern>": "<value>" } and/or _meta["io.mcpgen/concernPreset"] = "<preset name>"',
    );
    expect(err.data).toEqual({ metaKey: 'io.mcpgen/concerns', presetMetaKey: 'io.mcpgen/concernPreset' });
    await flush();
    expect(notes).toEqual([]);
    expect(await toolNames(client)).toEqual(TOOL_NAMES);
  });

  it('gives the same list to every connection for the same request', async () => {
    const a = await connect('modern');
    const b = await connect('modern');
    expect(await toolNames(a.client, { security: 'low' })).toEqual(await toolNames(b.client, { security: 'low' }));
    expect(await toolNames(a.client)).toEqual(await toolNames(b.client));
  });
});

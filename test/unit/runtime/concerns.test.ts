import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { JSONRPCMessage, ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONCERNS_META_KEY, concernCapability, installConcerns } from '../../../templates/runtime/concern-protocol.js';
import type { ConcernControl, ConcernMappings } from '../../../templates/runtime/concern-protocol.js';
import { ConcernSession, matches, validatePreferences } from '../../../templates/runtime/concerns.js';
import type { ConcernDeclaration, ConcernPresets } from '../../../templates/runtime/concerns.js';
import { setLogSink } from '../../../templates/runtime/log.js';
import { installPrompts } from '../../../templates/runtime/prompts.js';
import { installResources } from '../../../templates/runtime/resources.js';
import { rejection } from '../../helpers/mcp.js';

const declarations: ConcernDeclaration[] = [
  { name: 'security', description: 'Security level', values: ['high', 'medium', 'low'], default: 'medium' },
  { name: 'cost', values: ['minimal', 'moderate', 'high'] },
];
const presets: ConcernPresets = { cheap: { cost: 'minimal' } };

const mappings: ConcernMappings = {
  tools: { encrypt: { security: 'high', cost: 'minimal' }, logData: { security: 'medium' }, audit: { security: ['high', 'medium'] } },
  prompts: { review: { security: 'high' } },
  resources: { 'docs://secure': { security: 'high' } },
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

type Pair = { client: Client; server: Server; control: ConcernControl; notes: string[] };
const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  logs.length = 0;
});

const capabilities: ServerCapabilities = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { listChanged: true },
  experimental: { concerns: concernCapability(declarations, DEFAULT_CONCERNS_META_KEY, presets) },
};

function makeServer(opts: { exposeInMeta?: boolean; enforce?: boolean } = {}): { server: Server; control: ConcernControl } {
  const server = new Server({ name: 'concerned', version: '1.0.0' }, { capabilities });
  const control = installConcerns(server, { declarations, mappings, presets, exposeInMeta: opts.exposeInMeta ?? false, enforce: opts.enforce ?? false, capabilities });
  server.setRequestHandler(ListToolsRequestSchema, (_req, extra) => ({
    tools: TOOLS.filter((t) => control.visible('tools', t.name, extra)).map((t) => control.decorate('tools', t.name, t)),
  }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
    control.assertAllowed('tools', req.params.name, extra);
    return { content: [{ type: 'text', text: 'ok' }] };
  });
  installPrompts(server, [{ name: 'review', messages: [{ role: 'user', text: 'Review' }] }, { name: 'plain', messages: [{ role: 'user', text: 'Hi' }] }], { gate: control });
  installResources(server, { resources: [{ uri: 'docs://secure', name: 'secure', text: 's' }, { uri: 'docs://open', name: 'open', text: 'o' }] }, { gate: control });
  return { server, control };
}

async function connect(opts: { exposeInMeta?: boolean; enforce?: boolean; clientConcerns?: Record<string, unknown> } = {}): Promise<Pair> {
  const { server, control } = makeServer(opts);
  const [clientT, serverT] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '1' }, opts.clientConcerns ? { capabilities: { experimental: { concerns: opts.clientConcerns } } } : {});
  const notes: string[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void notes.push('tools'));
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => void notes.push('prompts'));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void notes.push('resources'));
  await Promise.all([server.connect(serverT), client.connect(clientT)]);
  open.push(client);
  return { client, server, control, notes };
}

const toolNames = async (client: Client, meta?: Record<string, unknown>): Promise<string[]> => {
  const res = meta ? await client.request({ method: 'tools/list', params: { _meta: { [DEFAULT_CONCERNS_META_KEY]: meta } } }, ListToolsResultSchema) : await client.listTools();
  return res.tools.map((t) => t.name);
};
const update = (client: Client, params: Record<string, unknown>) =>
  client.request({ method: 'concerns/update', params } as unknown as Parameters<Client['request']>[0], UpdateResult);
const flush = () => new Promise((r) => setTimeout(r, 10));

describe('concern protocol', () => {
  it('publishes the capability and answers concerns/list', async () => {
    const { client } = await connect();
    expect(client.getServerCapabilities()?.experimental?.concerns).toEqual({
      declarations,
      methods: ['concerns/list', 'concerns/update'],
      metaKey: 'io.mcpgen/concerns',
      presets: ['cheap'],
      presetKey: 'concernPreset',
      presetMetaKey: 'io.mcpgen/concernPreset',
    });
    const list = await client.request({ method: 'concerns/list' } as unknown as Parameters<Client['request']>[0], ListResult);
    expect(list.concerns).toEqual(declarations);
  });

  it('shows everything to a client that knows nothing of concerns (defaults are not applied)', async () => {
    const { client } = await connect();
    expect(await toolNames(client)).toEqual(TOOL_NAMES);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['review', 'plain']);
  });

  it('reads preferences from the initialize request', async () => {
    const { client } = await connect({ clientConcerns: { security: 'high' } });
    expect(await toolNames(client)).toEqual(['encrypt', 'audit', 'validate']);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['docs://secure', 'docs://open']);
  });

  it('applies the valid part of invalid initialize preferences and logs the rest', async () => {
    const { client } = await connect({ clientConcerns: { security: 'low', cost: 'lots' } });
    expect(await toolNames(client)).toEqual(['validate']);
    expect(logs.join('')).toMatch(/unknown value "lots" \(allowed values: "minimal", "moderate", "high"\)/);
  });

  it('reads preferences from the initialized notification params (raw wire)', async () => {
    const { server } = makeServer();
    let initializedCalled = false;
    server.oninitialized = () => void (initializedCalled = true);
    const [clientT, serverT] = InMemoryTransport.createLinkedPair();
    const responses = new Map<number, JSONRPCMessage>();
    clientT.onmessage = (m) => {
      if ('id' in m && typeof m.id === 'number') responses.set(m.id, m);
    };
    await server.connect(serverT);
    await clientT.start();
    await clientT.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await flush();
    await clientT.send({ jsonrpc: '2.0', method: 'notifications/initialized', params: { concerns: { security: 'medium' } } });
    await clientT.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    await flush();
    expect(initializedCalled).toBe(true);
    const res = responses.get(2) as unknown as { result: { tools: Tool[] } };
    expect(res.result.tools.map((t) => t.name)).toEqual(['logData', 'audit', 'validate']);
    await clientT.close();
  });

  it('concerns/update is partial and idempotent and sends list_changed only when a list changes', async () => {
    const { client, notes } = await connect();
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
    const { client } = await connect({ clientConcerns: { security: 'low' } });
    expect((await update(client, { preset: 'cheap' })).concerns).toEqual({ cost: 'minimal' });
    expect((await rejection(update(client, { preset: 'gold' }))).code).toBe(ErrorCode.InvalidParams);
  });

  it('rejects an unknown value with -32602 naming the allowed values, changing nothing', async () => {
    const { client } = await connect();
    const err = await rejection(update(client, { concerns: { security: 'extreme', cost: 'minimal' } }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('allowed values: "high", "medium", "low"');
    expect(await toolNames(client)).toEqual(TOOL_NAMES);
    expect((await rejection(update(client, { concerns: { speed: 'fast' } }))).message).toContain('declared concerns: "security", "cost"');
    expect((await rejection(update(client, { concerns: 'high' }))).code).toBe(-32602);
    expect((await rejection(update(client, {}))).code).toBe(-32602);
  });

  it('honours a per-request _meta override for that request only', async () => {
    const { client } = await connect({ clientConcerns: { security: 'high' } });
    expect(await toolNames(client, { security: 'medium' })).toEqual(['logData', 'audit', 'validate']);
    expect(await toolNames(client, { cost: 'minimal' })).toEqual(['encrypt', 'audit', 'validate']);
    expect(await toolNames(client, { security: null })).toEqual(TOOL_NAMES);
    expect(await toolNames(client)).toEqual(['encrypt', 'audit', 'validate']);
    const err = await rejection(toolNames(client, { security: 'extreme' }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('allowed values');
  });

  it('exposes mappings in _meta when asked', async () => {
    const { client } = await connect({ exposeInMeta: true });
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'audit')?._meta).toEqual({ concerns: { security: ['high', 'medium'] } });
    expect(tools.find((t) => t.name === 'validate')?._meta).toBeUndefined();
    expect((await client.listPrompts()).prompts[0]?._meta).toEqual({ concerns: { security: 'high' } });
    const plain = await connect();
    expect((await plain.client.listTools()).tools.every((t) => t._meta === undefined)).toBe(true);
  });

  it('refuses hidden primitives with enforce, allows them without', async () => {
    const enforced = await connect({ enforce: true, clientConcerns: { security: 'low' } });
    const err = await rejection(enforced.client.callTool({ name: 'encrypt', arguments: {} }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('Tool encrypt is not available with the current concern preferences (security=low)');
    expect((await enforced.client.callTool({ name: 'validate', arguments: {} })).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect((await rejection(enforced.client.getPrompt({ name: 'review' }))).code).toBe(-32602);
    expect((await rejection(enforced.client.readResource({ uri: 'docs://secure' }))).code).toBe(-32602);
    expect(enforced.control.visible('tools', 'encrypt')).toBe(false);

    const lax = await connect({ clientConcerns: { security: 'low' } });
    expect((await lax.client.callTool({ name: 'encrypt', arguments: {} })).isError).toBeUndefined();
    expect(lax.control.enforce).toBe(false);
  });

  it('sends no list_changed for kinds the server did not declare with listChanged', async () => {
    const caps: ServerCapabilities = { tools: {}, experimental: { concerns: concernCapability(declarations) } };
    const server = new Server({ name: 'quiet', version: '1' }, { capabilities: caps });
    const control = installConcerns(server, { declarations, mappings, exposeInMeta: true, enforce: false, capabilities: caps });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
    const [clientT, serverT] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'test', version: '1' });
    const notes: string[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void notes.push('tools'));
    await Promise.all([server.connect(serverT), client.connect(clientT)]);
    open.push(client);
    expect((await update(client, { concerns: { security: 'low' } })).changed).toBe(true);
    await flush();
    expect(notes).toEqual([]);
    expect(control.decorate('tools', 'encrypt', { name: 'encrypt', _meta: { other: 1 } })).toEqual({ name: 'encrypt', _meta: { other: 1, concerns: { security: 'high', cost: 'minimal' } } });
  });

  it('keeps preferences per session', async () => {
    const a = await connect();
    const b = await connect();
    await update(a.client, { concerns: { security: 'high' } });
    await update(b.client, { concerns: { security: 'medium' } });
    expect(await toolNames(a.client)).toEqual(['encrypt', 'audit', 'validate']);
    expect(await toolNames(b.client)).toEqual(['logData', 'audit', 'validate']);
    expect(a.control.session.preferences()).toEqual({ security: 'high' });
    expect(b.control.session.preferences()).toEqual({ security: 'medium' });
  });
});

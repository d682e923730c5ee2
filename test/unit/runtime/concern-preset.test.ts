/**
 * A concern preset named under a key of its own in every channel: `concernPreset: {name}` in the
 * initialize capabilities, `concernPreset` in the initialized params, `_meta["io.mcpgen/concernPreset"]` per
 * request. A concern may itself be called `preset` without colliding with any of them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema, ListToolsResultSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage, ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CONCERN_PRESET_META_KEY, DEFAULT_CONCERNS_META_KEY, concernCapability, installConcerns } from '../../../templates/runtime/concern-protocol.js';
import type { ConcernMappings } from '../../../templates/runtime/concern-protocol.js';
import type { ConcernDeclaration, ConcernPresets } from '../../../templates/runtime/concerns.js';
import { setLogSink } from '../../../templates/runtime/log.js';
import { rejection } from '../../helpers/mcp.js';

// a concern literally named `preset`, and a preset that sets it
const declarations: ConcernDeclaration[] = [
  { name: 'preset', values: ['a', 'b'] },
  { name: 'cost', values: ['minimal', 'high'] },
];
const presets: ConcernPresets = { cheap: { cost: 'minimal' }, 'only-a': { preset: 'a' } };
const mappings: ConcernMappings = { tools: { cheapTool: { cost: 'minimal' }, dearTool: { cost: 'high' }, aTool: { preset: 'a' }, bTool: { preset: 'b' } } };
const TOOLS: Tool[] = ['cheapTool', 'dearTool', 'aTool', 'bTool'].map((name) => ({ name, inputSchema: { type: 'object' } }));
const capabilities: ServerCapabilities = { tools: { listChanged: true }, experimental: { concerns: concernCapability(declarations, DEFAULT_CONCERNS_META_KEY, presets) } };

const logs: string[] = [];
beforeAll(() => {
  setLogSink((line) => logs.push(line));
});
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  logs.length = 0;
});

function makeServer(): Server {
  const server = new Server({ name: 'presets', version: '1.0.0' }, { capabilities });
  const control = installConcerns(server, { declarations, mappings, presets, exposeInMeta: false, enforce: false, capabilities });
  server.setRequestHandler(ListToolsRequestSchema, (_req, extra) => ({ tools: TOOLS.filter((t) => control.visible('tools', t.name, extra)) }));
  return server;
}

async function connect(experimental?: Record<string, unknown>): Promise<Client> {
  const server = makeServer();
  const [clientT, serverT] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 't', version: '1' }, experimental ? { capabilities: { experimental } } : {});
  await Promise.all([server.connect(serverT), client.connect(clientT)]);
  open.push(client);
  return client;
}

const names = async (client: Client, meta?: Record<string, unknown>): Promise<string[]> =>
  (await (meta ? client.request({ method: 'tools/list', params: { _meta: meta } }, ListToolsResultSchema) : client.listTools())).tools.map((t) => t.name);

describe('preset selection under its own key', () => {
  it('publishes the keys a client names a preset under', () => {
    expect(capabilities.experimental!.concerns).toMatchObject({ presets: ['cheap', 'only-a'], presetKey: 'concernPreset', presetMetaKey: 'io.mcpgen/concernPreset', metaKey: 'io.mcpgen/concerns' });
  });

  it('initialize: capabilities.experimental.concernPreset, with concerns applied on top', async () => {
    expect(await names(await connect({ concernPreset: { name: 'cheap' } }))).toEqual(['cheapTool', 'aTool', 'bTool']);
    expect(await names(await connect({ concernPreset: { name: 'cheap' }, concerns: { preset: 'b' } }))).toEqual(['cheapTool', 'bTool']);
  });

  it('a concern named `preset` is a concern, never a preset name', async () => {
    expect(await names(await connect({ concerns: { preset: 'a' } }))).toEqual(['cheapTool', 'dearTool', 'aTool']);
    expect(await names(await connect({ concernPreset: { name: 'only-a' } }))).toEqual(['cheapTool', 'dearTool', 'aTool']);
    // `cheap` is not a value of the concern `preset`: ignored with a log line, not taken as a preset
    expect(await names(await connect({ concerns: { preset: 'cheap' } }))).toEqual(['cheapTool', 'dearTool', 'aTool', 'bTool']);
    expect(logs.join('')).toMatch(/concern "preset": unknown value "cheap"/);
  });

  it('an unknown preset in initialize is logged and ignored', async () => {
    expect(await names(await connect({ concernPreset: { name: 'nope' } }))).toEqual(['cheapTool', 'dearTool', 'aTool', 'bTool']);
    expect(logs.join('')).toMatch(/unknown preset "nope"/);
  });

  it('_meta: a preset for one request, concerns on top of it; the session is unchanged', async () => {
    const client = await connect({ concerns: { preset: 'b' } });
    expect(await names(client, { [CONCERN_PRESET_META_KEY]: 'cheap' })).toEqual(['cheapTool', 'aTool', 'bTool']);
    expect(await names(client, { [CONCERN_PRESET_META_KEY]: 'cheap', [DEFAULT_CONCERNS_META_KEY]: { preset: 'a' } })).toEqual(['cheapTool', 'aTool']);
    expect(await names(client)).toEqual(['cheapTool', 'dearTool', 'bTool']);
    const err = await rejection(names(client, { [CONCERN_PRESET_META_KEY]: 'nope' }));
    expect(err.code).toBe(ErrorCode.InvalidParams);
    expect(err.message).toContain('Unknown concern preset "nope" (presets: "cheap", "only-a")');
  });

  it('initialized notification: concernPreset beside concerns (raw wire)', async () => {
    const server = makeServer();
    const [clientT, serverT] = InMemoryTransport.createLinkedPair();
    const responses = new Map<number, JSONRPCMessage>();
    clientT.onmessage = (m) => {
      if ('id' in m && typeof m.id === 'number') responses.set(m.id, m);
    };
    await server.connect(serverT);
    await clientT.start();
    await clientT.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await new Promise((r) => setTimeout(r, 10));
    await clientT.send({ jsonrpc: '2.0', method: 'notifications/initialized', params: { concernPreset: 'cheap', concerns: { preset: 'a' } } });
    await clientT.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    await new Promise((r) => setTimeout(r, 10));
    expect((responses.get(2) as unknown as { result: { tools: Tool[] } }).result.tools.map((t) => t.name)).toEqual(['cheapTool', 'aTool']);
    await clientT.close();
  });
});

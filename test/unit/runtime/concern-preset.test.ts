/**
 * A concern preset named under a key of its own in every channel: `concernPreset: {name}` in the
 * initialize capabilities, `concernPreset` in the initialized params, `_meta["io.mcpgen/concernPreset"]` per
 * request. A concern may itself be called `preset` without colliding with any of them.
 */

import type { JSONRPCMessage, ServerCapabilities, Tool } from '@modelcontextprotocol/server';
import { InMemoryTransport, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConcernMappings } from '../../../templates/runtime/concerns/concern-protocol.js';
import {
  CONCERN_PRESET_META_KEY,
  concernCapability,
  DEFAULT_CONCERNS_META_KEY,
  installConcerns,
} from '../../../templates/runtime/concerns/concern-protocol.js';
import type { ConcernDeclaration, ConcernPresets } from '../../../templates/runtime/concerns/concerns.js';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { Era } from '../../helpers/linked.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

// a concern literally named `preset`, and a preset that sets it
const declarations: ConcernDeclaration[] = [
  { name: 'preset', values: ['a', 'b'] },
  { name: 'cost', values: ['minimal', 'high'] },
];
const presets: ConcernPresets = { cheap: { cost: 'minimal' }, 'only-a': { preset: 'a' } };
const mappings: ConcernMappings = { tools: { cheapTool: { cost: 'minimal' }, dearTool: { cost: 'high' }, aTool: { preset: 'a' }, bTool: { preset: 'b' } } };
const TOOLS: Tool[] = ['cheapTool', 'dearTool', 'aTool', 'bTool'].map((name) => ({ name, inputSchema: { type: 'object' } }));
const capabilities: ServerCapabilities = {
  tools: { listChanged: true },
  experimental: { concerns: concernCapability(declarations, DEFAULT_CONCERNS_META_KEY, presets) as never },
};

const logs: string[] = [];
beforeAll(() => {
  setLogSink((line) => logs.push(line));
});
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  logs.length = 0;
});

function makeServer(era: Era): Server {
  const server = new Server({ name: 'presets', version: '1.0.0' }, { capabilities });
  const control = installConcerns(server, { declarations, mappings, presets, exposeInMeta: false, enforce: false, capabilities, era });
  server.setRequestHandler('tools/list', (_req, ctx) => ({ tools: TOOLS.filter((t) => control.visible('tools', t.name, ctx)) }));
  return server;
}

type ListingClient = { listTools(params?: object): Promise<{ tools: Tool[] }>; close(): Promise<void> };

async function connect(experimental?: Record<string, unknown>, era: Era = 'legacy'): Promise<ListingClient> {
  const client = (await linkedClient(
    ({ era: e }) => makeServer(e),
    era,
    experimental ? { capabilities: { experimental } as never } : {},
  )) as unknown as ListingClient;
  open.push(client);
  return client;
}

const names = async (client: ListingClient, meta?: Record<string, unknown>): Promise<string[]> =>
  (await client.listTools(meta ? { _meta: meta } : undefined)).tools.map((t) => t.name);

/** Awaits `p`, expects a JSON-RPC error (v1 `McpError` or v2 `ProtocolError`) and returns it. */
async function rejection(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(typeof (err as { code?: unknown } | undefined)?.code).toBe('number');
  return err as { code: number; message: string };
}

describe('preset selection under its own key', () => {
  it('publishes the keys a client names a preset under', () => {
    expect(capabilities.experimental!.concerns).toMatchObject({
      presets: ['cheap', 'only-a'],
      presetKey: 'concernPreset',
      presetMetaKey: 'io.mcpgen/concernPreset',
      metaKey: 'io.mcpgen/concerns',
    });
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
    expect(err.code).toBe(ProtocolErrorCode.InvalidParams);
    expect(err.message).toContain('Unknown concern preset "nope" (presets: "cheap", "only-a")');
  });

  it.each(ERAS)('_meta presets work the same in the %s era (a concern named `preset` stays a concern)', async (era) => {
    const client = await connect(undefined, era);
    expect(await names(client, { [CONCERN_PRESET_META_KEY]: 'only-a' })).toEqual(['cheapTool', 'dearTool', 'aTool']);
    expect(await names(client, { [CONCERN_PRESET_META_KEY]: 'cheap', [DEFAULT_CONCERNS_META_KEY]: { preset: 'a' } })).toEqual(['cheapTool', 'aTool']);
    expect(await names(client, { [DEFAULT_CONCERNS_META_KEY]: { preset: 'b' } })).toEqual(['cheapTool', 'dearTool', 'bTool']);
    expect(await names(client)).toEqual(['cheapTool', 'dearTool', 'aTool', 'bTool']);
    expect((await rejection(names(client, { [CONCERN_PRESET_META_KEY]: 'nope' }))).code).toBe(-32602);
  });

  it('modern era: a preset declared in the client capabilities is ignored (no connection state)', async () => {
    expect(await names(await connect({ concernPreset: { name: 'cheap' } }, 'modern'))).toEqual(['cheapTool', 'dearTool', 'aTool', 'bTool']);
  });

  it('initialized notification: concernPreset beside concerns (raw wire)', async () => {
    const [clientT, serverT] = InMemoryTransport.createLinkedPair();
    serveStdio(({ era }) => makeServer(era), { transport: serverT });
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
    await new Promise((r) => setTimeout(r, 10));
    await clientT.send({ jsonrpc: '2.0', method: 'notifications/initialized', params: { concernPreset: 'cheap', concerns: { preset: 'a' } } });
    await clientT.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    await new Promise((r) => setTimeout(r, 10));
    expect((responses.get(2) as unknown as { result: { tools: Tool[] } }).result.tools.map((t) => t.name)).toEqual(['cheapTool', 'aTool']);
    await clientT.close();
  });
});

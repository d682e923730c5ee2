/**
 * Result settings per concern preset: a request whose active preset has its own `results` gets
 * them over the server's, and a tool's own settings still win over the preset's. Driven through
 * the server's real `tools/call` path (createServer + the SDK client in both eras) against a
 * backend on 127.0.0.1.
 */
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS, linkedClient } from '../../helpers/linked.js';
import { OPEN_GATE } from '../../../templates/runtime/primitives.js';
import { createServer } from '../../../templates/runtime/server.js';
import type { PresetGate } from '../../../templates/runtime/server.js';
import type { OperationTool, ServerConfig } from '../../../templates/runtime/types.js';

const items = Array.from({ length: 40 }, (_, i) => ({ id: i + 1, name: `item ${i + 1} ${'n'.repeat(60)}` }));
const backend = createHttpServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(items));
});
let base = '';
beforeAll(async () => {
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
});
afterAll(() => backend.close());

const list = (name: string, extra: Partial<OperationTool> = {}): OperationTool => ({
  kind: 'operation',
  name,
  inputSchema: { type: 'object', properties: { limit: { type: 'integer' } } },
  http: { method: 'GET', path: '/items', params: [{ arg: 'limit', name: 'limit', in: 'query' }] },
  bytesPerToken: 3,
  ...extra,
});

const config = (): ServerConfig => ({
  name: 'presets',
  version: '1',
  envPrefix: 'PRESETS',
  timeoutMs: 5000,
  maxResponseBytes: 1_000_000,
  baseUrl: base,
  resultPresets: { small: { maxTokens: 500 } },
});

/** A server whose gate says the active preset is `preset`. */
function factory(preset: string | undefined) {
  const gate: PresetGate = { ...OPEN_GATE, activePreset: () => preset };
  return createServer(config(), [list('list_items'), list('list_items_own', { results: { maxTokens: 8000 } })], {}, { install: () => gate });
}

const shown = (r: CallToolResult): number => (JSON.parse((r.content[0] as { text: string }).text.split('\n[results: ')[0]!) as unknown[]).length;

describe.each(ERAS)('%s era', (era) => {
  it("the active preset's settings apply over the server's; a tool's own win over the preset's", async () => {
    const small = await linkedClient(factory('small'), era);
    const cut = (await small.callTool({ name: 'list_items', arguments: {} })) as CallToolResult;
    expect(shown(cut)).toBeLessThan(40);
    expect((cut.content[0] as { text: string }).text).toMatch(/\[results: \d+ of 40 items shown, cut to fit 500 tokens; for the rest, call list_items with \{"limit":\d+\} and page on\]$/);
    expect(shown((await small.callTool({ name: 'list_items_own', arguments: {} })) as CallToolResult)).toBe(40);
    const none = await linkedClient(factory(undefined), era);
    expect(shown((await none.callTool({ name: 'list_items', arguments: {} })) as CallToolResult)).toBe(40);
    const other = await linkedClient(factory('other'), era);
    expect(shown((await other.callTool({ name: 'list_items', arguments: {} })) as CallToolResult)).toBe(40);
    await Promise.all([small.close(), none.close(), other.close()]);
  });
});

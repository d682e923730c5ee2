/**
 * Result settings per concern preset: a request whose active preset has its own `results` gets
 * them over the server's, and a tool's own settings still win over the preset's. Kept results: a
 * cut result of an API that does not page links to its whole, readable by its client only. Driven through
 * the server's real `tools/call` path (createServer + the SDK client in both eras) against a
 * backend on 127.0.0.1.
 */
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPEN_GATE } from '../../../templates/runtime/core/primitive-gate.js';
import type { OperationTool, ServerConfig } from '../../../templates/runtime/core/types.js';
import { ResultStore } from '../../../templates/runtime/operation/result-store.js';
import type { PresetGate } from '../../../templates/runtime/server/server.js';
import { createServer } from '../../../templates/runtime/server/server.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

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
    expect((cut.content[0] as { text: string }).text).toMatch(
      /\[results: \d+ of 40 items shown, cut to fit 500 tokens; for the rest, call list_items with \{"limit":\d+\} and page on\]$/,
    );
    expect(shown((await small.callTool({ name: 'list_items_own', arguments: {} })) as CallToolResult)).toBe(40);
    const none = await linkedClient(factory(undefined), era);
    expect(shown((await none.callTool({ name: 'list_items', arguments: {} })) as CallToolResult)).toBe(40);
    const other = await linkedClient(factory('other'), era);
    expect(shown((await other.callTool({ name: 'list_items', arguments: {} })) as CallToolResult)).toBe(40);
    await Promise.all([small.close(), none.close(), other.close()]);
  });
});

describe('kept results (a cut result whose API does not page)', () => {
  /** A tool without paging parameters whose result (an object with a large list) must be cut. */
  const report: OperationTool = {
    kind: 'operation',
    name: 'big_report',
    inputSchema: { type: 'object' },
    http: { method: 'GET', path: '/items', params: [] },
    bytesPerToken: 3,
  };
  // made once the backend listens (config() reads its URL)
  let server: ReturnType<typeof createServer> | undefined;
  const as = (identity: string, era: (typeof ERAS)[number]) => {
    server ??= createServer({ ...config(), results: { maxTokens: 400, compact: true, omit: [], maxStringChars: 1000 } }, [report]);
    const s = server;
    return linkedClient((ctx) => s({ era: ctx.era, identity }), era);
  };

  it.each(ERAS)('%s era: the result links to the whole, which its client reads back whole and another client cannot', async (era) => {
    const alice = await as('alice', era);
    const bob = await as('bob', era);
    const result = (await alice.callTool({ name: 'big_report', arguments: {} })) as CallToolResult;
    const link = result.content.find((c) => c.type === 'resource_link') as { uri: string; mimeType: string; name: string } | undefined;
    expect(link).toMatchObject({ uri: expect.stringMatching(/^mcpgen:\/\/results\/[0-9a-f-]{36}$/), mimeType: 'application/json', name: 'big_report result' });
    expect((result.content[0] as { text: string }).text).toContain(
      `the whole result: read the resource ${link!.uri} (resources/read; kept for 10 minutes, for this client only)`,
    );
    expect(shown(result)).toBeLessThan(40);
    const whole = await alice.readResource({ uri: link!.uri });
    expect(JSON.parse((whole.contents[0] as { text: string }).text)).toEqual(items);
    await expect(bob.readResource({ uri: link!.uri })).rejects.toThrow(/Resource not found/);
    await expect(alice.readResource({ uri: 'mcpgen://results/00000000-0000-0000-0000-000000000000' })).rejects.toThrow(/Resource not found/);
    // the server declares resources (it has none of its own to list)
    expect(alice.getServerCapabilities()?.resources).toEqual({});
    expect((await alice.listResources()).resources).toEqual([]);
    await Promise.all([alice.close(), bob.close()]);
  });
});

describe('ResultStore', () => {
  it('keeps per identity, forgets after 10 minutes, refuses entries over 4 MiB and drops the oldest past 32 MiB', () => {
    let t = 0;
    const store = new ResultStore(() => t);
    const uri = store.keep('alice', 'tool', '{"a":1}')!;
    expect(store.read(uri, 'alice')).toEqual({ text: '{"a":1}', tool: 'tool' });
    expect(store.read(uri, 'bob')).toBeUndefined();
    expect(store.read('https://elsewhere', 'alice')).toBeUndefined();
    t += 10 * 60 * 1000;
    expect(store.read(uri, 'alice')).toBeUndefined();
    expect(store.bytes).toBe(0);
    expect(store.keep('alice', 'tool', 'x'.repeat(4 * 1024 * 1024 + 1))).toBeUndefined();
    const three = 'y'.repeat(3 * 1024 * 1024);
    const uris = Array.from({ length: 12 }, () => store.keep('alice', 'tool', three)!);
    expect(store.bytes).toBeLessThanOrEqual(32 * 1024 * 1024);
    expect(store.read(uris[0]!, 'alice')).toBeUndefined();
    expect(store.read(uris[11]!, 'alice')?.text).toBe(three);
  });
});

/**
 * "Search mode and code mode use this one index": the petstore spec built twice, once with
 * `discovery: search` and once with `discovery: code`, writes the same serialised search index
 * (src/search-index.gen.ts's `searchIndex`, byte for byte), and both servers, over stdio with a real client,
 * answer `search_tools` with the same tools in the same order and with the same scores (code mode
 * adds each tool's TypeScript signature), with a query, with a method, and without a query.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { AnyClient } from '../helpers/eras.js';
import { connectClient } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const work = path.join(ROOT, '.cache/search-code-mode');
const MODES = ['search', 'code'] as const;
const clients: Partial<Record<(typeof MODES)[number], AnyClient>> = {};

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  for (const mode of MODES) {
    const dir = path.join(work, mode);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, 'mcpgen.yaml'),
      [
        `name: "pets-${mode}"`,
        'version: "0.1.0"',
        `openapi: ${JSON.stringify(path.join(ROOT, 'examples/petstore/openapi.yaml'))}`,
        'output: "./server"',
        `discovery: ${mode}`,
        '',
      ].join('\n'),
    );
    const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: dir };
    expect(await main(['build', 'mcpgen.yaml', '--quiet'], io)).toBe(0);
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'server')], { maxBuffer: 16 * 1024 * 1024 });
    const env = { [`PETS_${mode.toUpperCase()}_BASE_URL`]: 'http://127.0.0.1:9' };
    clients[mode] = (await connectClient({ kind: 'stdio', server: path.join(dir, 'server'), env }, 'modern')).client;
  }
}, 300_000);

afterAll(async () => {
  await Promise.all(Object.values(clients).map((c) => c.close().catch(() => undefined)));
});

type Result = { name: string; score: number; area?: string; signature?: string };
const results = async (mode: (typeof MODES)[number], args: Record<string, unknown>): Promise<Result[]> =>
  ((await clients[mode]!.callTool({ name: 'search_tools', arguments: args })) as { structuredContent: { results: Result[] } }).structuredContent.results;

describe('search mode and code mode share the index and the ranking', () => {
  it('both builds write the same index, byte for byte', () => {
    // the serialised index (code mode's file also says its discovery mode)
    const index = (mode: string) =>
      readFileSync(path.join(work, mode, 'server/src/search-index.gen.ts'), 'utf8')
        .split('\n')
        .find((l) => l.startsWith('export const searchIndex'));
    expect(index('search')).toMatch(/^export const searchIndex: string = ".*"version/);
    expect(index('code')).toBe(index('search'));
  });

  for (const args of [
    { query: 'add a new pet' },
    { query: 'which pets are there', limit: 10 },
    { query: 'remove a pet', method: 'DELETE' },
    { query: 'how many are in stock' },
  ]) {
    it(`search_tools ${JSON.stringify(args)}: the same tools, order and scores in both modes`, async () => {
      const search = await results('search', args);
      const code = await results('code', args);
      expect(search.length).toBeGreaterThan(0);
      expect(code.map((r) => [r.name, r.score])).toEqual(search.map((r) => [r.name, r.score]));
      // code mode answers what the model writes code against
      for (const r of code) expect(r.signature).toMatch(/^api\./);
      for (const r of search) expect(r.signature).toBeUndefined();
    });
  }

  it('search_tools without a query: the same areas', async () => {
    const areas = async (mode: (typeof MODES)[number]) =>
      ((await clients[mode]!.callTool({ name: 'search_tools', arguments: {} })) as { structuredContent: unknown }).structuredContent;
    expect(await areas('code')).toEqual(await areas('search'));
  });
});

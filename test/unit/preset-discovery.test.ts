/**
 * Search mode per concern preset (manifest `discovery: { mode, presets }`): the IR decides each
 * preset's mode (unknown preset names are located errors; the string form still puts the whole
 * server and every preset in search mode), the build measures what a search-mode preset lists
 * (its search tools) beside the catalogue behind them, and the runtime lists the search tools
 * exactly for the requests whose active preset is in search mode, in both protocol eras.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Server, ServerCapabilities } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { compile } from '../../src/compile.js';
import { emitServerEntry } from '../../src/emit/ts/entry.js';
import { emitSearchIndexFile } from '../../src/emit/ts/search.js';
import { presetSummaries } from '../../src/summary.js';
import type { ConcernMappings } from '../../templates/runtime/concerns/concern-protocol.js';
import { concernCapability, installConcerns } from '../../templates/runtime/concerns/concern-protocol.js';
import type { ConcernDeclaration, ConcernPresets } from '../../templates/runtime/concerns/concerns.js';
import type { OperationTool, ServerConfig } from '../../templates/runtime/core/types.js';
import { buildSearchIndex, createToolSearch } from '../../templates/runtime/search/search.js';
import { SEARCH_TOOLS } from '../../templates/runtime/search/search-tools.js';
import { createServer } from '../../templates/runtime/server/server.js';
import type { AnyClient } from '../helpers/linked.js';
import { ERAS, linkedClient } from '../helpers/linked.js';

const ops = Array.from(
  { length: 6 },
  (_, i) => `  /things${i}/{id}:
    ${i % 2 === 0 ? 'get' : 'delete'}:
      operationId: thing${i}
      description: Thing ${i}. ${'Long words about the thing. '.repeat(i * 3)}
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { '200': { description: ok } }
`,
).join('');
const SPEC = `openapi: 3.0.3\ninfo: { title: t, version: '1' }\nservers: [{ url: 'https://api.example.com' }]\npaths:\n${ops}`;
// a concern named `discovery`, to show that the mode is not spelled inside a preset
const CONCERNS = `concerns:
  - { name: access, values: [read, write] }
  - { name: discovery, values: [search, list] }
concernMappings:
  tools:
${Array.from({ length: 6 }, (_, i) => `    thing${i}: { access: ${i % 2 === 0 ? 'read' : 'write'} }`).join('\n')}
concernPresets:
  read-only: { access: read }
  writer: { access: write }
  everything: { discovery: search }
`;

function project(extra: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-preset-discovery-'));
  writeFileSync(path.join(dir, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: presets\nopenapi: ./openapi.yaml\n${CONCERNS}${extra}`);
  return dir;
}

const FRONT = SEARCH_TOOLS.map((t) => t.name);
const frontBytes = Buffer.byteLength(JSON.stringify(SEARCH_TOOLS));

describe('discovery per preset, compiler side', () => {
  it('puts the presets it names in their own mode and measures what each lists', async () => {
    const res = await compile({
      manifestPath: 'mcpgen.yaml',
      cwd: project('discovery:\n  mode: list\n  presets: { everything: search, writer: list }\n'),
      emit: false,
    });
    expect(res.diagnostics.items.filter((d) => d.severity === 'error')).toEqual([]);
    const ir = res.ir!;
    expect(ir.discovery).toBeUndefined();
    // `writer: list` is the default's mode: only what differs is kept
    expect(ir.presetDiscovery).toEqual({ everything: 'search' });
    const s = ir.surface!;
    expect(s.search).toBeUndefined();
    expect(s.front!.map((t) => t.name)).toEqual(FRONT);
    const everything = s.presets.find((p) => p.name === 'everything')!;
    expect(everything).toMatchObject({ tools: FRONT, listBytes: frontBytes, catalogue: { tools: s.tools.map((t) => t.name), listBytes: s.listBytes } });
    expect(s.presets.find((p) => p.name === 'read-only')!).toMatchObject({ tools: ['thing0', 'thing2', 'thing4'] });
    expect(s.presets.find((p) => p.name === 'read-only')!.catalogue).toBeUndefined();
    const summary = presetSummaries(ir);
    expect(summary.map((p) => [p.name, p.discovery, p.tools, p.catalogue?.tools ?? null])).toEqual([
      ['read-only', 'list', 3, null],
      ['writer', 'list', 3, null],
      ['everything', 'search', 3, 6],
    ]);
    expect(summary[2]!.largest.map((t) => t.name).sort()).toEqual([...FRONT].sort());
    // the project ships the index and the modes, and the entry hands the active preset's mode to the server
    expect(emitSearchIndexFile(ir)).toContain('export const discovery = {\n  "mode": "list",\n  "presets": {\n    "everything": "search"\n  }\n} as const;');
    const entry = emitServerEntry(ir);
    expect(entry).toContain("import { discovery, searchIndex } from './search-index.gen.js';");
    expect(entry).toContain('const toolSearch = createToolSearch(searchIndex, discovery);');
    expect(entry).toContain('toolListMode: toolSearch.modeOf');
    expect(entry).toContain('  search: toolSearch,');
  });

  it('the string form puts the server and every preset in search mode, as before', async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: project('discovery: search\n'), emit: false });
    const ir = res.ir!;
    expect(ir.discovery).toBe('search');
    expect(ir.presetDiscovery).toBeUndefined();
    expect(ir.surface!.search).toEqual({ tools: FRONT, listBytes: frontBytes });
    for (const p of ir.surface!.presets) expect(p).toMatchObject({ tools: FRONT, listBytes: frontBytes });
    expect(emitSearchIndexFile(ir)).not.toContain('discovery');
    expect(emitServerEntry(ir)).toContain('search: createToolSearch(searchIndex),');
  });

  it('a search-mode server can list chosen presets', async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: project('discovery: { mode: search, presets: { read-only: list } }\n'), emit: false });
    const s = res.ir!.surface!;
    expect(res.ir!.presetDiscovery).toEqual({ 'read-only': 'list' });
    expect(s.search!.listBytes).toBe(frontBytes);
    expect(s.presets.map((p) => [p.name, p.tools.length, p.catalogue !== undefined])).toEqual([
      ['read-only', 3, false],
      ['writer', 3, true],
      ['everything', 3, true],
    ]);
  });

  it('an unknown preset is a located error; a search preset over its budget names its mode', async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: project('discovery:\n  presets:\n    everyting: search\n'), emit: false });
    const errors = res.diagnostics.items.filter((d) => d.severity === 'error');
    expect(errors.map((e) => [e.code, e.location.pointer, e.location.line])).toEqual([['MCPGEN_UNKNOWN_PRESET', '/discovery/presets/everyting', 20]]);
    expect(errors[0]!.message).toBe('discovery.presets names preset "everyting", which concernPresets does not declare');
    const over = await compile({
      manifestPath: 'mcpgen.yaml',
      cwd: project('discovery:\n  presets:\n    everything: search\nbudget:\n  presets:\n    everything: { maxListBytes: 100, maxTools: 2 }\n'),
      emit: false,
    });
    expect(over.diagnostics.items.filter((d) => d.severity === 'error').map((e) => [e.location.pointer, e.message])).toEqual([
      [
        '/budget/presets/everything/maxListBytes',
        `preset "everything" (search mode): tools/list is ${frontBytes} bytes, over budget.presets.everything.maxListBytes 100`,
      ],
      ['/budget/presets/everything/maxTools', 'preset "everything" (search mode): tools/list is 3 tools, over budget.presets.everything.maxTools 2'],
    ]);
  });
});

// runtime: the generated server's own modules, wired as the generated entry wires them
const declarations: ConcernDeclaration[] = [{ name: 'access', values: ['read', 'write'] }];
const presets: ConcernPresets = { 'read-only': { access: 'read' }, everything: {} };
const mappings: ConcernMappings = { tools: { readThing: { access: 'read' }, writeThing: { access: 'write' } } };
const tool = (name: string, method: 'GET' | 'DELETE'): OperationTool => ({
  kind: 'operation',
  name,
  description: `${method === 'GET' ? 'Read' : 'Delete'} a thing.`,
  inputSchema: { type: 'object' },
  http: { method, path: `/${name}`, params: [] },
});
const TOOLS = [tool('readThing', 'GET'), tool('writeThing', 'DELETE')];
const config: ServerConfig = { name: 'modes', version: '1.0.0', envPrefix: 'MODES', timeoutMs: 1000, maxResponseBytes: 10_000, baseUrl: 'http://127.0.0.1:9' };
const capabilities: ServerCapabilities = {
  tools: { listChanged: true },
  experimental: { concerns: concernCapability(declarations, undefined, presets) as never },
};
const toolSearch = createToolSearch(
  buildSearchIndex(TOOLS.map((t) => ({ name: t.name, description: t.description!, method: t.http.method, inputSchema: t.inputSchema }))),
  { mode: 'list', presets: { everything: 'search' } },
);
const factory = createServer(
  config,
  TOOLS,
  {},
  {
    capabilities,
    search: toolSearch,
    install: (server, instance) =>
      installConcerns(server, {
        declarations,
        mappings,
        presets,
        exposeInMeta: false,
        enforce: true,
        capabilities,
        era: instance.era,
        toolListMode: toolSearch.modeOf,
      }),
  },
);

const open: AnyClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const listed = async (client: AnyClient, preset?: string): Promise<string[]> =>
  (await client.listTools(preset ? { _meta: { 'io.mcpgen/concernPreset': preset } } : undefined)).tools.map((t) => t.name);

describe('discovery per preset, runtime', () => {
  it.each(ERAS)('%s era: a request whose preset is in search mode lists the search tools, the others their tools', async (era) => {
    const client = await linkedClient(factory as (ctx: { era: typeof era }) => Server, era);
    open.push(client);
    expect(await listed(client)).toEqual(['readThing', 'writeThing']);
    expect(await listed(client, 'read-only')).toEqual(['readThing']);
    expect(await listed(client, 'everything')).toEqual(FRONT);
    // the search tools stay available whatever the mode, filtered by the request's preset
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'delete a thing' }, _meta: { 'io.mcpgen/concernPreset': 'read-only' } });
    expect((found.structuredContent as { results: Array<{ name: string }> }).results.map((r) => r.name)).toEqual(['readThing']);
    const hidden = await client.callTool({ name: 'describe_tool', arguments: { name: 'writeThing' }, _meta: { 'io.mcpgen/concernPreset': 'read-only' } });
    expect(hidden.isError).toBe(true);
  });

  it("legacy era: the session's preset decides, and a change of mode sends tools/list_changed", async () => {
    let changed = 0;
    const client = await linkedClient(factory as (ctx: { era: 'legacy' }) => Server, 'legacy', {
      capabilities: { experimental: { concernPreset: { name: 'everything' } } } as never,
      setup: (c) =>
        (c as { setNotificationHandler(schema: unknown, handler: () => void): void }).setNotificationHandler(
          z.object({ method: z.literal('notifications/tools/list_changed') }),
          () => void changed++,
        ),
    });
    open.push(client);
    expect(await listed(client)).toEqual(FRONT);
    // _meta names another preset for one request
    expect(await listed(client, 'read-only')).toEqual(['readThing']);
    const update = (params: Record<string, unknown>) =>
      (client as unknown as { request(r: unknown, s: unknown): Promise<{ changed: boolean }> }).request(
        { method: 'concerns/update', params },
        z.looseObject({ changed: z.boolean() }),
      );
    // concerns on top of the preset keep it active
    await update({ concerns: { access: 'read' } });
    expect(await listed(client)).toEqual(FRONT);
    await new Promise((r) => setTimeout(r, 20));
    const before = changed;
    // the same preferences under a preset in list mode: only the mode changes, and that is a change of the list
    expect((await update({ preset: 'read-only' })).changed).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(changed).toBe(before + 1);
    expect(await listed(client)).toEqual(['readThing']);
  });
});

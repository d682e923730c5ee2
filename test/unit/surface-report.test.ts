/**
 * `build --report`'s surface lines: in search mode the measured list is the search catalogue,
 * labelled so, beside the `tools/list` a client receives (issue 32: the catalogue's bytes were
 * labelled "tools/list" in the same run that gave tools/list's own size).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatSurfaceReport } from '../../src/cli/report.js';
import { compile } from '../../src/compile.js';

const SPEC = `openapi: 3.0.3
info: { title: Pets, version: '1' }
servers: [{ url: 'https://api.example.com' }]
paths:
  /pets:
    get: { operationId: listPets, description: Lists the pets., responses: { '200': { description: ok } } }
    post: { operationId: createPet, responses: { '201': { description: ok } } }
`;

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

async function report(extra: string): Promise<{ text: string; listBytes: number; searchBytes?: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-report-'));
  temps.push(dir);
  writeFileSync(path.join(dir, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: pets\nversion: 1.0.0\nopenapi: ./openapi.yaml\noutput: ./server\n${extra}`);
  const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: false });
  const s = res.ir!.surface!;
  return { text: formatSurfaceReport(res.ir!), listBytes: s.listBytes, ...(s.search ? { searchBytes: s.search.listBytes } : {}) };
}

const n = (x: number) => x.toLocaleString('en-US');

describe('--report surface lines', () => {
  it('list mode: tools/list is the list of the tools', async () => {
    const r = await report('');
    expect(r.text.split('\n').slice(0, 2)).toEqual([`Tool surface: 2 tools, tools/list ${n(r.listBytes)} bytes.`, '  Largest tools:']);
  });

  it("search mode: tools/list is the search tools' list, and the tools' own bytes are the search catalogue", async () => {
    const r = await report('discovery: search\n');
    expect(r.searchBytes).toBeDefined();
    expect(r.searchBytes).not.toBe(r.listBytes);
    expect(r.text.split('\n').slice(0, 2)).toEqual([
      `Tool surface (search mode): tools/list ${n(r.searchBytes!)} bytes (3 tools); search catalogue 2 tools, ${n(r.listBytes)} bytes.`,
      '  Largest tools in the search catalogue:',
    ]);
    expect(r.text).not.toContain(`tools/list ${n(r.listBytes)} bytes`);
  });

  it('a preset in search mode names its catalogue beside its tools/list', async () => {
    const r = await report(
      'concerns:\n  - name: access\n    values: [read, write]\nconcernMappings:\n  tools:\n    listPets: { access: read }\n    createPet: { access: write }\nconcernPresets:\n  reader: { access: read }\ndiscovery: { mode: list, presets: { reader: search } }\n',
    );
    expect(r.text).toMatch(/^ {2}Preset reader \(search mode\): 3 tools, tools\/list [\d,]+ bytes; search catalogue 1 tools, [\d,]+ bytes; largest:$/m);
  });
});

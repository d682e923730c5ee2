/**
 * A tool that maps no concern is listed by every concern preset (the matching rule); a new extra
 * tool added without a mapping must not join a `read-only` preset silently (issue 32).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';

const SPEC = `openapi: 3.0.3
info: { title: Pets, version: '1' }
servers: [{ url: 'https://api.example.com' }]
paths:
  /pets:
    get: { operationId: listPets, responses: { '200': { description: ok } } }
    post: { operationId: createPet, responses: { '201': { description: ok } } }
`;
const HEAD = `name: pets
version: 1.0.0
openapi: ./openapi.yaml
output: ./server
extraTools:
  - name: wipe_cache
    description: Empties the server's cache.
    inputSchema: { type: object }
    handler: handlers/cache.ts#wipe
concerns:
  - name: access
    values: [read, write]
concernPresets:
  read-only: { access: read }
concernMappings:
  tools:
    listPets: { access: read }
    createPet: { access: write }
`;

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

async function build(manifest: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-coverage-'));
  temps.push(dir);
  writeFileSync(path.join(dir, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), manifest);
  const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: false });
  return {
    warnings: res.diagnostics.sorted().filter((d) => d.code === 'MCPGEN_UNMAPPED_TOOL'),
    readOnly: res.ir?.surface?.presets.find((p) => p.name === 'read-only')?.tools,
  };
}

describe('a tool with no concern mapping and a read-only preset', () => {
  it('joins the preset (an unmapped tool matches every value), and the build says so, naming it', async () => {
    const { warnings, readOnly } = await build(HEAD);
    expect(readOnly).toEqual(['listPets', 'wipe_cache']);
    expect(warnings.map((d) => [d.severity, d.message, d.location.pointer, d.location.line])).toEqual([
      ['warning', '1 tool maps no concern, so every preset lists it ("read-only"), whatever it does: wipe_cache', '/concernMappings/tools', 16],
    ]);
    expect(warnings[0]!.help).toBe(
      'map it under `concernMappings.tools`, e.g. `wipe_cache: { access: read }` to keep it in preset "read-only" or another value to leave it out; a tool meant for every preset maps a concern to all its values (`access: [read, write]`)',
    );
  });

  it('mapped to write, it leaves the preset and the warning goes; mapped to every value, it stays without one', async () => {
    const write = await build(`${HEAD}    wipe_cache: { access: write }\n`);
    expect(write.readOnly).toEqual(['listPets']);
    expect(write.warnings).toEqual([]);
    const all = await build(`${HEAD}    wipe_cache: { access: [read, write] }\n`);
    expect(all.readOnly).toEqual(['listPets', 'wipe_cache']);
    expect(all.warnings).toEqual([]);
  });

  it('no warning when no preset filters on a concern', async () => {
    const { warnings } = await build(HEAD.replace('  read-only: { access: read }\n', '  everything: {}\n'));
    expect(warnings).toEqual([]);
  });
});

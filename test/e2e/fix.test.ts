/**
 * Entries naming operations include/exclude leave out: one warning (MCPGEN_EXCLUDED_REFERENCES)
 * instead of an error each, names the spec does not have still errors; and `mcpgen fix`, which
 * removes exactly those entries (dry run, refusal on other errors, atomic write, nothing to do).
 * On the example Petstore (tags pets and store), through the CLI in-process.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../src/cli/main.js';
import type { JsonReport } from '../../src/cli/report.js';
import { ROOT } from '../helpers/project.js';

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

async function cli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s), cwd });
  return { code, stdout, stderr };
}

const SPEC = path.join(ROOT, 'examples/petstore/openapi.yaml');

/** A manifest written for the whole Petstore, then trimmed to the `pets` tag. */
const TRIMMED = (extra = '') => `name: petstore
openapi: ${JSON.stringify(SPEC)}
output: ./server
include:
  - tag: pets           # only the pets
overrides:
  getInventory:         # store: left out by include
    description: "Counts."
  listPets: { title: "List pets" }
concerns:
  - name: access
    values: [read, write]
concernPresets:
  read-only: { access: read }
concernMappings:
  tools:
    # every tool, as init wrote them
    listPets:     { access: read }
    getInventory: { access: read }    # store
    deletePet:    { access: write }
reflection:
  gates:
    getInventory: { domain: store, prompt: why_inventory, template: "Why?" }
    deletePet: { domain: pets, prompt: why_delete, template: "Why?" }
policy:
  limits:
    tools: { getInventory: { timeoutMs: 5000 }, 'delete*': { timeoutMs: 9000 } }
${extra}`;

function setup(text: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-fix-test-'));
  temps.push(dir);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), text);
  return dir;
}

async function diagnosticsOf(dir: string): Promise<JsonReport['diagnostics']> {
  const res = await cli(['validate', 'mcpgen.yaml', '--format', 'json'], dir);
  return (JSON.parse(res.stdout) as JsonReport).diagnostics;
}

describe('entries naming left-out operations', () => {
  it('are one warning with the count, the first names and the fix, not an error each', async () => {
    const dir = setup(TRIMMED());
    const list = await diagnosticsOf(dir);
    expect(list.filter((d) => d.severity === 'error')).toEqual([]);
    const stale = list.filter((d) => d.code === 'MCPGEN_EXCLUDED_REFERENCES');
    expect(stale).toHaveLength(1);
    expect(stale[0]).toMatchObject({
      severity: 'warning',
      message:
        '4 manifest entries name operations that include/exclude leave out, so they do nothing: overrides.getInventory, concernMappings.tools.getInventory, reflection.gates.getInventory, policy.limits.tools.getInventory',
      help: expect.stringContaining('run `mcpgen fix mcpgen.yaml` to remove them'),
      // at the first, by line
      location: { file: 'mcpgen.yaml', pointer: '/overrides/getInventory', line: 7 },
    });
  });

  it('still makes a name the spec does not have an error, and fix refuses then', async () => {
    const text = TRIMMED().replace('    deletePet:    { access: write }', '    deletePet:    { access: write }\n    getInventry:  { access: read }');
    const dir = setup(text);
    const list = await diagnosticsOf(dir);
    expect(list.filter((d) => d.severity === 'error').map((d) => [d.code, d.message, d.help])).toEqual([
      ['MCPGEN_UNKNOWN_PRIMITIVE', 'tool "getInventry" does not exist', 'did you mean "getInventory"? (include/exclude leave it out)'],
    ]);
    expect(list.filter((d) => d.code === 'MCPGEN_EXCLUDED_REFERENCES')).toHaveLength(1);

    const res = await cli(['fix', 'mcpgen.yaml'], dir);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('MCPGEN_UNKNOWN_PRIMITIVE');
    expect(res.stderr).toContain('mcpgen.yaml error mcpgen.yaml has 1 error (above) that `mcpgen fix` does not fix; nothing changed');
    expect(readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8')).toBe(text);
  });

  it('are removed by mcpgen fix, and nothing else is touched', async () => {
    const dir = setup(TRIMMED());
    const file = path.join(dir, 'mcpgen.yaml');
    const dry = await cli(['fix', 'mcpgen.yaml', '--dry-run'], dir);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe(
      'mcpgen.yaml: would remove 4 entries naming operations include/exclude leave out (--dry-run: nothing written):\n' +
        '-  7 |   getInventory:         # store: left out by include\n' +
        '-  8 |     description: "Counts."\n' +
        '- 19 |     getInventory: { access: read }    # store\n' +
        '- 23 |     getInventory: { domain: store, prompt: why_inventory, template: "Why?" }\n' +
        '- 27 | getInventory: { timeoutMs: 5000 }\n',
    );
    expect(readFileSync(file, 'utf8')).toBe(TRIMMED());

    const res = await cli(['fix', 'mcpgen.yaml'], dir);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^Fixed mcpgen\.yaml: removed 4 entries naming operations include\/exclude leave out:\n- {2}7 \| {3}getInventory:/);
    const after = readFileSync(file, 'utf8');
    // fix writes by renaming a temporary file over the manifest: a rewrite would change the inode
    const written = statSync(file);
    const lines = TRIMMED().split('\n');
    expect(after).toBe(
      lines
        .filter((_, i) => ![7, 8, 19, 23].includes(i + 1))
        .join('\n')
        .replace('tools: { getInventory: { timeoutMs: 5000 }, ', 'tools: { '),
    );
    expect(after).toContain('    # every tool, as init wrote them\n');
    expect(after).toContain('  - tag: pets           # only the pets\n');
    // no temporary file left beside it
    expect(readdirSync(dir)).toEqual(['mcpgen.yaml']);
    expect((parse(after) as { reflection: { gates: object } }).reflection.gates).toEqual({
      deletePet: { domain: 'pets', prompt: 'why_delete', template: 'Why?' },
    });

    // the manifest now validates without the warning; a second fix has nothing to do and writes nothing
    expect((await diagnosticsOf(dir)).map((d) => d.code)).not.toContain('MCPGEN_EXCLUDED_REFERENCES');
    const again = await cli(['fix', 'mcpgen.yaml'], dir);
    expect(again).toMatchObject({ code: 0, stdout: 'mcpgen.yaml: nothing to fix (no entry names an operation include/exclude leave out).\n' });
    expect(readFileSync(file, 'utf8')).toBe(after);
    expect(statSync(file).ino).toBe(written.ino);
    expect(statSync(file).mtimeMs).toBe(written.mtimeMs);
  });

  it('fixes a manifest whose diagnostics make the warning an error', async () => {
    const dir = setup(TRIMMED('diagnostics: { MCPGEN_EXCLUDED_REFERENCES: error }\n'));
    const before = await diagnosticsOf(dir);
    expect(before.filter((d) => d.severity === 'error').map((d) => d.code)).toEqual(['MCPGEN_EXCLUDED_REFERENCES']);
    const res = await cli(['fix', 'mcpgen.yaml'], dir);
    expect(res.code, res.stderr).toBe(0);
    const after = await diagnosticsOf(dir);
    expect(after.filter((d) => d.severity === 'error' || d.code === 'MCPGEN_EXCLUDED_REFERENCES')).toEqual([]);
  });

  it('says when the manifest cannot be read', async () => {
    const dir = setup('');
    const res = await cli(['fix', 'nope.yaml'], dir);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^nope\.yaml error cannot read nope\.yaml: ENOENT/);
  });
});

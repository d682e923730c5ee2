/**
 * Every independent error in one run, and no errors caused by one already reported (issue 10,
 * item 16): schema errors of the manifest do not hide its semantic checks, a selector that
 * names nothing is not followed by "no tools", and a value the schema rejected is not reported
 * a second time by the check that would have read it.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { ROOT } from '../helpers/project.js';

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

async function errors(manifest: string): Promise<Array<[string, number, string]>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-one-run-'));
  temps.push(dir);
  cpSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), path.join(dir, 'openapi.yaml'));
  writeFileSync(path.join(dir, 'mcpgen.yaml'), manifest);
  const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: false });
  return res.diagnostics
    .sorted()
    .filter((d) => d.severity === 'error')
    .map((d) => [d.code, d.location.line, d.location.pointer]);
}

describe('one run reports every independent error (item 16)', () => {
  it('manifest schema errors do not hide the semantic checks', async () => {
    expect(
      await errors(`name: t
openapi: ./openapi.yaml
maxToolNameLength: "abc"
include:
  - tag: nosuchtag
overrides:
  nosuchOp: {title: x}
prompts:
  - name: p
    messages:
      - {role: user, text: "{{#if}}"}
`),
    ).toEqual([
      ['MCPGEN_MANIFEST_INVALID', 3, '/maxToolNameLength'],
      ['MCPGEN_UNKNOWN_TAG', 5, '/include/0/tag'],
      ['MCPGEN_UNKNOWN_OPERATION', 7, '/overrides/nosuchOp'],
      ['MCPGEN_PROMPT_TEMPLATE_INVALID', 11, '/prompts/0/messages/0/text'],
    ]);
  });

  it('a value the schema rejected is not checked again, and nothing is reported in the wrong place', async () => {
    expect(
      await errors(`name: t
openapi: ./openapi.yaml
include:
  - 5
  - tag: pets
  - tag: nosuchtag
exclude:
  - 5
  - method: [get, post, put, patch, delete]
overrides:
  listPets: {name: 7, title: 8}
  getPetById: {name: pet}
`),
    ).toEqual([
      // the lists with a rejected item are left out of the checks: the manifest reader would
      // skip the item and so report `nosuchtag` at /include/1; and no "no tools" for the exclude
      ['MCPGEN_MANIFEST_INVALID', 4, '/include/0'],
      ['MCPGEN_MANIFEST_INVALID', 8, '/exclude/0'],
      ['MCPGEN_MANIFEST_INVALID', 11, '/overrides/listPets/name'],
      ['MCPGEN_MANIFEST_INVALID', 11, '/overrides/listPets/title'],
    ]);
  });

  it('a selector that names no tag is the error, not "no tools"', async () => {
    expect(await errors('name: t\nopenapi: ./openapi.yaml\ninclude:\n  - tag: nosuchtag\n')).toEqual([['MCPGEN_UNKNOWN_TAG', 4, '/include/0/tag']]);
    expect(await errors('name: t\nopenapi: ./openapi.yaml\ninclude:\n  - operationId: nosuch\n')).toEqual([
      ['MCPGEN_UNKNOWN_OPERATION', 4, '/include/0/operationId'],
    ]);
  });

  it('still reports "no tools" when the selectors are right but leave nothing', async () => {
    expect(await errors('name: t\nopenapi: ./openapi.yaml\nexclude:\n  - method: [get, post, put, patch, delete]\n')).toEqual([
      ['MCPGEN_NO_TOOLS', 4, '/exclude'],
    ]);
  });
});

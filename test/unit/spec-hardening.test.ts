/**
 * Spec inputs that used to read files they must not, hang, crash or build a broken project
 * (issue 10, items 11, 12, 14 and 15): each is now a located error.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import type { Diagnostic } from '../../src/core/diagnostics.js';

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** A project folder holding `files` (path ⇒ text) and a manifest naming `openapi.yaml` unless told. */
function project(files: Record<string, string>, manifest = 'name: t\nopenapi: ./openapi.yaml\nbaseUrl: https://api.test\n'): string {
  const top = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-spec-'));
  temps.push(top);
  const dir = path.join(top, 'project');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), manifest);
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(top, f)), { recursive: true });
    writeFileSync(path.join(top, f), text);
  }
  return dir;
}

/** Compiles with emission (what `build` does), failing after `ms` instead of hanging. */
async function errorsOf(dir: string, ms = 10_000): Promise<Diagnostic[]> {
  const res = await Promise.race([
    compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: true }),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`compile did not finish within ${ms} ms`)), ms).unref()),
  ]);
  return res.diagnostics.sorted().filter((d) => d.severity === 'error');
}

const spec = (parameters: string, components = '') => `openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /a:
    get:
      operationId: getA
      parameters:
${parameters}
      responses:
        '200': {description: ok}
${components}`;

describe('local $refs are checked by real path (item 11)', () => {
  it('refuses a $ref through a symlink that leads outside the allowed folders', async () => {
    const dir = project({
      'secret/notes.yaml': 'type: string\nenum: [TOPSECRET]\n',
      'project/openapi.yaml': spec("        - {name: q, in: query, schema: {$ref: './notes.yaml'}}"),
    });
    symlinkSync(path.join(dir, '../secret/notes.yaml'), path.join(dir, 'notes.yaml'));
    const errors = await errorsOf(dir);
    expect(errors.map((d) => d.code)).toEqual(['MCPGEN_SPEC_REF_OUTSIDE']);
    expect(errors[0]!.location).toMatchObject({ file: 'openapi.yaml', line: 8 });
    expect(JSON.stringify(errors)).not.toContain('TOPSECRET');
  });

  it('refuses a $ref into a symlinked folder that leads outside, and follows links that stay inside', async () => {
    const dir = project({
      'secret/s.yaml': 'type: string\n',
      'project/real/s.yaml': 'type: integer\n',
      'project/openapi.yaml': spec(
        "        - {name: q, in: query, schema: {$ref: './linked/s.yaml'}}\n        - {name: r, in: query, schema: {$ref: './inside/s.yaml'}}",
      ),
    });
    symlinkSync(path.join(dir, '../secret'), path.join(dir, 'linked'));
    symlinkSync(path.join(dir, 'real'), path.join(dir, 'inside'));
    expect((await errorsOf(dir)).map((d) => [d.code, d.location.line])).toEqual([['MCPGEN_SPEC_REF_OUTSIDE', 8]]);
  });
});

describe('non-regular spec files (item 12)', () => {
  it('refuses an openapi path that is a FIFO, without waiting for a writer', async () => {
    const dir = project({});
    execFileSync('mkfifo', [path.join(dir, 'openapi.yaml')]);
    const errors = await errorsOf(dir, 5_000);
    expect(errors.map((d) => d.code)).toEqual(['MCPGEN_SPEC_NOT_FOUND']);
    expect(errors[0]!.message).toMatch(/not a regular file/);
    expect(errors[0]!.location).toMatchObject({ file: 'mcpgen.yaml', line: 2, col: 10 });
  });

  it('refuses a device and a folder', async () => {
    for (const target of ['/dev/zero', '.']) {
      const dir = project({}, `name: t\nopenapi: ${target}\n`);
      const errors = await errorsOf(dir, 5_000);
      expect(errors.map((d) => d.code)).toEqual(['MCPGEN_SPEC_NOT_FOUND']);
      expect(errors[0]!.location.line).toBe(2);
    }
  });

  it('refuses a $ref to a FIFO', async () => {
    const dir = project({ 'project/openapi.yaml': spec("        - {name: q, in: query, schema: {$ref: './pipe.yaml'}}") });
    execFileSync('mkfifo', [path.join(dir, 'pipe.yaml')]);
    const errors = await errorsOf(dir, 5_000);
    expect(errors.map((d) => d.code)).toEqual(['MCPGEN_SPEC_REF_UNRESOLVED']);
    expect(errors[0]!.message).toMatch(/not a regular file/);
  });
});

describe('numbers JSON cannot carry (item 14)', () => {
  it('reports .inf and .nan in a schema as located errors, each one', async () => {
    const dir = project({
      'project/openapi.yaml': spec(
        '        - {name: q, in: query, schema: {type: number, maximum: .inf, minimum: -.Inf}}\n        - {name: r, in: query, schema: {type: number, default: .nan}}',
      ),
    });
    const errors = await errorsOf(dir);
    expect(errors.map((d) => [d.code, d.location.line, d.location.pointer])).toEqual([
      ['MCPGEN_SPEC_INVALID', 8, '/paths/~1a/get/parameters/0/schema/maximum'],
      ['MCPGEN_SPEC_INVALID', 8, '/paths/~1a/get/parameters/0/schema/minimum'],
      ['MCPGEN_SPEC_INVALID', 9, '/paths/~1a/get/parameters/1/schema/default'],
    ]);
    expect(errors[0]!.message).toMatch(/\.inf/);
  });
});

describe('$ref cycles (item 15)', () => {
  it('reports a schema $ref cycle with no content instead of emitting `type X = X`', async () => {
    const dir = project({
      'project/openapi.yaml': spec(
        "        - {name: q, in: query, schema: {$ref: '#/components/schemas/A'}}",
        "components:\n  schemas:\n    A: {$ref: '#/components/schemas/B'}\n    B: {$ref: '#/components/schemas/A'}\n    C: {$ref: '#/components/schemas/C'}\n",
      ),
    });
    const errors = await errorsOf(dir);
    expect(errors.map((d) => [d.code, d.location.line, d.location.pointer])).toEqual([
      ['MCPGEN_SPEC_REF_CYCLE', 13, '/components/schemas/A'],
      ['MCPGEN_SPEC_REF_CYCLE', 15, '/components/schemas/C'],
    ]);
    expect(errors[0]!.message).toMatch(/#\/components\/schemas\/A → #\/components\/schemas\/B → #\/components\/schemas\/A/);
  });

  it('reports a parameter $ref cycle instead of dropping the parameter', async () => {
    const dir = project({
      'project/openapi.yaml': spec(
        "        - $ref: '#/components/parameters/P'",
        "components:\n  parameters:\n    P: {$ref: '#/components/parameters/Q'}\n    Q: {$ref: '#/components/parameters/P'}\n",
      ),
    });
    const errors = await errorsOf(dir);
    expect(errors.map((d) => [d.code, d.location.pointer])).toEqual([['MCPGEN_SPEC_REF_CYCLE', '/components/parameters/P']]);
  });

  it('still builds recursive schemas that have content', async () => {
    const dir = project({
      'project/openapi.yaml': spec(
        "        - {name: q, in: query, schema: {$ref: '#/components/schemas/Node'}}",
        "components:\n  schemas:\n    Node: {type: object, properties: {next: {$ref: '#/components/schemas/Node'}, alias: {$ref: '#/components/schemas/Alias'}}}\n    Alias: {$ref: '#/components/schemas/Node'}\n",
      ),
    });
    expect(await errorsOf(dir)).toEqual([]);
  });
});

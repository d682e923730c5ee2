/**
 * The manifest's `diagnostics`: `off` drops a warning, `error` makes it block the build, in
 * `build`, `build --check` and `validate`, in every output format; errors cannot be lowered and an
 * unknown code gets a suggestion. Runs the CLI in-process on a spec without a base URL (the
 * MCPGEN_NO_BASE_URL warning).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { JsonReport } from '../../src/cli/report.js';

const SPEC = `openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /pets:
    get:
      operationId: listPets
      responses: { '200': { description: ok } }
`;

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** A project whose manifest ends with `extra` (e.g. a `diagnostics` block). */
function project(extra = ''): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-levels-'));
  temps.push(dir);
  writeFileSync(path.join(dir, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: pets\nversion: 1.0.0\nopenapi: ./openapi.yaml\noutput: ./server\n${extra}`);
  return dir;
}

async function cli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s), cwd });
  return { code, stdout, stderr };
}

describe('diagnostics levels', () => {
  it('without an entry the warning is reported and the build goes on', async () => {
    const dir = project();
    const v = await cli(['validate', 'mcpgen.yaml'], dir);
    expect(v.code).toBe(0);
    expect(v.stderr).toContain('warning MCPGEN_NO_BASE_URL');
  });

  it('off: no warning in validate, build or build --check, in any format; the build writes', async () => {
    const dir = project('diagnostics:\n  MCPGEN_NO_BASE_URL: off\n');
    for (const format of ['text', 'github']) {
      const v = await cli(['validate', 'mcpgen.yaml', '--format', format], dir);
      expect(v.code).toBe(0);
      expect(v.stderr).toBe('');
    }
    const json = await cli(['validate', 'mcpgen.yaml', '--format', 'json'], dir);
    expect((JSON.parse(json.stdout) as JsonReport).diagnostics).toEqual([]);
    const b = await cli(['build', 'mcpgen.yaml'], dir);
    expect(b.code).toBe(0);
    expect(b.stderr).toBe('');
    expect(existsSync(path.join(dir, 'server/package.json'))).toBe(true);
    const c = await cli(['build', 'mcpgen.yaml', '--check', '--format', 'json'], dir);
    expect(c.code).toBe(0);
    expect(JSON.parse(c.stdout) as JsonReport).toMatchObject({ diagnostics: [], drift: [] });
  });

  it('warning: the same as no entry', async () => {
    const dir = project('diagnostics:\n  MCPGEN_NO_BASE_URL: warning\n');
    const v = await cli(['validate', 'mcpgen.yaml'], dir);
    expect(v.code).toBe(0);
    expect(v.stderr).toContain('warning MCPGEN_NO_BASE_URL');
  });

  it('error: the warning blocks the build (nothing written) and --check, in every format, and says why', async () => {
    const dir = project('diagnostics:\n  MCPGEN_NO_BASE_URL: error\n');
    const text = await cli(['validate', 'mcpgen.yaml'], dir);
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(
      /^mcpgen\.yaml:1:1 error MCPGEN_NO_BASE_URL .*\n {2}help: .*\(an error because the manifest's `diagnostics` sets MCPGEN_NO_BASE_URL: error\)\n1 error, 0 warnings\n$/,
    );
    const gh = await cli(['validate', 'mcpgen.yaml', '--format', 'github'], dir);
    expect(gh.code).toBe(1);
    expect(gh.stderr).toMatch(/^::error file=mcpgen\.yaml,line=1,col=1,title=MCPGEN_NO_BASE_URL::/);
    const b = await cli(['build', 'mcpgen.yaml', '--format', 'json'], dir);
    expect(b.code).toBe(1);
    expect((JSON.parse(b.stdout) as JsonReport).diagnostics.map((d) => [d.code, d.severity])).toEqual([['MCPGEN_NO_BASE_URL', 'error']]);
    expect(existsSync(path.join(dir, 'server'))).toBe(false);
    const c = await cli(['build', 'mcpgen.yaml', '--check'], dir);
    expect(c.code).toBe(1);
    expect(c.stderr).toContain('error MCPGEN_NO_BASE_URL');
  });

  it('an error cannot be lowered, and an unknown code gets the closest; both at their entry', async () => {
    const dir = project('include:\n  - tag: nope\ndiagnostics:\n  MCPGEN_UNKNOWN_TAG: off\n  MCPGEN_NO_BASEURL: off\n  MCPGEN_NO_TOOLS: error\n');
    const res = await cli(['validate', 'mcpgen.yaml', '--format', 'json'], dir);
    expect(res.code).toBe(1);
    const doc = JSON.parse(res.stdout) as JsonReport;
    const invalid = doc.diagnostics.filter((d) => d.code === 'MCPGEN_DIAGNOSTIC_LEVEL_INVALID');
    expect(invalid.map((d) => [d.severity, d.message, d.help, d.location.pointer, d.location.line])).toEqual([
      [
        'error',
        'diagnostics sets MCPGEN_UNKNOWN_TAG to off, but MCPGEN_UNKNOWN_TAG is always an error and cannot be lowered',
        'fix what MCPGEN_UNKNOWN_TAG reports, or remove this entry; only warnings can be set to off',
        '/diagnostics/MCPGEN_UNKNOWN_TAG',
        8,
      ],
      [
        'error',
        'diagnostics names MCPGEN_NO_BASEURL, which is not an mcpgen diagnostic code',
        'did you mean "MCPGEN_NO_BASE_URL"?',
        '/diagnostics/MCPGEN_NO_BASEURL',
        9,
      ],
    ]);
    // the error it tried to silence is still there
    expect(doc.diagnostics.some((d) => d.code === 'MCPGEN_UNKNOWN_TAG' && d.severity === 'error')).toBe(true);
  });

  it('a warning of a code that is sometimes an error can be turned off (MCPGEN_NO_TOOLS with extra tools)', async () => {
    const extra = 'exclude:\n  - operationId: listPets\nprompts:\n  - name: hi\n    messages:\n      - role: user\n        text: hello\n';
    const warned = await cli(['validate', 'mcpgen.yaml'], project(extra));
    expect(warned.stderr).toContain('warning MCPGEN_NO_TOOLS');
    const off = await cli(['validate', 'mcpgen.yaml'], project(`${extra}diagnostics:\n  MCPGEN_NO_TOOLS: off\n  MCPGEN_NO_BASE_URL: off\n`));
    expect(off.code).toBe(0);
    expect(off.stderr).toBe('');
  });
});

/**
 * The bad-input corpus (issue 10): every manifest and spec under test/fixtures/bad-manifests and
 * test/fixtures/bad-builds, run through `validate`, `build` and `build --check`. For every case
 * and command: exit 1; exactly the errors its `expected.json` declares (so a cascade or a missing
 * error fails), each located at file:line:col; no internal error or stack trace; nothing written
 * and no file touched (the case's whole temporary tree is the same afterwards).
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { badCases, describeError, prepareCase } from '../helpers/bad-fixtures.js';
import { snapshot } from '../helpers/cli.js';

type Diag = { code: string; severity: string; message: string; help: string; location: { file: string; pointer: string; line: number; col: number } };

const cases = badCases();
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

async function run(argv: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io = { stdout: (s: string) => void (stdout += s), stderr: (s: string) => void (stderr += s), cwd };
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`mcpgen ${argv.join(' ')} did not finish within 20 s`)), 20_000).unref());
  const code = await Promise.race([main(argv, io), timeout]);
  return { code, stdout, stderr };
}

describe('bad-input corpus', () => {
  it('has at least 60 cases, each declaring its errors', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
    for (const c of cases) {
      expect(c.expected.description.length, c.name).toBeGreaterThan(0);
      expect(c.expected.errors.length, `${c.group}/${c.name} declares no errors`).toBeGreaterThan(0);
    }
  });

  describe.each(cases.map((c) => [`${c.group}/${c.name}`, c] as const))('%s', (_, c) => {
    it.each(['validate', 'build', 'build --check'])(`${c.expected.description} — %s`, async (command) => {
      const { root, cwd } = prepareCase(c);
      temps.push(root);
      const before = snapshot(root);
      const res = await run([...command.split(' '), 'mcpgen.yaml', '--format', 'json'], cwd);
      expect(res.stderr).not.toMatch(/internal error|\n\s+at .*:\d+:\d+/);
      expect(res.code, res.stderr).toBe(1);
      const parsed = JSON.parse(res.stdout) as Diag[] | { diagnostics: Diag[] };
      const errors = (Array.isArray(parsed) ? parsed : parsed.diagnostics).filter((d) => d.severity === 'error');
      expect(errors.map(describeError)).toEqual(c.expected.errors);
      for (const text of c.expected.mentions ?? []) expect(errors.map((d) => d.message).join('\n')).toContain(text);
      for (const d of errors) {
        expect(d.location.line, describeError(d)).toBeGreaterThan(0);
        expect(d.location.col, describeError(d)).toBeGreaterThan(0);
        expect(d.help.length, describeError(d)).toBeGreaterThan(0);
      }
      expect(snapshot(root)).toEqual(before);
    });
  });
});

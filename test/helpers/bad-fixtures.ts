/**
 * The bad-input corpus (test/fixtures/bad-manifests and bad-builds): each case is a folder with
 * an `mcpgen.yaml` and an `expected.json` declaring the errors it must produce, and optionally
 * `setup` steps for what git cannot hold (FIFOs, symbolic links) or what must be made fresh.
 *
 * A case runs in a temporary copy laid out like the repository (the case folder at
 * `test/fixtures/<group>/<case>` and `examples/petstore/openapi.yaml`, which many cases name),
 * so that nothing the run might write can reach the repository, and the whole copy can be
 * compared before and after.
 */

import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './project.js';

/** One setup step, paths relative to the case folder. */
export type SetupStep = { fifo: string } | { symlink: string; to: string } | { write: string; text: string };

/** A case's `expected.json`. */
export type Expected = {
  /** What the case is about, one line. */
  description: string;
  setup?: SetupStep[];
  /** Every error the case must produce, in the order mcpgen lists them: `CODE file:line:col`. */
  errors: string[];
  /** Text the errors' messages must contain between them (the file a conflict names, …). */
  mentions?: string[];
};

/** A case of the corpus. */
export type BadCase = { group: string; name: string; dir: string; expected: Expected };

/** The groups of the corpus, under test/fixtures/. */
export const GROUPS = ['bad-manifests', 'bad-builds'] as const;

/** Every case of the corpus, sorted by group and name. */
export function badCases(): BadCase[] {
  return GROUPS.flatMap((group) => {
    const base = path.join(ROOT, 'test/fixtures', group);
    return readdirSync(base)
      .sort()
      .map((name) => {
        const dir = path.join(base, name);
        const file = path.join(dir, 'expected.json');
        const expected = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Expected) : { description: '(no expected.json)', errors: [] };
        return { group, name, dir, expected };
      });
  });
}

/** Copies a case into a fresh temporary tree laid out like the repository; returns the case folder in it. */
export function prepareCase(c: BadCase): { root: string; cwd: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), `mcpgen-bad-${c.name}-`));
  const cwd = path.join(root, 'test/fixtures', c.group, c.name);
  cpSync(c.dir, cwd, { recursive: true, verbatimSymlinks: true, filter: (src) => path.basename(src) !== 'expected.json' });
  mkdirSync(path.join(root, 'examples/petstore'), { recursive: true });
  cpSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), path.join(root, 'examples/petstore/openapi.yaml'));
  for (const step of c.expected.setup ?? []) {
    if ('fifo' in step) execFileSync('mkfifo', [path.join(cwd, step.fifo)]);
    else if ('symlink' in step) symlinkSync(step.to, path.join(cwd, step.symlink));
    else {
      mkdirSync(path.dirname(path.join(cwd, step.write)), { recursive: true });
      writeFileSync(path.join(cwd, step.write), step.text);
    }
  }
  return { root, cwd };
}

/** `CODE file:line:col` of a diagnostic, as `expected.json` lists errors. */
export function describeError(d: { code: string; location: { file: string; line: number; col: number } }): string {
  return `${d.code} ${d.location.file}:${d.location.line}:${d.location.col}`;
}

/**
 * The build cache is keyed by mcpgen's code as it is, not as its files' sizes and times say
 * (src/core/code-fingerprint.ts, the spec cache's fingerprint in src/openapi/cache.ts): an edit that
 * keeps a compiled file's size and time (`cp -p`, `rsync -t`, tar and npm's packages keep or set
 * times) is a miss for every entry, and the spec's slot is overwritten, not left beside a new one.
 * Runs a copy of the built mcpgen in a temp folder (the shared dist/ is never touched).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { snapshot } from '../helpers/cli.js';
import { ROOT } from '../helpers/project.js';

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** A copy of the built mcpgen as packed (package.json's `files`; times kept, as `cp -p` keeps them), its dependencies linked. */
function copyOfMcpgen(into: string): string {
  const root = path.join(into, 'mcpgen');
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
  for (const f of ['package.json', ...pkg.files]) {
    cpSync(path.join(ROOT, f), path.join(root, f), { recursive: true, preserveTimestamps: true });
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  return root;
}

const run = promisify(execFile);

/** Each entry of the cache folder with its inode and time: a rewritten entry (renamed into place) has a new inode. */
function entries(dir: string): Record<string, [number, number]> {
  const cache = path.join(dir, '.cache/mcpgen');
  return Object.fromEntries(
    readdirSync(cache)
      .filter((f) => f.endsWith('.entry'))
      .map((f) => {
        const st = statSync(path.join(cache, f));
        return [f, [st.ino, st.mtimeMs]];
      }),
  );
}

describe('build cache: keyed by the content of mcpgen’s code', () => {
  it('misses every entry after an edit of a compiled file that keeps its size and time', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-cache-code-'));
    temps.push(tmp);
    const mcpgen = copyOfMcpgen(tmp);
    const dir = path.join(tmp, 'project');
    cpSync(path.join(ROOT, 'test/fixtures/multi-file'), dir, { recursive: true });
    const build = async () => {
      await run(process.execPath, [path.join(mcpgen, 'bin/mcpgen.js'), 'build', 'mcpgen.yaml', '--quiet'], { cwd: dir });
      return Object.fromEntries(Object.entries(snapshot(path.join(dir, 'server'))).filter(([f]) => f !== '.mcpgen.json'));
    };
    const files = await build();
    const first = entries(dir);
    expect(Object.keys(first).sort()).toEqual([expect.stringMatching(/^operations-/), 'runtime-imports.entry', expect.stringMatching(/^spec-/)]);
    // the same code: every entry read, none written
    await build();
    expect(entries(dir)).toEqual(first);

    // one byte of a compiled module the spec's loading and the model both depend on, changed in a
    // comment-free place that keeps it valid: the last newline made a space; its size and time kept
    const file = path.join(mcpgen, 'dist/src/core/diagnostics.js');
    const st = statSync(file);
    const text = readFileSync(file, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    writeFileSync(file, `${text.slice(0, -1)} `);
    utimesSync(file, st.atime, st.mtime);
    expect([statSync(file).size, statSync(file).mtimeMs]).toEqual([st.size, st.mtimeMs]);

    expect(await build()).toEqual(files);
    const after = entries(dir);
    // the same slots (the spec's is overwritten, not left beside a new one), each written again
    expect(Object.keys(after).sort()).toEqual(Object.keys(first).sort());
    for (const name of Object.keys(first)) expect(after[name], `${name}: written again`).not.toEqual(first[name]);
  });
});

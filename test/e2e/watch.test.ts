/**
 * `mcpgen build --watch` as a user runs it: a child process on a temporary Petstore project;
 * an edit of the spec is rebuilt (the new text reaches the generated file), the build's own
 * writes (the project and the build cache) trigger nothing, a manifest edit's rebuild reads the
 * spec from the build cache, and SIGTERM stops it cleanly.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/project.js';

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** Resolves once `test()` holds, polling every 50 ms; rejects after `ms` with what was seen. */
async function until(test: () => boolean, ms: number, what: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms; output so far:\n${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('mcpgen build --watch', () => {
  it('rebuilds after a spec edit, not after its own writes, and stops on SIGTERM', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-watch-'));
    temps.push(dir);
    cpSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), path.join(dir, 'openapi.yaml'));
    cpSync(path.join(ROOT, 'examples/petstore/mcpgen.yaml'), path.join(dir, 'mcpgen.yaml'));
    const env: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: '0' };
    delete env.NO_COLOR;
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/mcpgen.js'), 'build', 'mcpgen.yaml', '--watch'], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const seen = () => `stdout:\n${stdout}\nstderr:\n${stderr}`;
    const builds = () => stdout.match(/^Built petstore/gm)?.length ?? 0;
    try {
      await until(() => builds() === 1 && stderr.includes('Watching mcpgen.yaml'), 60_000, seen);
      expect(stdout).toMatch(/Built petstore into server: 6 tools/);
      const tools = path.join(dir, 'server/src/tools.gen.ts');
      expect(readFileSync(tools, 'utf8')).not.toContain('Lists every pet the store has');

      const spec = path.join(dir, 'openapi.yaml');
      writeFileSync(spec, readFileSync(spec, 'utf8').replace('Lists the pets in the store,', 'Lists every pet the store has,'));
      await until(() => builds() === 2, 60_000, seen);
      expect(stderr).toMatch(/openapi\.yaml changed: rebuilding/);
      expect(stdout.split('\n').filter((l) => l.startsWith('Built'))[1]).toMatch(/0 added, [1-9]\d* changed, 0 removed/);
      expect(readFileSync(tools, 'utf8')).toContain('Lists every pet the store has');
      // the rebuild kept the edited spec in the build cache beside the manifest
      const cache = path.join(dir, '.cache/mcpgen');
      const entries = readdirSync(cache).filter((f) => f.startsWith('spec-') && f.endsWith('.entry'));
      expect(entries).toHaveLength(1);
      const entry = path.join(cache, entries[0]!);
      expect(readFileSync(entry, 'utf8')).toContain('Lists every pet the store has');
      const kept = statSync(entry);

      // a manifest edit rebuilds too
      const manifest = path.join(dir, 'mcpgen.yaml');
      writeFileSync(
        manifest,
        readFileSync(manifest, 'utf8').replace('description: Counts of pets by status', 'description: How many pets there are, by status'),
      );
      await until(() => builds() === 3, 60_000, seen);
      expect(readFileSync(tools, 'utf8')).toContain('How many pets there are, by status');
      // a manifest-only change: the spec came from the cache, whose entry was not written again
      const after = statSync(entry);
      expect([after.ino, after.mtimeMs]).toEqual([kept.ino, kept.mtimeMs]);

      // the build's own writes into server/ start no further build
      await new Promise((r) => setTimeout(r, 1500));
      expect(builds(), seen()).toBe(3);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 180_000);
});

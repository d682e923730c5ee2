/**
 * The build cache (issue 24): `mcpgen build` keeps the loaded, checked and bundled spec in
 * `.cache/mcpgen/` beside the manifest and reuses it while the spec, every file it `$ref`s and
 * mcpgen are unchanged; the entry is trusted only when whole; `--no-cache`, `--check` and
 * `validate` write none. It keeps the operation tools too (src/ir/model-memo.ts), reused after a
 * manifest change that does not reach them. The corpus side (cold and cached builds
 * byte-identical) is in test/e2e/corpus.test.ts, which shares its cold build; the operation
 * tools' memo: test/e2e/build-cache-model.test.ts.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alterHeader, entryParts, writeSealed } from '../helpers/cache-entry.js';
import { mcpgen, snapshot } from '../helpers/cli.js';
import { ROOT } from '../helpers/project.js';

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** A copy of the multi-file fixture (a YAML spec that `$ref`s two other files). */
function project(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-cache-'));
  temps.push(dir);
  cpSync(path.join(ROOT, 'test/fixtures/multi-file'), dir, { recursive: true });
  return dir;
}

const cacheOf = (dir: string) => path.join(dir, '.cache/mcpgen');
/** The one entry file in the cache folder. */
function entryOf(dir: string): string {
  const entries = readdirSync(cacheOf(dir)).filter((f) => f.startsWith('spec-') && f.endsWith('.entry'));
  expect(entries).toHaveLength(1);
  return path.join(cacheOf(dir), entries[0]!);
}

/** Rewrites the entry's body with `edit`, sealed again: an entry the cache cannot tell from a real one. */
function doctor(entry: string, edit: (body: string) => string): void {
  const { header, body } = entryParts(entry);
  expect(header.document).toBe('body');
  writeSealed(entry, header, edit(body));
}

/**
 * The generated files that depend on the spec: the runtime's files are copied as they are (and
 * the lock file lists their hashes), so they are left out — they are not the cache's business,
 * and another build of mcpgen's templates between two builds would change them.
 */
const generated = (dir: string, out = 'server') =>
  Object.fromEntries(Object.entries(snapshot(path.join(dir, out))).filter(([f]) => !f.startsWith('src/runtime/') && f !== '.mcpgen.json'));

async function build(dir: string, ...args: string[]) {
  const res = await mcpgen(['build', 'mcpgen.yaml', '--quiet', ...args], dir);
  expect(res.code, res.stderr).toBe(0);
  return res;
}

describe('build cache', () => {
  it('keeps the spec beside the manifest, git-ignored, and a cached build writes the bytes a cold one does', async () => {
    const dir = project();
    await build(dir);
    expect(readFileSync(path.join(cacheOf(dir), '.gitignore'), 'utf8')).toMatch(/^\*$/m);
    expect(readFileSync(path.join(cacheOf(dir), 'CACHEDIR.TAG'), 'utf8')).toMatch(/^Signature: 8a477f597d28d172789f06886806bc55/);
    const entry = entryOf(dir);
    const first = statSync(entry);
    // a manifest-only change: the entry is read, not written again
    writeFileSync(path.join(dir, 'mcpgen.yaml'), readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8') + 'description: Nodes, from the cache.\n');
    await build(dir);
    const second = statSync(entry);
    expect([second.ino, second.mtimeMs]).toEqual([first.ino, first.mtimeMs]);
    await build(dir, '--no-cache', '--out', 'cold');
    expect(generated(dir)).toEqual(generated(dir, 'cold'));
  });

  it('uses what the entry holds while the spec and every file it references hash as recorded; --no-cache ignores it', async () => {
    const dir = project();
    await build(dir);
    // an entry that is whole but says something else shows whether the cache is read (the
    // operation tools' entry goes: it holds the tools modelled from the true spec)
    doctor(entryOf(dir), (body) => body.replace('"getNode"', '"getNodeFromCache"'));
    for (const f of readdirSync(cacheOf(dir))) if (f.startsWith('operations-')) rmSync(path.join(cacheOf(dir), f));
    const before = readFileSync(entryOf(dir));
    await build(dir);
    expect(Object.values(generated(dir)).join('\n')).toMatch(/getNodeFromCache/);
    await build(dir, '--no-cache', '--out', 'cold');
    expect(Object.values(generated(dir, 'cold')).join('\n')).not.toMatch(/getNodeFromCache/);
    expect(readFileSync(entryOf(dir))).toEqual(before);
    // a referenced file changes: the entry is not trusted, the build reads the spec anew and keeps that
    writeFileSync(path.join(dir, 'schemas/node.yaml'), readFileSync(path.join(dir, 'schemas/node.yaml'), 'utf8') + '  colour: { type: string }\n');
    await build(dir);
    const files = Object.values(generated(dir)).join('\n');
    expect(files).not.toMatch(/getNodeFromCache/);
    expect(files).toMatch(/colour/);
    expect(readFileSync(entryOf(dir), 'utf8')).not.toMatch(/getNodeFromCache/);
    expect(readFileSync(entryOf(dir), 'utf8')).toMatch(/colour/);
  });

  it('detects a partial or corrupted entry, rebuilds it and never uses it', async () => {
    const dir = project();
    await build(dir, '--out', 'cold', '--no-cache');
    await build(dir);
    const whole = readFileSync(entryOf(dir));
    const nl = whole.indexOf(0x0a);
    const damaged: Array<[string, Buffer]> = [
      ['cut short', whole.subarray(0, Math.floor(whole.length * 0.6))],
      ['header only', whole.subarray(0, nl + 1)],
      ['empty', Buffer.alloc(0)],
      // one byte of the body changed, keeping it valid JSON that names another operation
      ['changed body', Buffer.from(whole.toString('utf8').replace('"getNode"', '"getNodX"'))],
      ['bad header', Buffer.concat([Buffer.from('{"format":1,'), whole.subarray(nl)])],
      // the header altered (its seal not): still JSON of the right shape, but not what was written
      ['another version', Buffer.from(alterHeader(entryOf(dir), '"version":"3.1"', '"version":"3.0"'))],
      ['read as JSON', Buffer.from(alterHeader(entryOf(dir), '"json":false', '"json":true'))],
    ];
    for (const [what, bytes] of damaged) {
      writeFileSync(entryOf(dir), bytes);
      await build(dir);
      expect(generated(dir), what).toEqual(generated(dir, 'cold'));
      expect(readFileSync(entryOf(dir)).equals(whole), `${what}: rebuilt whole`).toBe(true);
    }
  });

  it('validate, build --check, --no-cache and a refused build write no cache', async () => {
    const dir = project();
    expect((await mcpgen(['validate', 'mcpgen.yaml', '--quiet'], dir)).code).toBe(0);
    expect((await mcpgen(['build', 'mcpgen.yaml', '--check', '--quiet'], dir)).code).toBe(1);
    await build(dir, '--no-cache');
    expect(existsSync(path.join(dir, '.cache'))).toBe(false);
    // the output folder holds a file that is not mcpgen's: refused, nothing written
    writeFileSync(path.join(dir, 'server/README.md'), 'mine\n');
    expect((await mcpgen(['build', 'mcpgen.yaml', '--quiet'], dir)).code).toBe(1);
    expect(existsSync(path.join(dir, '.cache'))).toBe(false);
    // a cached validate reads the entry a build kept, and says what a cold one says
    rmSync(path.join(dir, 'server'), { recursive: true });
    await build(dir);
    const cached = await mcpgen(['validate', 'mcpgen.yaml', '--format', 'json'], dir);
    const cold = await mcpgen(['validate', 'mcpgen.yaml', '--format', 'json', '--no-cache'], dir);
    expect(cached.code).toBe(0);
    expect(cached.stdout).toBe(cold.stdout);
  });
});

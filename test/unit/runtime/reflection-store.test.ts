import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isValidDomainName, JustificationStore, StoreError } from '../../../templates/runtime/reflection/reflection-store.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const STORE_MODULE = path.join(ROOT, 'templates/runtime/reflection/reflection-store.ts');
const work = mkdtempSync(path.join(tmpdir(), 'mcpgen-store-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
const freshDir = (): string => path.join(work, `s${++n}`);
const H1 = 'a'.repeat(64);
const H2 = 'b'.repeat(64);
const rec = (justification: unknown) => ({ prompt: 'p', promptArgs: { x: '1' }, justification });

/** A child process script driving the store (run with tsx). */
const CHILD = path.join(work, 'child.mts');
writeFileSync(
  CHILD,
  `import { JustificationStore } from ${JSON.stringify(STORE_MODULE)};
const [mode, dir, arg] = process.argv.slice(2);
const hash = 'a'.repeat(64);
if (mode === 'concurrent') {
  const store = new JustificationStore(dir, ['d']);
  for (let i = 0; i < 25; i++) {
    const pad = 'x'.repeat(Math.floor(Math.random() * 20000));
    await store.put('d', hash, { prompt: 'p', promptArgs: {}, justification: { writer: arg, i, pad } });
  }
} else if (mode === 'hang') {
  const store = new JustificationStore(dir, ['d'], { beforeRename: () => { process.stdout.write('READY\\n'); return new Promise(() => {}); } });
  await store.put('d', hash, { prompt: 'p', promptArgs: {}, justification: { version: 'new' } });
} else if (mode === 'big') {
  const size = Number(arg);
  const store = new JustificationStore(dir, ['d'], { maxJustificationBytes: size * 2 });
  process.stdout.write('START\\n');
  await store.put('d', hash, { prompt: 'p', promptArgs: {}, justification: { version: 'new', pad: 'y'.repeat(size) } });
  process.stdout.write('DONE\\n');
}
`,
);

function child(...args: string[]): { proc: ChildProcess; done: Promise<number | null>; waitFor: (line: string) => Promise<void> } {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: { line: string; resolve: () => void }[] = [];
  proc.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const w of waiters.splice(0))
      if (out.includes(w.line + '\n')) w.resolve();
      else waiters.push(w);
  });
  proc.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const done = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const waitFor = (line: string): Promise<void> =>
    new Promise((resolve, reject) => {
      if (out.includes(line + '\n')) return resolve();
      waiters.push({ line, resolve });
      void done.then(() => setTimeout(() => reject(new Error(`child exited before ${line}: ${err}`)), 50));
    });
  return { proc, done, waitFor };
}

describe('JustificationStore: validation before any file system access', () => {
  it('rejects bad and undeclared domains and malformed hashes', async () => {
    const dir = freshDir();
    const store = new JustificationStore(dir, ['crs', 'datum']);
    for (const domain of ['../x', '..', '.', 'a/b', 'a\\b', '', 'x'.repeat(65), 'other', '/etc']) {
      await expect(store.get(domain, H1)).rejects.toMatchObject({ name: 'StoreError', reason: 'domain' });
      await expect(store.put(domain, H1, rec({}))).rejects.toBeInstanceOf(StoreError);
    }
    for (const hash of ['A'.repeat(64), 'a'.repeat(63), `../${'a'.repeat(61)}`, `sha256:${H1}`, '']) {
      await expect(store.get('crs', hash)).rejects.toMatchObject({ reason: 'hash' });
      await expect(store.put('crs', hash, rec({}))).rejects.toMatchObject({ reason: 'hash' });
    }
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses to be configured with an invalid domain name', () => {
    expect(() => new JustificationStore(freshDir(), ['ok', '../up'])).toThrow(/Invalid reflection domain/);
    expect(isValidDomainName('a.b-c_D9')).toBe(true);
    expect(isValidDomainName('..')).toBe(false);
  });

  it('caps the justification size and writes nothing when over', async () => {
    const dir = freshDir();
    const store = new JustificationStore(dir, ['d'], { maxJustificationBytes: 100 });
    await expect(store.put('d', H1, rec({ pad: 'x'.repeat(200) }))).rejects.toMatchObject({
      reason: 'size',
      message: expect.stringMatching(/the limit is 100 bytes/),
    });
    expect(existsSync(dir)).toBe(false);
    expect(new JustificationStore(freshDir(), ['d']).maxJustificationBytes).toBe(32 * 1024);
  });
});

describe('JustificationStore: reading and writing', () => {
  it('round-trips a record at <dir>/<domain>/<hash>.json and forces hash and domain', async () => {
    const dir = freshDir();
    const store = new JustificationStore(dir, ['crs']);
    expect(await store.get('crs', H1)).toBeUndefined();
    const file = await store.put('crs', H1, { ...rec({ intent: 'i' }), hash: H2, domain: 'evil' } as never);
    expect(file).toBe(path.join(dir, 'crs', `${H1}.json`));
    const got = await store.get('crs', H1);
    expect(got).toMatchObject({ hash: H1, domain: 'crs', prompt: 'p', justification: { intent: 'i' } });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(got);
    expect(readdirSync(path.join(dir, 'crs'))).toEqual([`${H1}.json`]);
  });

  it('removes the temp files of writes that never finished once they are over a minute old, and nothing else', async () => {
    const dir = freshDir();
    const store = new JustificationStore(dir, ['d', 'e']);
    mkdirSync(path.join(dir, 'd'), { recursive: true });
    const old = path.join(dir, 'd', `${H1}.json.4242.0123456789ab.tmp`);
    const young = path.join(dir, 'd', `${H1}.json.4343.0123456789ab.tmp`);
    const kept = [path.join(dir, 'd', `${H1}.json`), path.join(dir, 'd', 'notes.tmp'), path.join(dir, 'd', `${H1}.json.1.zz.tmp`)];
    for (const f of [old, young, ...kept]) writeFileSync(f, '{}');
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(old, hourAgo, hourAgo);
    for (const f of kept) utimesSync(f, hourAgo, hourAgo);
    expect(await store.removeStaleTemps()).toBe(1);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(young)).toBe(true);
    for (const f of kept) expect(existsSync(f)).toBe(true);
  });

  it('treats unreadable, foreign or corrupt files as absent and ignores temp leftovers', async () => {
    const dir = freshDir();
    const store = new JustificationStore(dir, ['d']);
    mkdirSync(path.join(dir, 'd'), { recursive: true });
    writeFileSync(path.join(dir, 'd', `${H1}.json`), '{"hash": "' + H1 + '", "domain": "d", "justif');
    expect(await store.get('d', H1)).toBeUndefined();
    writeFileSync(path.join(dir, 'd', `${H1}.json`), JSON.stringify({ hash: H2, domain: 'd', justification: {} }));
    expect(await store.get('d', H1)).toBeUndefined();
    writeFileSync(path.join(dir, 'd', `${H2}.json.123.abc.tmp`), JSON.stringify({ hash: H2, domain: 'd', justification: {} }));
    expect(await store.get('d', H2)).toBeUndefined();
  });

  it('does not follow symbolic links out of the store', async () => {
    const outside = freshDir();
    mkdirSync(outside, { recursive: true });
    writeFileSync(path.join(outside, `${H1}.json`), JSON.stringify({ hash: H1, domain: 'd', prompt: 'p', promptArgs: {}, justification: {} }));
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    symlinkSync(outside, path.join(dir, 'd'));
    const store = new JustificationStore(dir, ['d', 'e']);
    await expect(store.get('d', H1)).rejects.toMatchObject({ reason: 'link' });
    await expect(store.put('d', H2, rec({}))).rejects.toMatchObject({ reason: 'link' });
    expect(existsSync(path.join(outside, `${H2}.json`))).toBe(false);
    mkdirSync(path.join(dir, 'e'));
    symlinkSync(path.join(outside, `${H1}.json`), path.join(dir, 'e', `${H1}.json`));
    expect(await store.get('e', H1)).toBeUndefined();
  });

  it('survives many concurrent puts of the same key from one process', async () => {
    const dir = freshDir();
    const store = new JustificationStore(dir, ['d']);
    await Promise.all(Array.from({ length: 40 }, (_v, i) => store.put('d', H1, rec({ i, pad: 'z'.repeat(i * 300) }))));
    const got = await store.get('d', H1);
    expect(got?.justification).toMatchObject({ i: expect.any(Number) });
    expect(readdirSync(path.join(dir, 'd'))).toEqual([`${H1}.json`]);
  });
});

describe('JustificationStore: several processes and crashes', () => {
  it('never exposes invalid JSON while child processes race on the same key', async () => {
    const dir = freshDir();
    const store = new JustificationStore(dir, ['d']);
    const kids = ['w1', 'w2', 'w3', 'w4'].map((id) => child('concurrent', dir, id));
    let running = true;
    const finished = Promise.all(kids.map((k) => k.done)).then((codes) => {
      running = false;
      return codes;
    });
    let reads = 0;
    const file = path.join(dir, 'd', `${H1}.json`);
    while (running) {
      if (existsSync(file)) {
        const text = readFileSync(file, 'utf8'); // may race a rename, but is never partial
        expect(() => JSON.parse(text)).not.toThrow();
        expect(await store.get('d', H1)).toMatchObject({ hash: H1 });
        reads++;
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(await finished).toEqual([0, 0, 0, 0]);
    expect(reads).toBeGreaterThan(0);
    const final = await store.get('d', H1);
    expect(final?.justification).toMatchObject({ writer: expect.stringMatching(/^w[1-4]$/), i: 24 });
    expect(readdirSync(path.join(dir, 'd'))).toEqual([`${H1}.json`]);
  });

  it('keeps the old file when the writer is killed between write and rename', async () => {
    const dir = freshDir();
    const store = new JustificationStore(dir, ['d']);
    // no previous file: nothing appears
    const first = child('hang', dir);
    await first.waitFor('READY');
    first.proc.kill('SIGKILL');
    await first.done;
    expect(await store.get('d', H1)).toBeUndefined();
    expect(readdirSync(path.join(dir, 'd')).some((f) => f.endsWith('.tmp'))).toBe(true);
    // previous file: it stays intact, the complete temp file is ignored
    await store.put('d', H1, rec({ version: 'old' }));
    const second = child('hang', dir);
    await second.waitFor('READY');
    second.proc.kill('SIGKILL');
    await second.done;
    expect((await store.get('d', H1))?.justification).toEqual({ version: 'old' });
  });

  it('leaves the old or the complete new file when killed at random points of a large write', async () => {
    const dir = freshDir();
    const store = new JustificationStore(dir, ['d']);
    await store.put('d', H1, rec({ version: 'old' }));
    const seen = new Set<string>();
    for (let round = 0; round < 6; round++) {
      const kid = child('big', dir, String(30 * 1024 * 1024));
      await kid.waitFor('START');
      await new Promise((r) => setTimeout(r, round * 40));
      kid.proc.kill('SIGKILL');
      await kid.done;
      const text = readFileSync(path.join(dir, 'd', `${H1}.json`), 'utf8');
      const parsed = JSON.parse(text) as { justification: { version: string; pad?: string } };
      expect(['old', 'new']).toContain(parsed.justification.version);
      if (parsed.justification.version === 'new') expect(parsed.justification.pad).toHaveLength(30 * 1024 * 1024);
      seen.add(parsed.justification.version);
      const got = await store.get('d', H1);
      expect(got === undefined || ['old', 'new'].includes((got.justification as { version: string }).version)).toBe(true);
    }
    expect(seen.has('old')).toBe(true);
  });
});

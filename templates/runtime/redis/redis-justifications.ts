/**
 * The reflection gate's justifications in Redis, shared by every instance with the same
 * `<PREFIX>_REDIS_URL` and `<PREFIX>_REDIS_PREFIX`: a justification persisted through any instance
 * satisfies the gate on all of them at once.
 *
 * One string key per justification, `<prefix>:justification:<domain>:<hash>`, holding the same
 * JSON record the file store writes. The same checks as the file store (reflection-store.ts):
 * declared domain and 64-hex hash before Redis is asked, the size cap on write, and on read a
 * record that is not JSON, names another key or is too big counts as absent. A write is one `SET`
 * (atomic: readers see the old record or the new one). Keys do not expire: a justification lasts
 * as long as a file would. What a hint was issued for (tool, prompt, redacted arguments) is kept
 * under `<prefix>:hint:<domain>:<hash>` for the hint's lifetime, so that a persist through another
 * instance records them as the issuing instance would.
 *
 * A failed command (Redis down, past its timeout) throws `SharedStateError` naming the cause: the
 * gate answers the call with an `isError` saying so (fail closed) instead of a new hint.
 *
 * This file is copied verbatim into every generated project; it is loaded only when the URL is set.
 */

import type { IssuedHint, JustificationRecord, JustificationStoreOptions, Justifications } from '../reflection/reflection-store.js';
import {
  asIssuedHint,
  checkKey,
  checkSize,
  DEFAULT_MAX_JUSTIFICATION_BYTES,
  isValidDomainName,
  parseRecord,
  recordText,
  StoreError,
} from '../reflection/reflection-store.js';
import type { SharedRedis } from './redis.js';
import { unavailable } from './redis.js';

/** Largest remembered hint read back, in bytes. */
const MAX_HINT_BYTES = 64 * 1024;

/** Justifications in Redis (module comment). */
export class RedisJustifications implements Justifications {
  readonly maxJustificationBytes: number;
  readonly #redis: SharedRedis;
  readonly #domains: ReadonlySet<string>;

  constructor(redis: SharedRedis, domains: Iterable<string>, opts: JustificationStoreOptions = {}) {
    this.#redis = redis;
    this.#domains = new Set(domains);
    for (const d of this.#domains)
      if (!isValidDomainName(d)) throw new StoreError('domain', `Invalid reflection domain name ${JSON.stringify(d)}: use 1-64 of A-Z a-z 0-9 _ . -`);
    this.maxJustificationBytes = opts.maxJustificationBytes ?? DEFAULT_MAX_JUSTIFICATION_BYTES;
  }

  hasDomain(domain: unknown): domain is string {
    return isValidDomainName(domain) && this.#domains.has(domain);
  }

  /** The key of (domain, hash); throws `StoreError` for an undeclared domain or a malformed hash. */
  keyFor(domain: string, hash: string): string {
    checkKey(this.#domains, domain, hash);
    return this.#redis.key('justification', domain, hash);
  }

  async get(domain: string, hash: string): Promise<JustificationRecord | undefined> {
    const key = this.keyFor(domain, hash);
    let text: string | null;
    try {
      text = await this.#redis.client.get(key);
    } catch (err) {
      throw unavailable(this.#redis.settings, err);
    }
    return text === null ? undefined : parseRecord(text, domain, hash);
  }

  async put(domain: string, hash: string, record: Omit<JustificationRecord, 'hash' | 'domain'>): Promise<string> {
    const key = this.keyFor(domain, hash);
    checkSize(record.justification, this.maxJustificationBytes);
    try {
      await this.#redis.client.set(key, recordText(domain, hash, record));
    } catch (err) {
      throw unavailable(this.#redis.settings, err);
    }
    return `redis:${key}`;
  }

  async rememberHint(domain: string, hash: string, issued: IssuedHint, ttlMs: number): Promise<void> {
    checkKey(this.#domains, domain, hash);
    try {
      await this.#redis.client.set(this.#redis.key('hint', domain, hash), JSON.stringify(issued), 'PX', Math.max(1, Math.floor(ttlMs)));
    } catch (err) {
      throw unavailable(this.#redis.settings, err);
    }
  }

  async recallHint(domain: string, hash: string): Promise<IssuedHint | undefined> {
    checkKey(this.#domains, domain, hash);
    let text: string | null;
    try {
      text = await this.#redis.client.get(this.#redis.key('hint', domain, hash));
    } catch (err) {
      throw unavailable(this.#redis.settings, err);
    }
    if (text === null || text.length > MAX_HINT_BYTES) return undefined;
    try {
      return asIssuedHint(JSON.parse(text));
    } catch {
      return undefined;
    }
  }
}

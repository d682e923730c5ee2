/**
 * Whole results kept for a while, for results that had to be cut and whose API does not page:
 * the cut result links to `mcpgen://results/<id>` (a `resource_link` content block), and the same
 * client reads the whole of it with `resources/read`.
 *
 * Bounded: an entry is at most {@link MAX_ENTRY_BYTES} of JSON, all entries together at most
 * {@link MAX_STORE_BYTES} (the oldest go first), each for {@link KEEP_MS}. An entry belongs to the
 * client identity whose call made it: another identity gets "not found", as for an id that never
 * was, so nothing tells it the entry exists. Per server process (instances behind a load balancer
 * do not share it).
 *
 * This file is copied verbatim into every generated project.
 */
import { randomUUID } from 'node:crypto';

/** URI prefix of kept results. */
export const RESULT_URI_PREFIX = 'mcpgen://results/';
/** Largest result kept, in bytes of JSON. */
export const MAX_ENTRY_BYTES = 4 * 1024 * 1024;
/** Most bytes all kept results take together. */
export const MAX_STORE_BYTES = 32 * 1024 * 1024;
/** How long a result is kept, in milliseconds. */
export const KEEP_MS = 10 * 60 * 1000;

type Entry = { readonly identity: string; readonly text: string; readonly bytes: number; readonly expires: number; readonly tool: string };

/** Kept results of one server process, shared by its instances. */
export class ResultStore {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  constructor(private readonly now: () => number = Date.now) {}

  /** Keeps `text` (JSON) for `identity`; its URI, or `undefined` when it is too large to keep. */
  keep(identity: string, tool: string, text: string): string | undefined {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > MAX_ENTRY_BYTES) return undefined;
    this.#expire();
    // the oldest first (a Map iterates in insertion order)
    for (const [id, e] of this.#entries) {
      if (this.#bytes + bytes <= MAX_STORE_BYTES) break;
      this.#entries.delete(id);
      this.#bytes -= e.bytes;
    }
    const id = randomUUID();
    this.#entries.set(id, { identity, text, bytes, expires: this.now() + KEEP_MS, tool });
    this.#bytes += bytes;
    return `${RESULT_URI_PREFIX}${id}`;
  }

  /** The kept result at `uri` for `identity`, or `undefined` (unknown, expired, or another identity's). */
  read(uri: string, identity: string): { text: string; tool: string } | undefined {
    if (!uri.startsWith(RESULT_URI_PREFIX)) return undefined;
    this.#expire();
    const e = this.#entries.get(uri.slice(RESULT_URI_PREFIX.length));
    return e !== undefined && e.identity === identity ? { text: e.text, tool: e.tool } : undefined;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  #expire(): void {
    const t = this.now();
    for (const [id, e] of this.#entries) {
      if (e.expires > t) continue;
      this.#entries.delete(id);
      this.#bytes -= e.bytes;
    }
  }
}

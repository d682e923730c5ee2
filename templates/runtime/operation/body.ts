/**
 * Reading an HTTP response body within a byte limit, and telling text from binary.
 */

import { isJsonMedia, mediaType } from '../core/media-type.js';
import type { InFlightShare } from './in-flight.js';
import { InFlightLimitError } from './in-flight.js';

/** A response body read up to a limit. */
export type BoundedBody = {
  /** The bytes kept (at most the limit). */
  bytes: Uint8Array;
  /** True when the body was longer than the limit. */
  truncated: boolean;
  /** Full size when known (from `Content-Length` or by reading to the end). */
  totalBytes?: number;
  /** When the full size is unknown: how many bytes were seen before reading stopped. */
  seenBytes: number;
};

/**
 * Extra bytes read past the limit, only to learn the full size, when `Content-Length` is absent
 * (or the body is compressed). Kept small: every call that reads them costs time on the server's
 * only thread, and a compressed bomb would otherwise be inflated that far for nothing.
 */
export const DRAIN_BYTES = 1024 * 1024;

/** Declared body length, unless the body is content-encoded (the length is then the compressed size). */
function declaredLength(headers: Headers): number | undefined {
  if (headers.get('content-encoding')) return undefined;
  const raw = headers.get('content-length');
  if (raw === null || !/^\d+$/.test(raw.trim())) return undefined;
  return Number(raw.trim());
}

/**
 * `chunks` (`total` bytes in all) copied once into a plain `Uint8Array` of its own (never a
 * `Buffer`, never a view of a chunk: a stream may hand over a buffer it reuses, so even a single
 * chunk that is its whole buffer is copied).
 */
function joined(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/**
 * Reads `response`'s body, keeping at most `limit` bytes. Past the limit it stops at once when
 * `Content-Length` gives the full size or the body is compressed, else keeps counting (without
 * keeping) for up to `DRAIN_BYTES` more, then cancels the stream. Rejects if the stream fails (e.g. on abort).
 * With `share`, every byte kept is taken from the server's in-flight budget first; when the
 * budget is exhausted it stops reading and throws `InFlightLimitError`.
 */
export async function readBounded(response: Response, limit: number, share?: InFlightShare): Promise<BoundedBody> {
  const declared = declaredLength(response.headers);
  // a compressed body is inflated as it is read: past the limit, reading on would inflate a
  // compression bomb for nothing, so it stops there (its size stays unknown)
  const drain = response.headers.get('content-encoding') ? 0 : DRAIN_BYTES;
  if (!response.body) return { bytes: new Uint8Array(0), truncated: false, totalBytes: 0, seenBytes: 0 };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let seen = 0;
  let ended = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      ended = true;
      break;
    }
    seen += value.byteLength;
    if (kept < limit) {
      const take = Math.min(value.byteLength, limit - kept);
      if (share !== undefined && !share.take(take)) {
        reader.cancel().catch(() => undefined);
        throw new InFlightLimitError(share.budget.held);
      }
      chunks.push(take === value.byteLength ? value : value.subarray(0, take));
      kept += take;
    }
    if (seen > limit && (declared !== undefined || seen >= limit + drain)) break;
  }
  if (!ended) reader.cancel().catch(() => undefined);
  const bytes = joined(chunks, kept);
  const truncated = seen > limit;
  const body: BoundedBody = { bytes, truncated, seenBytes: seen };
  if (ended) body.totalBytes = seen;
  else if (declared !== undefined) body.totalBytes = Math.max(declared, seen);
  return body;
}

/** The marker appended to truncated text: `[truncated: showing first N of M bytes]`. */
export function truncationNote(body: BoundedBody): string {
  const of = body.totalBytes !== undefined ? `${body.totalBytes}` : `more than ${body.seenBytes}`;
  return `[truncated: showing first ${body.bytes.byteLength} of ${of} bytes]`;
}

/** How a response body is passed back. */
export type BodyKind = 'json' | 'text' | 'image' | 'binary';

const TEXTUAL =
  /^(text\/.*|application\/(xml|.*\+xml|x-www-form-urlencoded|javascript|ecmascript|x-javascript|yaml|x-yaml|.*\+yaml|x-ndjson|graphql|sql|csv)|image\/svg\+xml)$/;

/** Decides how to return a body from its `Content-Type`; sniffs UTF-8 when there is none. */
export function bodyKind(contentType: string | null, bytes: Uint8Array): BodyKind {
  const t = mediaType(contentType);
  if (isJsonMedia(t)) return 'json';
  if (TEXTUAL.test(t)) return 'text';
  if (t.startsWith('image/')) return 'image';
  if (t === '') return looksLikeText(bytes) ? 'text' : 'binary';
  return 'binary';
}

/** True when the bytes are valid UTF-8 without NUL characters (a partial last character is allowed). */
function looksLikeText(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Decodes body bytes as text in the `charset` of `contentType` (UTF-8 by default). A truncated
 * body drops a trailing partial character instead of showing a replacement character.
 */
export function decodeText(bytes: Uint8Array, contentType: string | null, truncated: boolean): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset ?? 'utf-8');
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(bytes, { stream: truncated });
}

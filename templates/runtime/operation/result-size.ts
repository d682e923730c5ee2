/**
 * The size of a tool result on the wire. The response limit counts the bytes of a body, but a
 * result carries the body as JSON-encoded text, and often a second time as `structuredContent`:
 * a 1 MB body of control characters becomes 6 MB of `\u0000` escapes, and a body of numbers
 * written as `1e20` grows fivefold when re-encoded. So every result is measured once encoded and
 * bounded by {@link resultLimit}: `structuredContent` larger than the response limit is left out
 * (the text still has the body), and text that is still too long is cut, with a note.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';

/** Room for the result's own keys and the notes added here, beyond twice the response limit. */
export const ENVELOPE_BYTES = 4096;

/** Most bytes a result takes once encoded: text and structured content, each within the response limit, and the envelope. */
export function resultLimit(maxResponseBytes: number): number {
  return 2 * maxResponseBytes + ENVELOPE_BYTES;
}

/** Bytes of `value` encoded as JSON (UTF-8). */
export function encodedBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/** Bytes one UTF-16 code unit (or pair, `pair`) takes inside a JSON string. */
function unitBytes(code: number, pair: boolean): number {
  if (pair) return 4;
  if (code === 0x22 || code === 0x5c) return 2;
  if (code < 0x20) return code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 2 : 6;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  // a lone surrogate is written as a \u escape
  if (code >= 0xd800 && code <= 0xdfff) return 6;
  return 3;
}

/** Bytes `text` takes as a JSON string (without the quotes), counted without encoding it. */
export function jsonStringBytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
    const pair = code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
    bytes += unitBytes(code, pair);
    if (pair) i++;
  }
  return bytes;
}

/** Bytes a content block takes once encoded, counting its text or data (what can be large) exactly. */
function blockBytes(block: CallToolResult['content'][number]): number {
  if (block.type === 'text') return jsonStringBytes(block.text) + 32;
  if (block.type === 'image' || block.type === 'audio') return block.data.length + jsonStringBytes(block.mimeType) + 48;
  return encodedBytes(block);
}

/** The longest start of `text` whose JSON string encoding (without the quotes) takes at most `max` bytes. */
export function cutToEncoded(text: string, max: number): string {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
    const pair = code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
    const n = unitBytes(code, pair);
    if (bytes + n > max) break;
    bytes += n;
    i += pair ? 2 : 1;
  }
  return text.slice(0, i);
}

/** How a result's structured content may be replaced when it is too large. */
export type StructuredFallback =
  /** The tool's output schema requires nothing: `{}` (or `{status}` for wrapped results) still fits it. */
  | { readonly kind: 'minimal'; readonly wrapped: boolean }
  /** A strict schema: a result without its structured content becomes an error. */
  | { readonly kind: 'strict' };

/**
 * `result` made to take at most {@link resultLimit} bytes once encoded: structured content over
 * `maxResponseBytes` is replaced (see {@link StructuredFallback}), then text blocks are cut to the
 * room left, each with a note; a result that still does not fit (large binary content) becomes an
 * error saying so. A result that fits is returned as it is.
 */
export function boundResult(result: CallToolResult, maxResponseBytes: number, fallback: StructuredFallback): CallToolResult {
  const limit = resultLimit(maxResponseBytes);
  const structuredBytes = result.structuredContent === undefined ? 0 : encodedBytes(result.structuredContent);
  const total = (): number => result.content.reduce((n, c) => n + blockBytes(c), 0) + structuredBytes + 64;
  if (total() <= limit) return result;
  let out: CallToolResult = { ...result, content: [...result.content] };
  const notes: string[] = [];
  if (out.structuredContent !== undefined) {
    const size = structuredBytes;
    if (size > maxResponseBytes) {
      const note = `[structuredContent left out: it takes ${size} bytes once encoded, more than the limit of ${maxResponseBytes}; the text has the response]`;
      const previous = out.structuredContent as { status?: unknown } | null;
      delete out.structuredContent;
      if (fallback.kind === 'strict' || out.isError === true) out.isError = true;
      else out.structuredContent = fallback.wrapped && typeof previous?.status === 'number' ? { status: previous.status } : {};
      notes.push(note);
    }
  }
  const texts = out.content.filter((c) => c.type === 'text').length;
  if (texts > 0) {
    const others = encodedBytes({ ...out, content: out.content.filter((c) => c.type !== 'text') });
    const share = Math.max(0, Math.floor((limit - ENVELOPE_BYTES / 2 - others) / texts));
    out.content = out.content.map((c) => {
      if (c.type !== 'text') return c;
      const size = jsonStringBytes(c.text);
      if (size <= share) return c;
      const kept = cutToEncoded(c.text, share);
      return {
        ...c,
        text: `${kept}\n[truncated: the text takes ${size} bytes once encoded as JSON, more than the limit; showing the first ${kept.length} of ${c.text.length} characters]`,
      };
    });
  }
  if (notes.length > 0) out.content = [...out.content, { type: 'text', text: notes.join('\n') }];
  if (encodedBytes(out) > limit) {
    out = {
      isError: true,
      content: [
        {
          type: 'text',
          text: `The result takes ${total()} bytes once encoded, more than the limit of ${limit} (twice the response limit of ${maxResponseBytes} bytes, and room for the envelope); it is left out`,
        },
      ],
    };
  }
  return out;
}

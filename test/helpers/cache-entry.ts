/**
 * Reading and forging build-cache entries (src/core/cache-entry.ts): a seal line (the length and
 * sha256 of what follows), the JSON header's line, the body.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cacheEntryBytes } from '../../src/core/cache-entry.js';

/** The header and body of an entry file, its seal not checked. */
export function entryParts(file: string): { header: Record<string, unknown>; body: string } {
  const raw = readFileSync(file, 'utf8');
  const rest = raw.slice(raw.indexOf('\n') + 1);
  const nl = rest.indexOf('\n');
  return { header: JSON.parse(rest.slice(0, nl)) as Record<string, unknown>, body: rest.slice(nl + 1) };
}

/** Writes an entry the cache cannot tell from a real one: `header` and `body` sealed. */
export function writeSealed(file: string, header: Record<string, unknown>, body: string): void {
  writeFileSync(file, cacheEntryBytes(header, body));
}

/** The entry's text with `from` replaced by `to` in its header's line only, its seal left as it was (a header that still parses). */
export function alterHeader(file: string, from: string | RegExp, to: string): string {
  const raw = readFileSync(file, 'utf8');
  const sealEnd = raw.indexOf('\n');
  const headerEnd = raw.indexOf('\n', sealEnd + 1);
  const line = raw.slice(sealEnd + 1, headerEnd);
  const altered = line.replace(from, to);
  if (altered === line) throw new Error(`the header of ${file} has no ${String(from)}`);
  JSON.parse(altered);
  return raw.slice(0, sealEnd + 1) + altered + raw.slice(headerEnd);
}

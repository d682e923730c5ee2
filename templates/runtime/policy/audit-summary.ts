/**
 * What a tool call's arguments become in an audit line: summarised and redacted once, when the
 * event is recorded — configured field names at any depth (case-insensitive) and every secret
 * value inside strings become `"[redacted]"`, and what is past {@link AUDIT_ARGUMENT_BYTES} bytes
 * (or 16 levels deep) is left out ({@link summarize}); and the values of redacted fields, to hide
 * them in error texts too ({@link fieldValues}).
 *
 * This file is copied into every generated project that has `policy.audit`.
 */
import { scrub } from '../operation/auth.js';

const REDACTED = '[redacted]';
const MAX_DEPTH = 64;
/** Most bytes of JSON an event's `arguments` take in its line; the rest is left out (and said so). */
export const AUDIT_ARGUMENT_BYTES = 4096;
/** Deepest level of arguments written to a line; deeper values are `"[too deep]"`. */
const SUMMARY_DEPTH = 16;

/** A summary of arguments for an audit line: the redacted value, and whether part of it was left out. */
export type ArgumentSummary = { readonly value: unknown; readonly cut: boolean };

/**
 * A redacted copy of `value` of at most about `cap` bytes of JSON, made in one walk that stops
 * there: like {@link redact} (fields by name, secrets inside strings and keys), but a string
 * longer than what is left is shortened (`…[+N characters]`), an object or array that does not
 * fit ends with a `"…"` entry counting what was left out, and nesting past 16 levels is
 * `"[too deep]"`. Its cost is bounded by `cap`, whatever the size of `value`.
 */
export function summarize(value: unknown, fields: readonly string[], secrets: readonly string[], cap: number = AUDIT_ARGUMENT_BYTES): ArgumentSummary {
  const names = new Set(fields.map((f) => f.toLowerCase()));
  // a secret that straddles the cut is scrubbed whole before the cut is made
  const longest = secrets.reduce((n, s) => Math.max(n, s.length), 0);
  let left = cap;
  let cut = false;
  const text = (s: string): string => {
    const room = Math.max(16, left - 2);
    if (s.length <= room) {
      const out = scrub(s, secrets);
      left -= out.length + 2;
      return out;
    }
    cut = true;
    const out = `${scrub(s.slice(0, room + longest), secrets).slice(0, room)}…[+${s.length - room} characters]`;
    left -= out.length + 2;
    return out;
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return text(v);
    if (typeof v === 'bigint') return text(v.toString());
    if (v === null || typeof v !== 'object') {
      left -= typeof v === 'number' ? String(v).length : 5;
      return v;
    }
    if (depth >= SUMMARY_DEPTH) {
      cut = true;
      left -= 12;
      return '[too deep]';
    }
    left -= 2;
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (let i = 0; i < v.length; i++) {
        if (left <= 0) {
          cut = true;
          out.push(`…[+${v.length - i} items]`);
          break;
        }
        out.push(walk(v[i], depth + 1));
        left -= 1;
      }
      return out;
    }
    const keys = Object.keys(v);
    const out: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      if (left <= 0) {
        cut = true;
        out['…'] = `+${keys.length - i} keys`;
        break;
      }
      const k = keys[i]!;
      const key = text(k);
      // defineProperty: a "__proto__" key stays a key
      Object.defineProperty(out, key, {
        value: names.has(k.toLowerCase()) ? ((left -= REDACTED.length + 2), REDACTED) : walk((v as Record<string, unknown>)[k], depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      left -= 2;
    }
    return out;
  };
  const summary = walk(value, 0);
  return { value: summary, cut };
}

/** Every string and number under `value` (a redacted field's value may be an array or object). */
function leaves(value: unknown, out: string[], depth: number): void {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint') out.push(String(value));
  else if (value !== null && typeof value === 'object' && depth <= MAX_DEPTH) for (const v of Object.values(value)) leaves(v, out, depth + 1);
}

/** String values of `fields` anywhere in `value` (to scrub them from error texts too). */
export function fieldValues(value: unknown, fields: ReadonlySet<string>, out: string[] = [], depth = 0): string[] {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return out;
  for (const [k, v] of Object.entries(value)) {
    if (fields.has(k.toLowerCase())) leaves(v, out, depth + 1);
    else fieldValues(v, fields, out, depth + 1);
  }
  return out;
}

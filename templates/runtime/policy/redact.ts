/**
 * Redaction of recorded values: field names (at any depth, case-insensitive) and secret values
 * (inside strings and keys) become `"[redacted]"`. Used by the audit trail and the reflection
 * gate's justification records, so both hide the same things.
 *
 * This file is copied into every generated project that keeps an audit trail or a reflection gate.
 */
import { scrub } from '../operation/auth.js';

const MAX_REDACT_DEPTH = 64;

/**
 * A copy of `value` with the values of `fields` (names matched case-insensitively, at any depth)
 * replaced by `"[redacted]"` and every secret inside strings (and keys) too. Never mutates; a
 * cycle becomes `"[circular]"`, nesting past 64 levels `"[too deep]"`.
 */
export function redact(value: unknown, fields: readonly string[], secrets: readonly string[]): unknown {
  const names = new Set(fields.map((f) => f.toLowerCase()));
  const hide = (s: string) => scrub(s, secrets);
  const seen = new Set<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return hide(v);
    if (typeof v === 'bigint') return hide(v.toString());
    if (v === null || typeof v !== 'object') return v;
    if (seen.has(v)) return '[circular]';
    if (depth >= MAX_REDACT_DEPTH) return '[too deep]';
    const json = (v as { toJSON?: unknown }).toJSON;
    if (typeof json === 'function' && !Array.isArray(v)) return walk(json.call(v), depth + 1);
    seen.add(v);
    try {
      if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
      // fromEntries defines own properties: a "__proto__" key stays a key
      return Object.fromEntries(Object.entries(v).map(([k, item]) => [hide(k), names.has(k.toLowerCase()) ? '[redacted]' : walk(item, depth + 1)]));
    } finally {
      seen.delete(v);
    }
  };
  return walk(value, 0);
}

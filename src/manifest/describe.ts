/**
 * Wording helpers for manifest diagnostics: how to name a place in the manifest, a value, a
 * schema, and which allowed key a typo was meant to be.
 */
import { parsePointer } from '../core/diagnostics.js';
import { editDistance } from '../core/suggest.js';
import { isRecord, resolveRef, type SchemaNode } from './schema.js';

/**
 * How a diagnostic names the value at a pointer: `maxToolNameLength`, `include[1].tag`,
 * `overrides[GET /pets].name`; the root is `the manifest`.
 */
export function subject(ptr: string): string {
  const tokens = parsePointer(ptr);
  if (tokens.length === 0) return 'the manifest';
  let out = '';
  for (const t of tokens) {
    if (/^(0|[1-9][0-9]*)$/.test(t) && out !== '') out += `[${t}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(t)) out += out === '' ? t : `.${t}`;
    else out += `[${t}]`;
  }
  return `"${out}"`;
}

/** JSON type name of a value as JSON Schema spells it (`integer` for whole numbers). */
export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** `string "abc"`, `number 5`, `boolean true`, `null`, `array`, `object` — for "got …". */
export function describeValue(v: unknown): string {
  const t = jsonType(v);
  if (t === 'string') return `string ${quote(v as string)}`;
  if (t === 'integer' || t === 'number') return `number ${String(v)}`;
  if (t === 'boolean') return `boolean ${String(v)}`;
  return t;
}

/** A string value in double quotes, shortened when long. */
export function quote(s: string): string {
  return JSON.stringify(s.length > 60 ? `${s.slice(0, 57)}…` : s);
}

/** True when a value's type is one the schema admits (ignoring every other constraint). */
export function typeMatches(schema: unknown, v: unknown): boolean {
  const s = resolveRef(schema);
  if (!s) return true;
  const alternatives = s.anyOf ?? s.oneOf;
  if (Array.isArray(alternatives)) return alternatives.some((a) => typeMatches(a, v));
  const t = jsonType(v);
  const fits = (want: unknown) => want === t || (want === 'number' && t === 'integer');
  if (Array.isArray(s.enum)) return s.enum.some((e) => jsonType(e) === t || (t === 'number' && jsonType(e) === 'integer'));
  if (s.const !== undefined) return jsonType(s.const) === t;
  if (typeof s.type === 'string') return fits(s.type);
  if (Array.isArray(s.type)) return s.type.some(fits);
  return true;
}

const A: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  null: 'null',
  object: 'a mapping',
  array: 'a list',
};
const PLURAL: Record<string, string> = {
  string: 'strings',
  integer: 'integers',
  number: 'numbers',
  boolean: 'booleans',
  object: 'mappings',
  array: 'lists',
};

/** Natural-language description of what a schema accepts: `a string or a list of strings`. */
export function describeSchema(schema: unknown): string {
  const s = resolveRef(schema);
  if (!s) return 'a value';
  const alternatives = s.anyOf ?? s.oneOf;
  if (Array.isArray(alternatives)) {
    const resolved = alternatives.map((a) => resolveRef(a));
    const parts = resolved.map((alt) => {
      const items = alt && alt.type === 'array' ? resolveRef(alt.items) : undefined;
      return items && resolved.includes(items) ? 'a list of them' : describeSchema(alt);
    });
    return parts.some((p) => p.includes(', ')) ? parts.join(', or ') : parts.join(' or ');
  }
  if (Array.isArray(s.enum)) return oneOf(s.enum);
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.type === 'array') {
    const items = resolveRef(s.items);
    const t = typeof items?.type === 'string' ? items.type : undefined;
    return t && PLURAL[t] ? `a list of ${PLURAL[t]}` : 'a list';
  }
  if (typeof s.type === 'string') return A[s.type] ?? s.type;
  return 'a value';
}

/** `one of "get", "put", …` for an enum. */
export function oneOf(values: readonly unknown[]): string {
  return `one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
}

/** Property names a schema object allows (in schema order). */
export function allowedKeys(schema: SchemaNode | undefined): string[] {
  const s = resolveRef(schema);
  return s && isRecord(s.properties) ? Object.keys(s.properties) : [];
}

/**
 * The candidate a typo most likely meant: a case-insensitive match, else the closest within an
 * optimal-string-alignment distance of 2 (ties go to the earlier candidate).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  const exact = candidates.find((c) => c.toLowerCase() === lower);
  if (exact !== undefined) return exact;
  let best: string | undefined;
  let bestDistance = 3;
  for (const c of candidates) {
    const d = editDistance(lower, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

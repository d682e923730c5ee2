/**
 * JSON Schema → TypeScript type text, for the argument and result types of each tool.
 *
 * Every name and literal goes through `safe.ts`. Types are kept deliberately loose where JSON
 * Schema says more than TypeScript can (formats, patterns, bounds): the runtime validator, not
 * the type, enforces those. Very deep schemas degrade to `unknown` rather than blow up tsc.
 */

import { isObject } from '../../core/json.js';
import { docComment, propKey, tsLiteral } from '../safe.js';

/** Context of one conversion. */
export type TypeContext = {
  /** TS name of the alias that stands for `#/$defs/<name>`. */
  defType: (defName: string) => string;
};

const MAX_DEPTH = 12;

/** The `$defs` of a schema, when it has any. */
export function defsOf(schema: Record<string, unknown>): Record<string, unknown> | undefined {
  const defs = schema.$defs;
  return typeof defs === 'object' && defs !== null && !Array.isArray(defs) ? (defs as Record<string, unknown>) : undefined;
}

/** Options of {@link declareSchemaType}. */
export type DeclareTypeOptions = {
  /** Exported type name (an identifier decided in the IR). */
  name: string;
  schema: Record<string, unknown>;
  /** Doc comment text. */
  doc: string;
  /**
   * TS type names of the schema's `$defs` as the IR decided them (`IrDefTypes`): `#/$defs/…`
   * references become these names, and unless `shared`, every own definition is declared too.
   */
  defTypes?: { shared: boolean; names: Readonly<Record<string, string>> };
};

/** `export type <name> = …;` for a schema, plus one exported alias per own `$defs` entry. */
export function declareSchemaType(opts: DeclareTypeOptions): string {
  const { name, schema, defTypes } = opts;
  const names = defTypes?.names ?? {};
  const ctx: TypeContext = { defType: (d) => (Object.hasOwn(names, d) ? names[d]! : 'unknown') };
  let out = `${docComment(opts.doc)}export type ${name} = ${schemaType(schema, ctx)};\n`;
  const defs = defTypes?.shared ? undefined : defsOf(schema);
  for (const [d, body] of Object.entries(defs ?? {})) {
    if (!Object.hasOwn(names, d)) throw new Error(`the IR gives no type name for $defs entry ${JSON.stringify(d)} of ${name}`);
    out += `\nexport type ${names[d]} = ${schemaType(body, ctx)};\n`;
  }
  return out;
}

/** The TS type for a JSON Schema. `indent` is the indentation of the line the type starts on. */
export function schemaType(schema: unknown, ctx: TypeContext, indent = '', depth = 0): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (!isObject(schema) || depth > MAX_DEPTH) return 'unknown';
  const s = schema;
  if (typeof s.$ref === 'string') {
    return s.$ref.startsWith('#/$defs/') ? ctx.defType(decodeURIComponent(s.$ref.slice(8)).replace(/~1/g, '/').replace(/~0/g, '~')) : 'unknown';
  }
  if ('const' in s) return literal(s.const);
  if (Array.isArray(s.enum)) return union(s.enum.map(literal));
  const parts: string[] = [];
  const base = baseType(s, ctx, indent, depth);
  if (base !== undefined) parts.push(base);
  if (Array.isArray(s.allOf) && s.allOf.length) parts.push(...s.allOf.map((x) => paren(schemaType(x, ctx, indent, depth + 1))));
  const alts = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (alts && alts.length) parts.push(paren(union(alts.map((x) => schemaType(x, ctx, indent, depth + 1)))));
  if (parts.length === 0) return 'unknown';
  const filtered = parts.length > 1 ? parts.filter((p) => p !== 'unknown') : parts;
  return filtered.length === 0 ? 'unknown' : filtered.join(' & ');
}

function baseType(s: Record<string, unknown>, ctx: TypeContext, indent: string, depth: number): string | undefined {
  const types = Array.isArray(s.type) ? (s.type as unknown[]).filter((t): t is string => typeof t === 'string') : typeof s.type === 'string' ? [s.type] : [];
  if (types.length === 0) {
    if (isObject(s.properties) || s.additionalProperties !== undefined) return objectType(s, ctx, indent, depth);
    if (s.items !== undefined || Array.isArray(s.prefixItems)) return arrayType(s, ctx, indent, depth);
    return undefined;
  }
  return union(
    types.map((t) => {
      switch (t) {
        case 'string':
          return 'string';
        case 'number':
        case 'integer':
          return 'number';
        case 'boolean':
          return 'boolean';
        case 'null':
          return 'null';
        case 'array':
          return arrayType(s, ctx, indent, depth);
        case 'object':
          return objectType(s, ctx, indent, depth);
        default:
          return 'unknown';
      }
    }),
  );
}

function arrayType(s: Record<string, unknown>, ctx: TypeContext, indent: string, depth: number): string {
  if (Array.isArray(s.prefixItems) && s.prefixItems.length) {
    const items = s.prefixItems.map((x) => schemaType(x, ctx, indent, depth + 1));
    return `[${items.map((t) => `${t}?`).join(', ')}, ...unknown[]]`;
  }
  return `Array<${schemaType(s.items, ctx, indent, depth + 1)}>`;
}

function objectType(s: Record<string, unknown>, ctx: TypeContext, indent: string, depth: number): string {
  const props = isObject(s.properties) ? s.properties : {};
  const required = new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : []);
  const inner = indent + '  ';
  const lines: string[] = [];
  for (const [name, sub] of Object.entries(props)) {
    const doc = isObject(sub) && typeof sub.description === 'string' ? docComment(sub.description, inner) : '';
    lines.push(`${doc}${inner}${propKey(name)}${required.has(name) ? '' : '?'}: ${schemaType(sub, ctx, inner, depth + 1)};\n`);
  }
  // properties listed as required without a schema still have to be present
  for (const name of required) if (!(name in props)) lines.push(`${inner}${propKey(name)}: unknown;\n`);
  if (s.additionalProperties !== false) lines.push(`${inner}[key: string]: unknown;\n`);
  if (lines.length === 0) return 'Record<string, never>';
  return `{\n${lines.join('')}${indent}}`;
}

function literal(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string' || typeof v === 'boolean') return tsLiteral(v);
  if (typeof v === 'number') return Number.isFinite(v) ? (v < 0 ? `(${String(v)})` : String(v)) : 'number';
  return 'unknown';
}

function union(types: string[]): string {
  const uniq = [...new Set(types)];
  if (uniq.includes('unknown')) return 'unknown';
  return uniq.length === 0 ? 'never' : uniq.join(' | ');
}

function paren(t: string): string {
  return /^[A-Za-z0-9_$<>[\]"., ]+$/.test(t) && !t.includes(' | ') ? t : `(${t})`;
}

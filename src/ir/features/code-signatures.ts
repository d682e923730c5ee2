/**
 * Code mode's signatures (manifest `discovery: code`): for each operation tool, one compact line of
 * TypeScript, `api.<name>(args: {…}): Promise<…>`, which `search_tools` and `describe_tool` give
 * the model to write code against. Built from the same JSON Schemas as the typed client `ctx.api`
 * (the tool's input schema, its published output schema) by the same mapping as
 * emit/ts/schema-type.ts (integer ⇒ number, enum ⇒ a union of literals, `$defs` references…),
 * kept short: no doc comments, long unions and deep or wide objects summarised, so that one
 * signature stays a few hundred characters even for GitHub's largest results.
 */
import { codeName } from '../../../templates/runtime/code/code-mode-name.js';
import { isObject } from '../../core/json.js';
import type { IrServer } from '../types.js';

/** Bounds of one signature. */
const LIMITS = {
  /** Object nesting rendered in the arguments / the result; deeper is `object`. */
  inputDepth: 3,
  outputDepth: 3,
  /** Properties of an object shown; more end in `…` as an index signature. */
  inputProps: 40,
  outputProps: 12,
  nestedOutputProps: 10,
  /** Literals of an enum shown; more: their base type. */
  enumValues: 12,
  /** Characters of a whole signature; longer: the result type is cut to `unknown`. */
  chars: 1500,
} as const;

/** A property key as TypeScript writes it. */
function key(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

/** One literal type. */
function literal(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 59)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return 'unknown';
}

type Ctx = {
  readonly defs: Record<string, unknown>;
  readonly depth: number;
  readonly props: number;
  readonly nestedProps: number;
  readonly seen: ReadonlySet<string>;
  readonly omit?: (key: string) => boolean;
};

/** The compact TypeScript type of a schema. */
function typeOf(schema: unknown, ctx: Ctx, level: number): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (!isObject(schema)) return 'unknown';
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.startsWith('#/$defs/') ? decodeURIComponent(schema.$ref.slice(8)).replace(/~1/g, '/').replace(/~0/g, '~') : undefined;
    if (name === undefined || !Object.hasOwn(ctx.defs, name) || ctx.seen.has(name)) return 'object';
    return typeOf(ctx.defs[name], { ...ctx, seen: new Set([...ctx.seen, name]) }, level);
  }
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.slice(0, LIMITS.enumValues + 1);
    if (values.length > LIMITS.enumValues) return [...new Set(schema.enum.map((v) => (v === null ? 'null' : typeof v)))].join(' | ');
    return [...new Set(values.map(literal))].join(' | ');
  }
  const alts = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (alts && alts.length > 0) {
    const parts = [...new Set(alts.slice(0, 4).map((a) => typeOf(a, ctx, level)))];
    return parts.includes('unknown') ? 'unknown' : parts.map((p) => (p.includes(' ') && !p.startsWith('{') ? `(${p})` : p)).join(' | ');
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    // merged as one object when every part is one (the usual shape), else the first part
    const merged: Record<string, unknown> = { type: 'object', properties: {}, required: [] as string[] };
    for (const part of schema.allOf) {
      const p = isObject(part) && typeof part.$ref === 'string' ? resolve(part, ctx) : part;
      if (!isObject(p)) continue;
      Object.assign(merged.properties as object, isObject(p.properties) ? p.properties : {});
      if (Array.isArray(p.required)) (merged.required as string[]).push(...p.required.filter((r): r is string => typeof r === 'string'));
    }
    return typeOf(merged, ctx, level);
  }
  const types = Array.isArray(schema.type)
    ? schema.type.filter((t): t is string => typeof t === 'string')
    : typeof schema.type === 'string'
      ? [schema.type]
      : [];
  if (types.length === 0) {
    if (isObject(schema.properties)) types.push('object');
    else if (schema.items !== undefined) types.push('array');
    else return 'unknown';
  }
  return types
    .map((t) => {
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
        case 'array': {
          const item = typeOf(schema.items, ctx, level + 1);
          return /^[A-Za-z0-9_"]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
        }
        case 'object':
          return objectOf(schema, ctx, level);
        default:
          return 'unknown';
      }
    })
    .join(' | ');
}

/** A `$ref` schema resolved against `$defs` (one step). */
function resolve(schema: Record<string, unknown>, ctx: Ctx): unknown {
  const ref = schema.$ref as string;
  const name = ref.startsWith('#/$defs/') ? decodeURIComponent(ref.slice(8)).replace(/~1/g, '/').replace(/~0/g, '~') : undefined;
  return name !== undefined && Object.hasOwn(ctx.defs, name) ? ctx.defs[name] : undefined;
}

function objectOf(schema: Record<string, unknown>, ctx: Ctx, level: number): string {
  if (level >= ctx.depth) return 'object';
  // a result's keys that compaction drops (results.omit: `*_url`, `node_id`…) never reach the code
  const props = isObject(schema.properties) ? Object.entries(schema.properties).filter(([k]) => !ctx.omit?.(k)) : [];
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  if (props.length === 0) return schema.additionalProperties === false ? '{}' : 'Record<string, unknown>';
  // required properties first: they are what a call must give
  const ordered = [...props.filter(([k]) => required.has(k)), ...props.filter(([k]) => !required.has(k))];
  const max = level === 0 ? ctx.props : ctx.nestedProps;
  const shown = ordered.slice(0, max).map(([k, v]) => `${key(k)}${required.has(k) ? '' : '?'}: ${typeOf(v, ctx, level + 1)}`);
  if (ordered.length > max) shown.push(`/* +${ordered.length - max} more */ [k: string]: unknown`);
  return `{ ${shown.join('; ')} }`;
}

/**
 * The signature of one operation: `api.<codeName>(args: {…}): Promise<…>`. `wrapped`: the output
 * schema is the `{status, data}` wrapper of a result that is not always an object, whose `data` is
 * what code receives (code-mode.ts unwraps it).
 */
export function codeSignature(name: string, inputSchema: unknown, outputSchema: unknown, wrapped = false, omit: readonly string[] = []): string {
  const patterns = omit.map(
    (p) =>
      new RegExp(
        `^${p
          .split('*')
          .map((x) => x.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      ),
  );
  const omitted = (key: string) => patterns.some((re) => re.test(key));
  const defsOf = (s: unknown) => (isObject(s) && isObject(s.$defs) ? s.$defs : {});
  const input = typeOf(
    inputSchema,
    { defs: defsOf(inputSchema), depth: LIMITS.inputDepth, props: LIMITS.inputProps, nestedProps: LIMITS.inputProps, seen: new Set() },
    0,
  );
  const args = input === 'Record<string, unknown>' || input === '{}' || input === 'unknown' ? 'args?: {}' : `args: ${input}`;
  const head = `api.${codeName(name)}(${args})`;
  if (wrapped && isObject(outputSchema)) {
    const data = isObject(outputSchema.properties) ? outputSchema.properties.data : undefined;
    outputSchema = data === undefined ? undefined : { ...(isObject(data) ? data : {}), ...(isObject(outputSchema.$defs) ? { $defs: outputSchema.$defs } : {}) };
  }
  const output =
    outputSchema === undefined
      ? 'unknown'
      : typeOf(
          outputSchema,
          {
            defs: defsOf(outputSchema),
            depth: LIMITS.outputDepth,
            props: LIMITS.outputProps,
            nestedProps: LIMITS.nestedOutputProps,
            seen: new Set(),
            omit: omitted,
          },
          0,
        );
  const full = `${head}: Promise<${output}>`;
  return full.length <= LIMITS.chars ? full : `${head}: Promise<unknown>`;
}

/** Tool name ⇒ signature, for every operation tool of `ir`, in tool order. */
export function codeSignatures(ir: Pick<IrServer, 'tools' | 'results'>): Record<string, string> {
  const omit = ir.results.compact ? ir.results.omit : [];
  const out: Record<string, string> = {};
  for (const t of ir.tools)
    Object.defineProperty(out, t.name, {
      value: codeSignature(t.name, t.inputSchema, t.outputSchema, t.resultShape === 'wrapped', t.results?.compact === false ? [] : (t.results?.omit ?? omit)),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

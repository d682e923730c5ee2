/**
 * Argument and result validation against a tool's JSON Schemas (draft 2020-12) with Ajv.
 * Validators are compiled lazily, on a tool's first call, and cached: a server may carry
 * thousands of tools, and compiling them all at start-up would cost seconds. Before compiling a
 * schema Ajv checks it against the 2020-12 meta-schema; that check runs the meta-schema validator
 * precompiled at mcpgen's build (meta-validator.ts), so the first call does not compile it.
 */
import { createRequire } from 'node:module';
import type { Ajv2020, AnySchema, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { FormatsPlugin } from 'ajv-formats';
import { isRecord } from '../core/json-shapes.js';
import type { JsonSchema, OperationTool } from '../core/types.js';
import * as metaValidator from '../generated/meta-validator.gen.js';
import { AJV_OPTIONS } from './validate-options.js';

export { MULTIPLE_OF_PRECISION } from './validate-options.js';

/** The fields of a tool (operation or extra) validation reads. */
export type ValidatedTool = Pick<OperationTool, 'name' | 'inputSchema' | 'outputSchema'>;

/** Most messages reported for one value; the rest are summarised. */
export const MAX_MESSAGES = 20;

// Ajv and its formats (CommonJS, ~40 ms of CPU to load) are required on first use — the warm-up
// (warm.ts), or a call before it — not when the server starts, so the first tools/list answer does
// not wait for them.
const require = createRequire(import.meta.url);

// ajv-formats is CommonJS: the module is the plugin function itself (which also carries `.default`).
type FormatsImport = FormatsPlugin | { readonly default: FormatsPlugin };

type MetaValidator = typeof metaValidator;

let ajv: Ajv2020 | undefined;

/** The shared Ajv instance (options in validate-options.ts), created on first use. */
function getAjv(): Ajv2020 {
  if (!ajv) {
    const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
    const formats = require('ajv-formats') as FormatsImport;
    const addFormats: FormatsPlugin = typeof formats === 'function' ? formats : formats.default;
    const instance = new Ajv(AJV_OPTIONS);
    addFormats(instance);
    usePrecompiledMetaSchema(instance, metaValidator);
    ajv = instance;
  }
  return ajv;
}

/**
 * Readies validation before the first call needs it: creates the Ajv instance and compiles one
 * small schema (Ajv's code generation, formats and the linear-time pattern engine load on first
 * use). No validator is cached: what a tool call compiles is unchanged.
 */
export function warmUpValidation(): void {
  getAjv().compile({ type: 'object', properties: { a: { type: 'string', pattern: '^a', format: 'date-time' }, b: { type: 'integer', multipleOf: 0.5 } } });
}

/**
 * Makes `instance.validateSchema` (which Ajv calls on every schema it compiles) check schemas
 * that use the default meta-schema with the precompiled validator, doing what Ajv's own method
 * does with it: `errors` set, and `schema is invalid: <errorsText>` thrown. Anything else (a
 * boolean schema, another or a malformed `$schema`) goes to Ajv's method unchanged.
 */
function usePrecompiledMetaSchema(instance: Ajv2020, { META_SCHEMA_ID, validateMetaSchema }: MetaValidator): void {
  const own = instance.validateSchema.bind(instance);
  instance.validateSchema = (schema: AnySchema, throwOrLogError?: boolean) => {
    if (typeof schema !== 'object' || schema === null || !(schema.$schema === undefined || schema.$schema === META_SCHEMA_ID))
      return own(schema, throwOrLogError);
    const valid = validateMetaSchema(schema);
    instance.errors = validateMetaSchema.errors;
    if (!valid && throwOrLogError) throw new Error('schema is invalid: ' + instance.errorsText());
    return valid;
  };
}

/**
 * Ajv never reads a property named `__proto__` (it leaves that key out of `properties`, as a
 * guard against prototype pollution), so a tool whose spec has an argument or property of that
 * name could not be called. For such schemas, property names are escaped in the schema and in
 * every value before Ajv sees them: `__proto__` becomes NUL + `__proto__`, and a name that
 * begins with NUL gets one more NUL in front, so no two names meet. Messages unescape them.
 */
const ESCAPE = '\u0000';

function escapeKey(key: string): string {
  return key === '__proto__' || key.startsWith(ESCAPE) ? ESCAPE + key : key;
}

function unescapeKey(key: string): string {
  return key.startsWith(ESCAPE) ? key.slice(1) : key;
}

const escapeNames = (v: unknown): unknown => (Array.isArray(v) ? v.map((r) => (typeof r === 'string' ? escapeKey(r) : r)) : v);

/** A value with every object key escaped (new objects, built from entries so `__proto__` stays a key). */
function escapeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(escapeValue);
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [escapeKey(k), escapeValue(v)]));
}

/** A schema with the property names it declares or requires escaped, and its literal values (`const`, `enum`) too. */
function escapeSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(escapeSchema);
  if (!isRecord(schema)) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]): [string, unknown] => {
      if ((k === 'properties' || k === 'dependentSchemas') && isRecord(v))
        return [k, Object.fromEntries(Object.entries(v).map(([p, s]) => [escapeKey(p), escapeSchema(s)]))];
      if (k === 'dependentRequired' && isRecord(v)) return [k, Object.fromEntries(Object.entries(v).map(([p, r]) => [escapeKey(p), escapeNames(r)]))];
      if (k === 'required') return [k, escapeNames(v)];
      if (k === 'const' || k === 'enum') return [k, escapeValue(v)];
      return [k, escapeSchema(v)];
    }),
  );
}

/** A compiled schema: Ajv's function, with values escaped first when the schema names `__proto__`. */
type Validator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null; escaped: boolean };

type Cache = Map<string, { schema: JsonSchema; validate: Validator }>;
const inputCache: Cache = new Map();
const outputCache: Cache = new Map();

/** Compiled validator for `schema`, cached under the tool name (recompiled if the schema object differs). */
function validatorFor(cache: Cache, name: string, schema: JsonSchema, which: string): Validator {
  const hit = cache.get(name);
  if (hit && hit.schema === schema) return hit.validate;
  const escaped = JSON.stringify(schema).includes('"__proto__"');
  let compiled: ValidateFunction;
  try {
    compiled = getAjv().compile((escaped ? escapeSchema(schema) : schema) as JsonSchema);
  } catch (err) {
    throw new Error(`The ${which} schema of tool ${name} cannot be compiled: ${err instanceof Error ? err.message : String(err)}`);
  }
  const validate: Validator = Object.assign(
    (value: unknown): boolean => {
      const ok = compiled(escaped ? escapeValue(value) : value);
      validate.errors = compiled.errors;
      return ok;
    },
    { escaped },
  );
  cache.set(name, { schema, validate });
  return validate;
}

/** Number of validators compiled so far (input and output); lets tests check laziness. */
export function compiledValidatorCount(): number {
  return inputCache.size + outputCache.size;
}

/** Decodes a JSON pointer (`/body/items/0`) into its tokens (unescaping property names when `escaped`). */
function pointerTokens(pointer: string, escaped = false): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((t) => (escaped ? unescapeKey(t) : t));
}

/** Renders tokens as a readable path: `body.items[0]`, `["odd key"]`. */
export function formatPath(tokens: readonly string[]): string {
  let out = '';
  for (const t of tokens) {
    if (/^(0|[1-9]\d*)$/.test(t)) out += `[${t}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(t)) out += out === '' ? t : `.${t}`;
    else out += `[${JSON.stringify(t)}]`;
  }
  return out;
}

/** Short rendering of a JSON value for messages. */
function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? text.slice(0, 57) + '...' : text;
}

/** Turns one Ajv error into `path: message`; `rootLabel` names the whole value. */
function describeError(err: ErrorObject, rootLabel: string, unknownNoun: string, escaped: boolean): string {
  const tokens = pointerTokens(err.instancePath, escaped);
  const params = err.params as Record<string, unknown>;
  const key = (k: unknown) => (escaped ? unescapeKey(String(k)) : String(k));
  let message = err.message ?? 'is invalid';
  switch (err.keyword) {
    case 'required':
    case 'dependentRequired':
      tokens.push(key(params.missingProperty));
      message = 'is required';
      break;
    case 'additionalProperties':
      tokens.push(key(params.additionalProperty));
      message = `is not an accepted ${tokens.length === 1 ? unknownNoun : 'property'}`;
      break;
    case 'unevaluatedProperties':
      tokens.push(key(params.unevaluatedProperty));
      message = `is not an accepted ${tokens.length === 1 ? unknownNoun : 'property'}`;
      break;
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      message = `must be one of ${allowed.map(show).join(', ')}`;
      break;
    }
    case 'const':
      message = `must be ${show(params.allowedValue)}`;
      break;
    case 'type':
      message = `must be ${Array.isArray(params.type) ? params.type.join(' or ') : String(params.type)}`;
      break;
  }
  const path = formatPath(tokens);
  return `${path === '' ? rootLabel : path}: ${message}`;
}

/** Formats Ajv errors as unique human-readable lines, capped at `MAX_MESSAGES`. */
function describeErrors(validate: Validator, rootLabel: string, unknownNoun: string): string[] {
  const lines = [...new Set((validate.errors ?? []).map((e) => describeError(e, rootLabel, unknownNoun, validate.escaped)))];
  if (lines.length > MAX_MESSAGES) {
    const rest = lines.length - MAX_MESSAGES;
    return [...lines.slice(0, MAX_MESSAGES), `(${rest} more problem${rest === 1 ? '' : 's'} not shown)`];
  }
  return lines;
}

/**
 * Validates tool-call arguments against the tool's `inputSchema`. Returns one message per
 * problem, each naming the offending field by path (`petId: must be integer`,
 * `body.name: is required`, `foo: is not an accepted argument`); an empty array means valid.
 * Throws only when the schema itself cannot be compiled.
 */
export function validateArguments(tool: ValidatedTool, args: unknown): string[] {
  const validate = validatorFor(inputCache, tool.name, tool.inputSchema, 'input');
  return validate(args) ? [] : describeErrors(validate, 'arguments', 'argument');
}

/**
 * Validates a structured result against the tool's `outputSchema`, with the same message
 * format as `validateArguments`. Returns `[]` when valid or when the tool has no output schema.
 */
export function validateOutput(tool: ValidatedTool, value: unknown): string[] {
  if (tool.outputSchema === undefined) return [];
  const validate = validatorFor(outputCache, tool.name, tool.outputSchema, 'output');
  return validate(value) ? [] : describeErrors(validate, 'result', 'property');
}

/** A structured result made to fit a lenient output schema: `value`, and the paths set to `null`. */
export type ConformedOutput = { readonly value: Record<string, unknown>; readonly nulled: readonly string[] };

/**
 * Makes `value` satisfy the tool's (lenient) output schema so that a client that checks
 * `structuredContent` never rejects a real answer: every value the schema does not accept is
 * replaced by `null`, which a lenient schema accepts at every level below the root. Returns
 * `undefined` when the root itself does not fit (it is not an object) or nothing helps.
 * `value` is not changed.
 */
export function conformOutput(tool: ValidatedTool, value: Record<string, unknown>): ConformedOutput | undefined {
  if (tool.outputSchema === undefined) return { value, nulled: [] };
  const validate = validatorFor(outputCache, tool.name, tool.outputSchema, 'output');
  if (validate(value)) return { value, nulled: [] };
  let current: Record<string, unknown> = structuredClone(value);
  const nulled: string[] = [];
  for (let round = 0; round < 8; round++) {
    const paths = [...new Set((validate.errors ?? []).map((e) => e.instancePath))];
    // the deepest paths only: nulling a leaf keeps the rest of its parent
    const leaves = paths.filter((p) => p !== '' && !paths.some((q) => q !== p && q.startsWith(p + '/')));
    if (leaves.length === 0) return undefined;
    for (const p of leaves) {
      const tokens = pointerTokens(p, validate.escaped);
      let parent: unknown = current;
      for (const t of tokens.slice(0, -1)) parent = (parent as Record<string, unknown>)[t];
      const last = tokens[tokens.length - 1]!;
      if (typeof parent !== 'object' || parent === null) return undefined;
      if (Array.isArray(parent)) parent[Number(last)] = null;
      else Object.defineProperty(parent, last, { value: null, writable: true, enumerable: true, configurable: true });
      nulled.push(formatPath(tokens));
    }
    if (validate(current)) return { value: current, nulled };
  }
  return undefined;
}

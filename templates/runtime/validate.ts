/**
 * Argument and result validation against a tool's JSON Schemas (draft 2020-12) with Ajv.
 * Validators are compiled lazily, on a tool's first call, and cached: a server may carry
 * thousands of tools, and compiling them all at start-up would cost seconds.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import formatsImport from 'ajv-formats';
import type { FormatsPlugin } from 'ajv-formats';
import type { JsonSchema, OperationTool } from './types.js';

/** The fields of a tool (operation or extra) validation reads. */
export type ValidatedTool = Pick<OperationTool, 'name' | 'inputSchema' | 'outputSchema'>;

/** Most messages reported for one value; the rest are summarised. */
export const MAX_MESSAGES = 20;

// ajv-formats is CommonJS: under NodeNext its default import is typed as the module namespace,
// while at run time it is the plugin function itself (which also carries `.default`).
type FormatsImport = FormatsPlugin | { readonly default: FormatsPlugin };
const formatsModule: FormatsImport = formatsImport;
const addFormats: FormatsPlugin = typeof formatsModule === 'function' ? formatsModule : formatsModule.default;

let ajv: Ajv2020 | undefined;

/** The shared Ajv instance, created on first use. */
function getAjv(): Ajv2020 {
  if (!ajv) {
    // addUsedSchema: false keeps tools whose schemas share an `$id` from clashing in Ajv's registry.
    // ownProperties: a schema property named `constructor` or `toString` must not be checked
    // against what every object inherits from Object.prototype
    ajv = new Ajv2020({ allErrors: true, strict: false, logger: false, addUsedSchema: false, ownProperties: true });
    addFormats(ajv);
  }
  return ajv;
}

type Cache = Map<string, { schema: JsonSchema; validate: ValidateFunction }>;
const inputCache: Cache = new Map();
const outputCache: Cache = new Map();

/** Compiled validator for `schema`, cached under the tool name (recompiled if the schema object differs). */
function validatorFor(cache: Cache, name: string, schema: JsonSchema, which: string): ValidateFunction {
  const hit = cache.get(name);
  if (hit && hit.schema === schema) return hit.validate;
  let validate: ValidateFunction;
  try {
    validate = getAjv().compile(schema);
  } catch (err) {
    throw new Error(`The ${which} schema of tool ${name} cannot be compiled: ${err instanceof Error ? err.message : String(err)}`);
  }
  cache.set(name, { schema, validate });
  return validate;
}

/** Number of validators compiled so far (input and output); lets tests check laziness. */
export function compiledValidatorCount(): number {
  return inputCache.size + outputCache.size;
}

/** Decodes a JSON pointer (`/body/items/0`) into its tokens. */
function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
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
function describeError(err: ErrorObject, rootLabel: string, unknownNoun: string): string {
  const tokens = pointerTokens(err.instancePath);
  const params = err.params as Record<string, unknown>;
  let message = err.message ?? 'is invalid';
  switch (err.keyword) {
    case 'required':
    case 'dependentRequired':
      tokens.push(String(params.missingProperty));
      message = 'is required';
      break;
    case 'additionalProperties':
      tokens.push(String(params.additionalProperty));
      message = `is not an accepted ${tokens.length === 1 ? unknownNoun : 'property'}`;
      break;
    case 'unevaluatedProperties':
      tokens.push(String(params.unevaluatedProperty));
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
function describeErrors(errors: readonly ErrorObject[] | null | undefined, rootLabel: string, unknownNoun: string): string[] {
  const lines = [...new Set((errors ?? []).map((e) => describeError(e, rootLabel, unknownNoun)))];
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
  return validate(args) ? [] : describeErrors(validate.errors, 'arguments', 'argument');
}

/**
 * Validates a structured result against the tool's `outputSchema`, with the same message
 * format as `validateArguments`. Returns `[]` when valid or when the tool has no output schema.
 */
export function validateOutput(tool: ValidatedTool, value: unknown): string[] {
  if (tool.outputSchema === undefined) return [];
  const validate = validatorFor(outputCache, tool.name, tool.outputSchema, 'output');
  return validate(value) ? [] : describeErrors(validate.errors, 'result', 'property');
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
      const tokens = pointerTokens(p);
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

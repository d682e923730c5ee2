/**
 * Rewrites a published JSON Schema into its portable equivalent, the form the official MCP
 * Inspector's schema lint (and clients that map schemas onto a single-`type` dialect) accept:
 *
 * - `type: [A, B]` becomes `anyOf: [{type: A}, {type: B}]` (other keywords stay beside it: JSON
 *   Schema applies type-specific keywords only to values of that type, so the meaning is kept);
 * - a schema with no validation keyword at all (`{}`, or only a description) becomes "any
 *   value" spelled with keywords ({@link ANY_VALUE}), keeping its annotations;
 * - a bare `true` / `false` where a schema object is expected becomes {@link ANY_VALUE} /
 *   `{not: {}}` (they stay as the value of `additionalProperties` and its siblings, where they
 *   are idiomatic).
 *
 * Validation semantics never change: the server validates against exactly what it publishes.
 */

import { isObject } from '../../core/json.js';
import { ANY_VALUE } from '../tools/output-schema.js';
import type { JsonSchema } from '../types.js';

const MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions']);
const LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SINGLE_KEYWORDS = new Set([
  'items',
  'contains',
  'not',
  'propertyNames',
  'if',
  'then',
  'else',
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
  'contentSchema',
]);
/** Where a boolean schema is idiomatic and kept. */
const BOOLEAN_OK = new Set(['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems']);

/** Keywords that constrain a value (a schema with none of them accepts anything). */
const CONSTRAINING = new Set([
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'maxProperties',
  'minProperties',
  'required',
  'dependentRequired',
  'format',
  'contentMediaType',
  'contentEncoding',
  'contentSchema',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'items',
  'prefixItems',
  'contains',
  'properties',
  'patternProperties',
  'additionalProperties',
  'propertyNames',
  'dependentSchemas',
  'dependencies',
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
]);

/**
 * The portable form of a root schema. The input is not changed; parts that are portable already
 * are shared with it rather than copied (what is published is only ever read).
 */
export function portable(schema: JsonSchema): JsonSchema {
  return node(schema, undefined) as JsonSchema;
}

function node(value: unknown, keyword: string | undefined): unknown {
  if (typeof value === 'boolean') {
    if (keyword !== undefined && BOOLEAN_OK.has(keyword)) return value;
    return value ? ANY_VALUE : { not: {} };
  }
  if (!isObject(value)) return value;
  // the body of `not` may be empty on purpose (`{not: {}}` is "nothing")
  if (keyword === 'not' && Object.keys(value).length === 0) return value;
  // the subschemas first; the node is copied only when one of them changed or it changes itself
  let replaced: Map<string, unknown> | undefined;
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    const v = value[k];
    let next = v;
    if (MAP_KEYWORDS.has(k) && isObject(v)) next = mapValues(v, k);
    else if (LIST_KEYWORDS.has(k) && Array.isArray(v)) next = mapList(v, k);
    else if (SINGLE_KEYWORDS.has(k) && (isObject(v) || typeof v === 'boolean')) next = node(v, k);
    if (next !== v) (replaced ??= new Map()).set(k, next);
  }
  const typeArray = Array.isArray(value.type);
  if (replaced === undefined && !typeArray && isConstrained(value)) return value;
  // built from entries, so a key named `__proto__` stays an own property
  const out: Record<string, unknown> = Object.fromEntries(Object.keys(value).map((k) => [k, replaced?.has(k) ? replaced.get(k) : value[k]]));
  if (typeArray) {
    const types = [...new Set((out.type as unknown[]).filter((t): t is string => typeof t === 'string'))];
    delete out.type;
    if (types.length === 1) out.type = types[0];
    else if (types.length > 1) {
      // an array branch carries its own `items`, as portable schemas must
      const union = types.map((t): Record<string, unknown> => (t === 'array' ? arrayBranch(out) : { type: t }));
      if (out.anyOf === undefined) out.anyOf = union;
      else out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), { anyOf: union }];
    }
  }
  return isConstrained(out) ? out : { ...out, ...ANY_VALUE };
}

/** Whether a schema object has a keyword that constrains a value (`if` counts only with `then` or `else`). */
function isConstrained(schema: Record<string, unknown>): boolean {
  return Object.keys(schema).some((k) => CONSTRAINING.has(k) && (k !== 'if' || 'then' in schema || 'else' in schema));
}

/** A map of subschemas (`properties`, `$defs`, …) made portable; the same object when none changed. */
function mapValues(map: Record<string, unknown>, keyword: string): Record<string, unknown> {
  let changed = false;
  const entries = Object.entries(map).map(([name, s]): [string, unknown] => {
    const next = node(s, keyword);
    if (next !== s) changed = true;
    return [name, next];
  });
  return changed ? Object.fromEntries(entries) : map;
}

/** A list of subschemas made portable; the same array when none changed. */
function mapList(list: unknown[], keyword: string): unknown[] {
  let changed = false;
  const out = list.map((s) => {
    const next = node(s, keyword);
    if (next !== s) changed = true;
    return next;
  });
  return changed ? out : list;
}

/** The array branch of a split `type` array: `items` / `prefixItems` move into it. */
function arrayBranch(out: Record<string, unknown>): Record<string, unknown> {
  const branch: Record<string, unknown> = { type: 'array' };
  for (const k of ['items', 'prefixItems'] as const) {
    if (out[k] !== undefined) {
      branch[k] = out[k];
      delete out[k];
    }
  }
  if (branch.items === undefined && branch.prefixItems === undefined) branch.items = ANY_VALUE;
  return branch;
}

/**
 * Completion sources (`completion/complete`) of prompt arguments and resource-template
 * variables: the manifest's `complete` values, or the `enum` of the OpenAPI parameter an argument
 * or variable is bound to (`parameter: { operation, name, in? }`). Resolved at build time into
 * plain string lists, so the generated server only filters them.
 */
import { isObject } from '../../core/json.js';
import type { RawOperation } from '../../openapi/operations.js';

/** A manifest `parameter` binding. */
export type ParameterBinding = { operation: string; name: string; in?: 'path' | 'query' | 'header' | 'cookie' };

/** Looks up the enum of a bound parameter: its values as strings, or why there are none. */
export type ParameterEnumLookup = (binding: ParameterBinding) => { values: string[] } | { error: string; help: string };

/** Enum values as completion strings: strings, numbers and booleans as written, in order, without duplicates; null and objects left out. */
function enumStrings(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  const out: string[] = [];
  for (const v of list) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
      const s = String(v);
      if (!out.includes(s)) out.push(s);
    }
  }
  return out;
}

/**
 * A lookup over every operation of the spec (selected or not: a prompt may stand for an
 * operation the server does not publish). `deref` follows local `$ref`s.
 */
export function parameterEnumLookup(ops: readonly RawOperation[], deref: (node: unknown) => unknown): ParameterEnumLookup {
  return (b) => {
    const op = ops.find((o) => o.operationId === b.operation);
    if (op === undefined)
      return { error: `no operation has operationId ${JSON.stringify(b.operation)}`, help: 'name an operationId of the OpenAPI description' };
    const params = [op.pathItem.parameters, op.node.parameters].flatMap((list) => (Array.isArray(list) ? list.map((p) => deref(p)) : [])).filter(isObject);
    // operation-level parameters win over path-level ones of the same name and location
    const matches = params.filter((p) => p.name === b.name && (b.in === undefined || p.in === b.in)).reverse();
    const param = matches[0];
    if (param === undefined) {
      const names = [...new Set(params.map((p) => String(p.name)))];
      return {
        error: `operation ${b.operation} has no parameter ${JSON.stringify(b.name)}${b.in ? ` in ${b.in}` : ''}`,
        help: names.length > 0 ? `its parameters: ${names.join(', ')}` : 'the operation has no parameters',
      };
    }
    const schema = deref(isObject(param.schema) ? param.schema : param);
    let values = isObject(schema) ? enumStrings(schema.enum) : [];
    if (values.length === 0 && isObject(schema) && schema.items !== undefined) {
      const items = deref(schema.items);
      if (isObject(items)) values = enumStrings(items.enum);
    }
    if (values.length === 0)
      return {
        error: `parameter ${JSON.stringify(b.name)} of operation ${b.operation} has no enum to complete from`,
        help: 'give the values under `complete` instead',
      };
    return { values };
  };
}

/**
 * Object literals whose values are expressions (schema tables, imported handler functions), for
 * the places where `tsLiteral` alone cannot say it. Keys go through `tsString`; values must
 * already be safe expressions (from `safe.ts` or identifiers decided in the IR).
 */
import { isIdentifierName, tsString } from '../safe.js';

/** `{ "key": expr, … }`, one field per line; multi-line values are indented with it. */
export function objectExpr(fields: ReadonlyArray<readonly [string, string]>): string {
  if (fields.length === 0) return '{}';
  const indent = (expr: string) => expr.replace(/\n/g, '\n  ');
  return `{\n${fields.map(([k, v]) => `  ${tsString(k)}: ${indent(v)}`).join(',\n')}\n}`;
}

/** `[a, b]` of expressions, one per line. */
export function arrayExpr(items: readonly string[]): string {
  if (items.length === 0) return '[]';
  return `[\n${items.map((i) => `  ${i.replace(/\n/g, '\n  ')},\n`).join('')}]`;
}

/** `object.key`, or `object["key"]` when the key is not an identifier name. */
export function member(object: string, key: string): string {
  return isIdentifierName(key) ? `${object}.${key}` : `${object}[${tsString(key)}]`;
}

/**
 * Projection of tool results (manifest `results.projection`): a tool's `fields` argument is a
 * JMESPath expression applied to the parsed response before compaction and the budget, evaluated by
 * `@jmespath-community/jmespath` (a maintained implementation, nothing hand-written). The module
 * registers itself with results.ts when the generated server imports it, so projects without
 * projection neither copy it nor depend on the package.
 *
 * Expressions come from the model: one is refused before the request is sent when it does not
 * parse, is over 500 characters, or has more than 16 commas or 2 flatten operators (`[]`) — what
 * an expression can multiply the data by is bounded that way — and a projection whose result is
 * over twice the response limit as JSON is refused rather than returned.
 *
 * This file is copied into every generated project with a tool that takes a projection.
 */

import type { JSONValue } from '@jmespath-community/jmespath';
import { compile, search, tokenize } from '@jmespath-community/jmespath';
import { setProjector } from './results.js';

/** Longest expression accepted, in characters. */
const MAX_EXPRESSION_CHARS = 500;
const MAX_COMMAS = 16;
const MAX_FLATTENS = 2;

/** Why `expression` is refused, or `undefined` when it may run. */
function check(expression: string): string | undefined {
  if (expression.length > MAX_EXPRESSION_CHARS) return `it is ${expression.length} characters long; the limit is ${MAX_EXPRESSION_CHARS}`;
  let tokens: ReturnType<typeof tokenize>;
  try {
    tokens = tokenize(expression);
    compile(expression);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  const commas = tokens.filter((t) => t.type === 'Comma').length;
  const flattens = tokens.filter((t) => t.type === 'Flatten').length;
  if (commas > MAX_COMMAS) return `it has ${commas} commas; the limit is ${MAX_COMMAS}`;
  if (flattens > MAX_FLATTENS) return `it has ${flattens} flatten operators ([]); the limit is ${MAX_FLATTENS}`;
  return undefined;
}

setProjector({
  check,
  apply: (expression, data) => search(data as JSONValue, expression),
});

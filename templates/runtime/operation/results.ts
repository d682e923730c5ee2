/**
 * Results that fit: a 2xx JSON body is made to fit the model's context before it is returned.
 *
 *   projection (the tool's `fields` argument: a JMESPath expression) → compaction → the budget
 *
 * - Compaction (`compact`, on by default) drops `null`s, empty arrays and objects and the keys the
 *   `omit` patterns name (`*_url`, `node_id`, …: hypermedia noise), and shortens strings over
 *   `maxStringChars` with a marker saying how much was left out. It never turns a 2xx into an error.
 * - The budget (`maxTokens`, o200k tokens, 8,000 by default) is estimated from the JSON's bytes
 *   with the tool's build-time calibrated `bytesPerToken`. Over it, a list (the result itself, or
 *   its largest list property: `items`, `data`…) is cut at an item boundary; an object is cut by
 *   dropping its largest fields first, each named. JSON is never cut in the middle of a value.
 * - What was cut and how to get the rest is said in a note after the JSON: how many items were
 *   kept of how many, and the exact arguments of the next call when the API pages (a `Link`
 *   header's `rel="next"`, a cursor in the body, `page`/`per_page` arithmetic, or a page size).
 *
 * Compaction and the fit are in result-fit.ts, the next call in result-paging.ts; this file holds the
 * policy and the shaping that runs them and writes the note.
 *
 * This file is copied verbatim into every generated project.
 */
import type { OperationTool, ResultPolicy } from '../core/types.js';
import { DEFAULT_BYTES_PER_TOKEN } from '../core/types.js';
import type { CompactionReport } from './result-fit.js';
import { compact, fitBytes } from './result-fit.js';
import { nextCall } from './result-paging.js';

/** Defaults when the generated config carries no `results` (projects built before it existed, tests). */
export const DEFAULT_RESULT_POLICY: ResultPolicy = Object.freeze({
  maxTokens: 8000,
  compact: true,
  omit: Object.freeze(['*_url', 'url', 'node_id', '_links', 'gravatar_id']),
  maxStringChars: 1000,
});

/** Evaluates projections (projection.ts registers JMESPath here when the project has projection). */
export type Projector = {
  /** Why an expression is refused (it does not parse, or is too complex); `undefined` when it may run. */
  check(expression: string): string | undefined;
  /** The expression applied to the data; throws on an evaluation error (an unknown function…). */
  apply(expression: string, data: unknown): unknown;
};

let projector: Projector | undefined;

/** Registers the projection implementation (projection.ts does, when imported). */
export function setProjector(p: Projector): void {
  projector = p;
}

/** The registered projection implementation, if any. */
export function getProjector(): Projector | undefined {
  return projector;
}

/** The share of the budget a result is fitted to, so that an estimate that is a little low still fits. */
const ESTIMATE_MARGIN = 0.85;
/** Tokens kept free for the note that follows the JSON in the text. */
const NOTE_TOKENS = 200;

/** The effective policy of `tool`: its own settings over the server's. */
export function policyFor(tool: Pick<OperationTool, 'results'>, server: ResultPolicy | undefined): ResultPolicy {
  const base = server ?? DEFAULT_RESULT_POLICY;
  return tool.results === undefined ? base : { ...base, ...tool.results };
}

/** What the note about a result says, and the arguments of the next call when there is one. */
export type ResultNote = { readonly text?: string; readonly next?: Record<string, unknown> };

/** The shaped result: the value to return, the note (with `next`) to add, and the URI of the whole result when it was kept. */
export type Shaped = { readonly value: unknown; readonly note?: ResultNote; readonly link?: string };

/**
 * Shapes a parsed 2xx JSON body for `tool`: compaction, then the budget, then the note. `args` are
 * the call's arguments (without the projection argument); `link` the response's `Link` header.
 */
export function shapeResult(
  tool: OperationTool,
  parsed: unknown,
  policy: ResultPolicy,
  args: Record<string, unknown>,
  link: string | null,
  keep?: (whole: unknown) => string | undefined,
): Shaped {
  const report: CompactionReport = { nulls: 0, empties: 0, omitted: new Map(), shortened: 0 };
  let value = policy.compact ? compact(parsed, policy, report) : parsed;
  if (value === undefined) value = Array.isArray(parsed) ? [] : {};
  const ratio = tool.bytesPerToken ?? DEFAULT_BYTES_PER_TOKEN;
  // the estimate errs both ways (about ±15% for most results, more for odd ones): fitted with that much room
  const maxBytes = Math.max(256, Math.floor((policy.maxTokens * ESTIMATE_MARGIN - NOTE_TOKENS) * ratio));
  const fitted = fitBytes(value, maxBytes);
  const { next, smaller } = nextCall(tool, args, parsed, fitted.cut, link);
  const parts: string[] = [];
  const list = fitted.cut?.list;
  if (list !== undefined) {
    const where = list.key !== undefined ? ` of "${list.key}"` : '';
    parts.push(`${list.kept} of ${list.total} items${where} shown, cut to fit ${policy.maxTokens} tokens`);
  }
  if (fitted.cut?.droppedFields !== undefined && fitted.cut.droppedFields.length > 0)
    parts.push(`fields left out to fit ${policy.maxTokens} tokens: ${fitted.cut.droppedFields.join(', ')}`);
  if (next !== undefined) parts.push(`${list !== undefined ? 'the rest' : 'next page'}: call ${tool.name} with ${JSON.stringify(next)}`);
  else if (smaller !== undefined) parts.push(`for the rest, call ${tool.name} with ${JSON.stringify(smaller)} and page on`);
  // cut, and the API does not page: the whole result is kept for the client to read
  const cut = list !== undefined || (fitted.cut?.droppedFields?.length ?? 0) > 0;
  const kept = cut && next === undefined && smaller === undefined ? keep?.(value) : undefined;
  if (kept !== undefined) parts.push(`the whole result: read the resource ${kept} (resources/read; kept for 10 minutes, for this client only)`);
  if ((list !== undefined || fitted.cut?.droppedFields !== undefined) && tool.projection !== undefined)
    parts.push(`or select fewer fields with the ${tool.projection.arg} argument (JMESPath)`);
  if (report.omitted.size > 0)
    parts.push(
      `left out: ${[...report.omitted.keys()].sort().slice(0, 12).join(', ')}${report.omitted.size > 12 ? ', …' : ''} (link and id noise), and empty values`,
    );
  const text = parts.length > 0 ? `[results: ${parts.join('; ')}]` : undefined;
  return {
    value: fitted.value,
    ...(text !== undefined || next !== undefined ? { note: { ...(text !== undefined ? { text } : {}), ...(next !== undefined ? { next } : {}) } } : {}),
    ...(kept !== undefined ? { link: kept } : {}),
  };
}

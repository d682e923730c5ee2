/**
 * What an `execute` run becomes for the model (code mode, code-mode.ts runs it): the data code
 * sees of a nested call's result, the one-line summary of the API calls the run made, and the
 * answer for each way a run ends (the returned value made to fit the results budget, the console,
 * the error naming a thrown value, a crossed bound or a cancellation).
 *
 * This file is copied into generated projects that use code mode.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ResultPolicy } from '../core/types.js';
import { DEFAULT_BYTES_PER_TOKEN } from '../core/types.js';
import { compact, fitBytes } from '../operation/result-fit.js';
import type { SandboxOutcome } from './sandbox.js';

/**
 * One API call the code made, for the answer (`in flight` until it answers). `sent`: its request
 * went out (marked by the dispatch when it hands the request to fetch, never by code mode itself):
 * a call the run stops after that is named as sent with its outcome unknown, one stopped before as
 * not made.
 */
export type CallRecord = { readonly name: string; status: string; sent?: boolean };

/** Status of a call still under way when the run ended. */
export const IN_FLIGHT = 'in flight';

/** Status of a gated call whose question is out to the client (legacy: being asked; 2026-07-28: the run ends with it). */
export const ASKING = 'asking the client';
/** Status of a gated call waiting while another call of the run asks the client. */
export const PARKED = "waiting for another call's question to the client";

/** The text of a result's text blocks, joined. */
export function textOf(result: CallToolResult): string {
  return result.content
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/**
 * The data of a successful result: the response body's JSON value — its structured content, or
 * that content's `data` when the tool wraps results that are not always objects (`{status, data}`),
 * else the text's first line as JSON, else the text — so code sees the same value whether or not
 * the tool publishes an output schema.
 */
export function dataOf(result: CallToolResult, wrapped: boolean): unknown {
  const structured = result.structuredContent as Record<string, unknown> | undefined;
  if (structured !== undefined && structured !== null) return wrapped ? (structured.data ?? null) : structured;
  const text = textOf(result);
  try {
    return JSON.parse(text.split('\n', 1)[0]!) as unknown;
  } catch {
    return text;
  }
}

/**
 * A one-line summary of the calls: counts per operation and status of those that ended, in order
 * of first use; then the calls still under way when the run ended (`when`: how it ended) — those
 * whose request had gone out (`sent`, outcome unknown), and those not made: no request went out
 * (a gated call asking the client, waiting for another call's question, or still before its
 * request).
 */
function callSummary(calls: readonly CallRecord[], when = 'when the run ended'): string {
  const open = (c: CallRecord): boolean => c.status === ASKING || c.status === PARKED || c.status === IN_FLIGHT;
  const made = calls.filter((c) => !open(c));
  const sent = calls.filter((c) => open(c) && c.sent === true);
  const unmade = calls.filter((c) => open(c) && c.sent !== true);
  const tally = (items: readonly CallRecord[], key: (c: CallRecord) => string): string => {
    const counts = new Map<string, number>();
    for (const c of items) counts.set(key(c), (counts.get(key(c)) ?? 0) + 1);
    return [...counts].map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join(', ');
  };
  const parts: string[] = [];
  if (made.length > 0) parts.push(`${made.length} API call${made.length === 1 ? ' was' : 's were'} made: ${tally(made, (c) => `${c.name} ${c.status}`)}`);
  if (sent.length > 0) parts.push(`sent, then stopped ${when} (outcome unknown): ${tally(sent, (c) => c.name)}`);
  if (parts.length === 0) parts.push('no API calls were made');
  if (unmade.length > 0)
    parts.push(`not made: ${tally(unmade, (c) => `${c.name} (${c.status === IN_FLIGHT ? 'stopped before its request was sent' : c.status} ${when})`)}`);
  return parts.join('; ');
}

/** The console block of an answer, if the code logged anything. */
function consoleBlock(out: string): CallToolResult['content'] {
  return out === '' ? [] : [{ type: 'text', text: `console:\n${out}` }];
}

/** The `execute` answer for a run's outcome. */
export function answer(outcome: SandboxOutcome, calls: readonly CallRecord[], results: ResultPolicy | undefined): CallToolResult {
  const when = { returned: 'when the code returned', thrown: 'when the code threw', cancelled: 'when the run was cancelled' } as Record<string, string>;
  const summary = callSummary(calls, when[outcome.kind] ?? 'when the run was stopped');
  switch (outcome.kind) {
    case 'returned': {
      let value = JSON.parse(outcome.json) as unknown;
      const policy = results;
      let note = '';
      if (policy !== undefined) {
        if (policy.compact) value = compact(value, policy);
        const fitted = fitBytes(value, policy.maxTokens * DEFAULT_BYTES_PER_TOKEN);
        value = fitted.value;
        if (fitted.cut?.list)
          note = ` The returned list was cut to ${fitted.cut.list.kept} of ${fitted.cut.list.total} items to fit the results budget of ${policy.maxTokens} tokens: return less, or page in the code.`;
        else if (fitted.cut?.droppedFields)
          note = ` Fields left out to fit the results budget of ${policy.maxTokens} tokens: ${fitted.cut.droppedFields.join(', ')}.`;
      }
      return {
        content: [{ type: 'text', text: JSON.stringify(value) ?? 'null' }, { type: 'text', text: `[${summary}.${note}]` }, ...consoleBlock(outcome.console)],
      };
    }
    case 'syntax':
      return { isError: true, content: [{ type: 'text', text: `${outcome.message}\n${summary}.` }, ...consoleBlock(outcome.console)] };
    case 'thrown':
      return {
        isError: true,
        content: [
          { type: 'text', text: `The code threw ${outcome.message}${outcome.stack ? `\n${outcome.stack}` : ''}\nBefore it, ${summary}.` },
          ...consoleBlock(outcome.console),
        ],
      };
    case 'bound':
      return {
        isError: true,
        content: [{ type: 'text', text: `Stopped by the ${outcome.message}.\nBefore it, ${summary}.` }, ...consoleBlock(outcome.console)],
      };
    case 'cancelled':
      return { isError: true, content: [{ type: 'text', text: `The run was cancelled; ${summary}.` }] };
  }
}

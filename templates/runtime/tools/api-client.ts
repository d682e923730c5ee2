/**
 * The API client of extra-tool handlers (`ctx.api`): one method per operation the tool declared
 * in the manifest's `uses`, keyed by operationId. A method runs its operation exactly as the
 * operation's tool would run (operation-call.ts: base URL, credentials, `fromClient` headers, hidden
 * arguments, timeouts, response limits, result conversion), as a nested call of the handler's
 * logical call through the policy's steps (audit lines carry `parentCallId`; limits count it under
 * the operation's name) — the server supplies that runner. Operations excluded from the tool list
 * (include/exclude, a preset) are callable too: `uses` keeps their definitions in the project.
 *
 * A method never throws: every outcome is an {@link ApiResult}. `ok` is false for an `isError`
 * result (an HTTP error status, a timeout, invalid arguments, a missing credential…) and for a
 * refusal by the policy (a limit, a denied call, an audit line that could not be written).
 *
 * This file is copied verbatim into every generated project that has extra tools.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { errorResult } from '../core/error-result.js';
import type { OperationTool } from '../core/types.js';

/**
 * What an API call gave. `data`: the result's `structuredContent` when the operation publishes an
 * output schema (typed as the operation's generated `<Op>Result`), else its JSON body parsed, or
 * its text. `error`: the text the model would have read. `status`: the API's HTTP status, when a
 * response came. `result`: the `CallToolResult` the operation's tool would have returned.
 */
export type ApiResult<Result = unknown> =
  | { readonly ok: true; readonly status?: number; readonly data: Result; readonly result: CallToolResult }
  | { readonly ok: false; readonly status?: number; readonly error: string; readonly result: CallToolResult };

/** One operation of `ctx.api`. */
export type ApiOperation<Args, Result = unknown> = (args: Args) => Promise<ApiResult<Result>>;

/** `ctx.api` of any tool: methods by operationId (the generated `<Tool>Api` types them). */
export interface ApiClient {
  readonly [operationId: string]: ApiOperation<never, unknown>;
}

/** Runs one operation as a nested call of the handler's call; resolves to its result and the HTTP status it got. */
export type NestedRunner = (tool: OperationTool, args: Record<string, unknown>) => Promise<{ readonly result: CallToolResult; readonly status?: number }>;

/** The text of a result's text blocks, joined. */
function textOf(result: CallToolResult): string {
  return result.content
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/**
 * The data of a successful result (see {@link ApiResult}). A JSON result's first text block is
 * the compact JSON (no raw line break), followed, when the result was shaped to fit, by a line
 * break and a `[results: …]` note: the JSON is the block's first line.
 */
function dataOf(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const first = result.content.find((c): c is { type: 'text'; text: string } => c.type === 'text')?.text;
  if (first !== undefined) {
    const line = first.split('\n', 1)[0]!;
    try {
      return JSON.parse(line) as unknown;
    } catch {
      // not JSON: the text itself
    }
  }
  return textOf(result);
}

/** The client of the operations in `uses`, each run by `run`. */
export function apiClient(uses: Readonly<Record<string, OperationTool>>, run: NestedRunner): ApiClient {
  const client: Record<string, ApiOperation<never, unknown>> = Object.create(null) as Record<string, ApiOperation<never, unknown>>;
  for (const [operationId, tool] of Object.entries(uses)) {
    client[operationId] = async (args: unknown): Promise<ApiResult> => {
      let outcome: { readonly result: CallToolResult; readonly status?: number };
      try {
        outcome = await run(tool, (args ?? {}) as Record<string, unknown>);
      } catch (err) {
        // a policy step's refusal (access, an audit line that could not be written) is an error, not a throw
        const error = `${operationId} was refused: ${err instanceof Error ? err.message : String(err)}`;
        return { ok: false, error, result: errorResult(error) };
      }
      const { result, status } = outcome;
      const withStatus = status !== undefined ? { status } : {};
      if (result.isError === true) return { ok: false, ...withStatus, error: textOf(result), result };
      return { ok: true, ...withStatus, data: dataOf(result), result };
    };
  }
  return Object.freeze(client);
}

// Handler of the `test_tool_with_logging` conformance fixture (manifest `extraTools`). Yours to
// edit: mcpgen never overwrites it.
//
// toolWithLogging logs three messages at info level, 50 ms apart, through the handler context's
// `log`, which the server also sends to the client as `notifications/message`
// (tools-call-with-logging). toolWithProgress reports 0, 50 and 100 of 100 through `progress`,
// which reaches the client as `notifications/progress` when it asked for progress
// (tools-call-with-progress).

import type { ExtraToolContext } from '../runtime/handlers.js';

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

export async function toolWithLogging(_args: unknown, ctx: ExtraToolContext) {
  ctx.log('info', 'Tool execution started');
  await sleep(50, ctx.signal);
  ctx.log('info', 'Tool processing data');
  await sleep(50, ctx.signal);
  ctx.log('info', 'Tool execution completed');
  return { content: [{ type: 'text' as const, text: 'Tool with logging executed successfully' }] };
}

export async function toolWithProgress(_args: unknown, ctx: ExtraToolContext) {
  ctx.progress(0, 100);
  await sleep(50, ctx.signal);
  ctx.progress(50, 100);
  await sleep(50, ctx.signal);
  ctx.progress(100, 100);
  return { content: [{ type: 'text' as const, text: 'Tool with progress executed successfully' }] };
}

/**
 * test_logging_tool (server-stateless, 2026-07-28): logs one message. The server sends it as
 * `notifications/message` only when the request asked for a log level (`_meta`'s
 * `io.modelcontextprotocol/logLevel`, or `logging/setLevel` in the legacy era).
 */
export function loggingTool(_args: unknown, ctx: ExtraToolContext) {
  ctx.log('info', 'Diagnostic trace logging activated');
  return { content: [{ type: 'text' as const, text: 'Logging evaluated' }] };
}

/**
 * test_streaming_elicitation (server-stateless, 2026-07-28): reports progress half-way, then
 * returns. Like the suite's reference fixture it asks the client nothing: the check is that the
 * response stream carries only notifications and the result, never a server-to-client request.
 */
export function streamingElicitation(_args: unknown, ctx: ExtraToolContext) {
  ctx.progress(50, 100);
  return { content: [{ type: 'text' as const, text: 'Streaming complete' }] };
}

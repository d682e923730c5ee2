// Handler of the `test_tool_with_logging` conformance fixture (manifest `extraTools`). Yours to
// edit: mcpgen never overwrites it.
//
// It logs three messages at info level, 50 ms apart, through the handler context's `log`.
// The scenario (tools-call-with-logging) expects them as `notifications/message` to the
// client; a generated server's `log` writes to stderr only, so the scenario is an expected
// failure (see ../../../expected-failures.yml) until handlers can log to the client.

import type { ExtraToolContext } from '../runtime/extra-tools.js';

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

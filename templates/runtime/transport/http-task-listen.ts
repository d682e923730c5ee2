/**
 * 2026-07-28 `subscriptions/listen` streams for task ids over HTTP (the Tasks extension), served
 * before the SDK's router, which knows none.
 */
import type { ServerResponse } from 'node:http';
import { log } from '../core/log.js';
import type { TaskListen } from '../tasks/tasks-stdio.js';
import { reply, rpcError } from './http-io.js';

/**
 * A 2026-07-28 `subscriptions/listen` stream for task ids (the Tasks extension): an SSE response
 * whose first message acknowledges the ids of the client's own live tasks, then one
 * `notifications/tasks` per change of one of them, until the client closes it.
 */
export async function listenForTasks(
  res: ServerResponse,
  body: { id?: unknown },
  taskIds: readonly unknown[],
  identity: string | undefined,
  taskListen: TaskListen,
): Promise<void> {
  const subscriptionId = body.id ?? null;
  const write = (message: unknown): void => void res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  // a change before the acknowledgement is sent waits for it
  let early: unknown[] | undefined = [];
  let listening: Awaited<ReturnType<typeof taskListen>>;
  try {
    listening = await taskListen(identity, taskIds, subscriptionId, (message) => (early ? early.push(message) : write(message)));
  } catch (err) {
    // checked before anything is sent: a refusal (too many ids) or an unreachable shared store is a JSON-RPC error, not a torn stream
    const code = typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -32603;
    const told = code !== -32603 || (err as { name?: unknown }).name === 'SharedStateError';
    if (code === -32603) log('warn', 'http: a task listen stream could not start', { error: told ? (err as Error).message : String(err) });
    return reply(res, code === -32603 ? 500 : 400, rpcError(code, told ? (err as Error).message : 'Internal server error', body.id ?? null));
  }
  const { accepted, stop } = listening;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive' });
  write({
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { 'io.modelcontextprotocol/subscriptionId': subscriptionId }, notifications: { taskIds: accepted } },
  });
  for (const message of early) write(message);
  early = undefined;
  if (res.destroyed) stop();
  else res.once('close', stop);
}

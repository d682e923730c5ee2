/**
 * 2026-07-28 task status notifications over stdio: the SDK's stdio entry answers every
 * `subscriptions/listen` itself, and its router knows no task ids, so a listen whose filter names
 * `taskIds` is taken off the transport before the entry sees it (as http.ts does before the SDK's
 * HTTP handler): acknowledged with the ids of the connection's own live tasks
 * (`notifications/subscriptions/acknowledged`), then one `notifications/tasks` per change of one of
 * them (tasks-tools.ts `listen`), until the client cancels the listen request
 * (`notifications/cancelled`) or the connection ends. Every other message passes through.
 *
 * This file is copied verbatim into every generated project.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { log } from '../core/log.js';

/** A listen stream for task ids (server.ts `ServerFactory.taskListen`). */
export type TaskListen = (
  identity: string | undefined,
  taskIds: readonly unknown[],
  subscriptionId: unknown,
  send: (message: unknown) => void,
) => Promise<{ accepted: string[]; stop: () => void }>;

/** The task ids a 2026-07-28 `subscriptions/listen` request asks for, or undefined when it is none. */
function listenTaskIds(message: unknown): { id: string | number; taskIds: unknown[] } | undefined {
  const m = message as { method?: unknown; id?: unknown; params?: { notifications?: { taskIds?: unknown }; _meta?: Record<string, unknown> } };
  if (m.method !== 'subscriptions/listen' || (typeof m.id !== 'string' && typeof m.id !== 'number')) return undefined;
  // a request with the 2026-07-28 envelope only (the entry answers the rest as it does)
  if (typeof m.params?._meta?.['io.modelcontextprotocol/protocolVersion'] !== 'string') return undefined;
  const ids = m.params.notifications?.taskIds;
  return Array.isArray(ids) && ids.length > 0 ? { id: m.id, taskIds: ids } : undefined;
}

/** `inner` with listen requests for task ids served here, for the connection of `identity`. */
export function withTaskListen(inner: Transport, taskListen: TaskListen, identity: string): Transport {
  const streams = new Map<string | number, () => void>();
  let downstream: Transport['onmessage'];
  const send = (message: unknown): void =>
    void inner.send(message as JSONRPCMessage).catch((err: unknown) => log('debug', 'tasks: a listen notification could not be sent', err));
  inner.onmessage = (message, extra) => {
    const listen = listenTaskIds(message);
    if (listen) {
      void (async () => {
        // a change before the acknowledgement is sent waits for it
        let early: unknown[] | undefined = [];
        const { accepted, stop } = await taskListen(identity, listen.taskIds, listen.id, (m) => (early ? early.push(m) : send(m)));
        streams.get(listen.id)?.();
        streams.set(listen.id, stop);
        send({
          jsonrpc: '2.0',
          method: 'notifications/subscriptions/acknowledged',
          params: { _meta: { 'io.modelcontextprotocol/subscriptionId': listen.id }, notifications: { taskIds: accepted } },
        });
        for (const m of early) send(m);
        early = undefined;
      })().catch((err: unknown) => log('warn', 'tasks: a listen request failed', err));
      return;
    }
    const cancelled = message as { method?: unknown; params?: { requestId?: unknown } };
    if (
      cancelled.method === 'notifications/cancelled' &&
      (typeof cancelled.params?.requestId === 'string' || typeof cancelled.params?.requestId === 'number') &&
      streams.has(cancelled.params.requestId)
    ) {
      streams.get(cancelled.params.requestId)!();
      streams.delete(cancelled.params.requestId);
      return;
    }
    downstream?.(message, extra);
  };
  const closed = (): void => {
    for (const stop of streams.values()) stop();
    streams.clear();
  };
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'onmessage') return downstream;
      if (prop === 'close') return () => (closed(), target.close());
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
    set(target, prop, value) {
      if (prop === 'onmessage') {
        downstream = value as Transport['onmessage'];
        return true;
      }
      return Reflect.set(target, prop, value, target);
    },
  });
}

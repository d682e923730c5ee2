/**
 * The Redis connection of a server whose instances share state (`<PREFIX>_REDIS_URL`,
 * shared-state.ts), and the shared stores built on it: justifications
 * (redis-justifications.ts), limits (redis-counters.ts) and change notifications (redis-bus.ts).
 *
 * - Start: {@link connectRedis} connects within `<PREFIX>_REDIS_TIMEOUT_MS` or throws a message
 *   naming the URL (without its password) and the cause; main.ts then exits with code 1.
 * - Serving: a lost connection is re-established automatically (backing off up to 2 s, forever).
 *   Commands are never queued while disconnected (they fail at once) and each is bounded by the
 *   timeout, so no call waits on Redis longer than that; the stores turn a failure into a
 *   `SharedStateError` that names the cause. Losing and regaining the connection is logged once each.
 * - Durability: an acknowledged write is as durable as the Redis server makes it. Run Redis with
 *   `appendonly yes` and `appendfsync always` so that no acknowledged justification is lost when
 *   Redis crashes; the start logs a warning when the server reports it does not (or cannot tell).
 *
 * This file is copied verbatim into every generated project; it is loaded only when the URL is set.
 */

import type { RedisOptions } from 'ioredis';
import { Redis } from 'ioredis';
import { log } from '../core/log.js';
import type { RedisSettings } from '../shared/shared-state.js';
import { SharedStateError } from '../shared/shared-state.js';

/** A connected Redis, with what the shared stores need to know. */
export type SharedRedis = {
  readonly client: Redis;
  readonly settings: RedisSettings;
  /** `<prefix>:<parts…>` */
  key(...parts: string[]): string;
  /** A second connection for subscribing (a subscribed connection runs no other command); closed with this one. */
  subscriber(): Redis;
  /** Closes every connection; pending commands fail. */
  close(): Promise<void>;
};

/** How long to wait before reconnecting after `attempt` failures: 50 ms doubling, at most 2 s. */
export function backoff(attempt: number): number {
  return Math.min(2_000, 50 * 2 ** Math.min(6, Math.max(0, attempt - 1)));
}

/** The options of every connection. */
function options(settings: RedisSettings, name: string): RedisOptions {
  return {
    lazyConnect: true,
    connectionName: name.replace(/[^A-Za-z0-9_.-]/g, '_'),
    connectTimeout: settings.timeoutMs,
    commandTimeout: settings.timeoutMs,
    // a command while disconnected fails at once instead of waiting for the connection
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: backoff,
    // a read-only replica promoted away: reconnect to find the primary again
    reconnectOnError: (err: Error) => /READONLY/.test(err.message),
  };
}

/** Logs the connection going down and coming back, once per episode. */
function watch(client: Redis, what: string, shown: string): void {
  let down = false;
  client.on('error', (err: Error) => {
    if (down) return;
    down = true;
    log('warn', `redis: ${what} connection to ${shown} failed (${err.message}); reconnecting, and calls that need it are refused meanwhile`);
  });
  client.on('end', () => void (down = true));
  client.on('ready', () => {
    if (!down) return;
    down = false;
    log('info', `redis: ${what} connection to ${shown} is back`);
  });
}

/** The cause of a failed command, without secrets. */
export function describeFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/Command timed out/i.test(message)) return 'a command did not complete in time';
  if (/enableOfflineQueue|Connection is closed|Stream isn't writeable|not ready|ECONNREFUSED|ECONNRESET|EPIPE/i.test(message)) return 'the connection is down';
  return message.slice(0, 200);
}

/** A `SharedStateError` for a failed command of `what` (e.g. "the limits"). */
export function unavailable(settings: RedisSettings, err: unknown): SharedStateError {
  return new SharedStateError(`the shared store (Redis at ${settings.shown}) is unavailable: ${describeFailure(err)}`, { cause: err });
}

/** Connects to Redis, or throws naming the URL and the cause (the client is then closed). */
export async function connectRedis(settings: RedisSettings, name: string): Promise<SharedRedis> {
  const client = new Redis(settings.url, options(settings, name));
  let failure: Error | undefined;
  const onError = (err: Error) => void (failure ??= err);
  client.on('error', onError);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${settings.timeoutMs} ms`)), settings.timeoutMs);
      }),
    ]);
    await client.ping();
  } catch (err) {
    client.disconnect();
    const cause = failure ?? (err instanceof Error ? err : new Error(String(err)));
    throw new Error(
      `cannot reach Redis at ${settings.shown} (${settings.variables.url}): ${cause.message}; start Redis, or unset ${settings.variables.url} to keep shared state in this process`,
    );
  } finally {
    clearTimeout(timer);
    client.off('error', onError);
  }
  watch(client, 'the', settings.shown);
  void checkDurability(client, settings);
  const subscribers: Redis[] = [];
  return {
    client,
    settings,
    key: (...parts) => [settings.prefix, ...parts].join(':'),
    subscriber: () => {
      // a subscriber queues its SUBSCRIBE until connected (it must resubscribe after a reconnect)
      const sub = new Redis(settings.url, { ...options(settings, `${name}-sub`), enableOfflineQueue: true, autoResubscribe: true });
      watch(sub, 'the subscriber', settings.shown);
      subscribers.push(sub);
      void sub.connect().catch(() => undefined);
      return sub;
    },
    close: async () => {
      for (const c of [...subscribers, client]) c.disconnect();
    },
  };
}

/** Warns when Redis does not fsync every write (an acknowledged justification could be lost in a crash of Redis). */
async function checkDurability(client: Redis, settings: RedisSettings): Promise<void> {
  try {
    const [, aof] = (await client.config('GET', 'appendonly')) as [string, string];
    const [, sync] = (await client.config('GET', 'appendfsync')) as [string, string];
    if (aof !== 'yes' || sync !== 'always')
      log(
        'warn',
        `redis: ${settings.shown} runs with appendonly ${aof}, appendfsync ${sync}: a justification acknowledged just before Redis crashes may be lost; run it with appendonly yes and appendfsync always`,
      );
  } catch {
    log('info', `redis: cannot read the persistence settings of ${settings.shown} (CONFIG GET refused); justifications are as durable as its persistence`);
  }
}

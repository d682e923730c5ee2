/**
 * Everything several instances share through Redis, made once at start (main.ts, when
 * `<PREFIX>_REDIS_URL` is set): the connection, the justification store factory, the limits'
 * counters, the task store, the used round-state nonces and the change-notification bus.
 *
 * This file is copied verbatim into every generated project; it is loaded only when the URL is set.
 */

import type { JustificationStoreOptions, Justifications } from '../reflection/reflection-store.js';
import type { RedisSettings } from '../shared/shared-state.js';
import type { TaskBounds } from '../tasks/tasks-store.js';
import type { SharedRedis } from './redis.js';
import { connectRedis } from './redis.js';
import { RedisBus } from './redis-bus.js';
import { RedisCounters } from './redis-counters.js';
import { RedisJustifications } from './redis-justifications.js';
import { RedisRoundNonces } from './redis-rounds.js';
import { RedisTaskStore } from './redis-tasks.js';

/** The shared stores of this process. */
export type SharedStores = {
  readonly redis: SharedRedis;
  /** Makes the reflection gate's store for its declared domains. */
  readonly makeStore: (domains: readonly string[], opts: JustificationStoreOptions) => Justifications;
  readonly counters: RedisCounters;
  /** MCP task state. */
  readonly tasks: RedisTaskStore;
  /** Nonces of round states already used (each continues its call once). */
  readonly rounds: RedisRoundNonces;
  /** Change notifications between instances. */
  readonly bus: RedisBus;
  close(): Promise<void>;
};

/** Connects (or throws naming the URL and the cause) and makes the shared stores; tasks within `taskBounds` (`<PREFIX>_MAX_TASKS` / `_TASK_TTL_MS`). */
export async function sharedStores(settings: RedisSettings, name: string, taskBounds?: TaskBounds): Promise<SharedStores> {
  const redis = await connectRedis(settings, name);
  const bus = new RedisBus(redis);
  return {
    redis,
    makeStore: (domains, opts) => new RedisJustifications(redis, domains, opts),
    counters: new RedisCounters(redis),
    tasks: new RedisTaskStore(redis, taskBounds),
    rounds: new RedisRoundNonces(redis),
    bus,
    close: async () => {
      bus.close();
      await redis.close();
    },
  };
}

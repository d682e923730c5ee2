/**
 * Shared state of several instances of one server (`<PREFIX>_REDIS_URL`): its settings and the
 * error a shared store throws while it cannot be reached. No dependency: the Redis client
 * (redis.ts, ioredis) is loaded only when the URL is set.
 *
 * - `<PREFIX>_REDIS_URL`: `redis://[user:password@]host[:port][/db]`, or `rediss://…` for TLS.
 *   Messages show it without user name, password, query or fragment.
 *   Unset: everything stays in this process, as it always did.
 * - `<PREFIX>_REDIS_PREFIX`: the prefix of every key and channel (default: the server's name), so
 *   several servers can share one Redis.
 * - `<PREFIX>_REDIS_FAIL_OPEN`: `limits` lets calls through their limits while Redis cannot be
 *   reached (logged); unset, they are refused (fail closed). Justifications always fail closed.
 * - `<PREFIX>_REDIS_LEASE_MS`: how long a concurrency slot outlives an instance that died holding
 *   it (the holder renews it every third of that while the call runs).
 * - `<PREFIX>_REDIS_TIMEOUT_MS`: bound on connecting and on each command; a call waiting on Redis
 *   never waits longer.
 *
 * This file is copied verbatim into every generated project.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { read, readPositiveInteger } from '../process/settings.js';
import { SERVE_DEFAULTS, settingNames } from '../process/variables.js';

/** Defaults of the Redis settings (declared with the variables). */
export const REDIS_DEFAULTS = { leaseMs: SERVE_DEFAULTS.redisLeaseMs, timeoutMs: SERVE_DEFAULTS.redisTimeoutMs } as const;

/** The resolved Redis settings. */
export type RedisSettings = {
  /** The URL as set (secret: it may hold a password). */
  readonly url: string;
  /** The URL without user name, password, query or fragment, for messages. */
  readonly shown: string;
  /** Prefix of every key and channel, without the trailing `:`. */
  readonly prefix: string;
  /** Whether limits let calls through while Redis cannot be reached. */
  readonly failOpenLimits: boolean;
  readonly leaseMs: number;
  readonly timeoutMs: number;
  /** The variable names, for messages. */
  readonly variables: { readonly url: string; readonly prefix: string; readonly failOpen: string; readonly leaseMs: string; readonly timeoutMs: string };
};

/** A setting with an unusable value (main.ts logs it and exits). */
export class RedisSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisSettingsError';
  }
}

/**
 * A shared store could not answer (Redis down, a command past its timeout). Its message names
 * the cause without the URL's password; the pipeline turns it into an `isError` result.
 */
export class SharedStateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SharedStateError';
  }
}

/**
 * `url` without user name, password, query or fragment: ioredis also reads `?password=` and
 * `?username=` from the query, so none of it is shown.
 */
export function showRedisUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  copy.search = '';
  copy.hash = '';
  return copy.href;
}

/** The secret parts of a Redis URL as set: the URL, its password and the query's `password` / `username` values (kept out of the audit trail). */
export function redisUrlSecrets(url: string): string[] {
  const out = new Set<string>([url]);
  if (!URL.canParse(url)) return [...out];
  const parsed = new URL(url);
  let password = parsed.password;
  try {
    password = decodeURIComponent(password);
  } catch {
    // a malformed escape: the raw text is what is kept out
  }
  if (password) out.add(password);
  for (const name of ['password', 'username']) {
    for (const value of parsed.searchParams.getAll(name)) if (value) out.add(value);
  }
  return [...out];
}

/**
 * The Redis settings of `envPrefix`, or `undefined` when `<PREFIX>_REDIS_URL` is unset (the other
 * variables are then ignored). Throws {@link RedisSettingsError} naming the variable otherwise.
 */
export function redisSettings(envPrefix: string, serverName: string, env: NodeJS.ProcessEnv): RedisSettings | undefined {
  const names = settingNames(envPrefix);
  const variables = {
    url: names.redisUrl,
    prefix: names.redisPrefix,
    failOpen: names.redisFailOpen,
    leaseMs: names.redisLeaseMs,
    timeoutMs: names.redisTimeoutMs,
  };
  const url = read(env, variables.url);
  if (url === undefined) return undefined;
  const expected = `${variables.url} must be redis://[user:password@]host[:port][/db] or rediss://… (TLS)`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RedisSettingsError(`${expected} (the value is not shown: it may hold a password)`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new RedisSettingsError(`${expected} (got scheme ${JSON.stringify(parsed.protocol.slice(0, -1))})`);
  if (parsed.hostname === '') throw new RedisSettingsError(`${expected}: the host is missing`);
  const prefix = read(env, variables.prefix) ?? serverName;
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(prefix))
    throw new RedisSettingsError(`${variables.prefix} may hold 1-64 of A-Z a-z 0-9 _ . : - (got ${JSON.stringify(prefix)})`);
  const failOpen = read(env, variables.failOpen);
  if (failOpen !== undefined && failOpen !== 'limits')
    throw new RedisSettingsError(
      `${variables.failOpen} may only be "limits" (calls pass their limits while Redis is unreachable); justifications always fail closed (got ${JSON.stringify(failOpen)})`,
    );
  return {
    url,
    shown: showRedisUrl(parsed),
    prefix: prefix.replace(/:+$/, ''),
    failOpenLimits: failOpen === 'limits',
    leaseMs: readPositiveInteger(env, variables.leaseMs, REDIS_DEFAULTS.leaseMs, 'milliseconds'),
    timeoutMs: readPositiveInteger(env, variables.timeoutMs, REDIS_DEFAULTS.timeoutMs, 'milliseconds'),
    variables,
  };
}

/** This process's instance id: host name, process id and a random part (in audit lines, slot leases and bus messages). */
export const INSTANCE_ID = `${hostname()
  .replace(/[^A-Za-z0-9_.-]/g, '_')
  .slice(0, 48)}-${process.pid}-${randomBytes(3).toString('hex')}`;

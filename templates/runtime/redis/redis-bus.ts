/**
 * Change notifications between instances: the v2 SDK's `ServerEventBus` over Redis pub/sub
 * (channel `<prefix>:events`), so a change seen by one instance (`notifyResourceUpdated`, a
 * polled resource, a list change) reaches the subscribed clients of every instance, in both eras
 * (subscriptions.ts delivers it to legacy sessions, stdio connections and modern listen streams).
 *
 * `publish` delivers to this instance's listeners at once (whether or not Redis is reachable) and
 * publishes the event with this instance's id; events from other instances are delivered to the
 * local listeners when they arrive, this instance's own are skipped. Pub/sub is fire-and-forget:
 * an event published while Redis is unreachable reaches only this instance's clients (logged).
 * Messages are checked before delivery (known kind, a string URI of at most 8 KiB).
 *
 * This file is copied verbatim into every generated project; it is loaded only when the URL is set.
 */
import { randomBytes } from 'node:crypto';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { InMemoryServerEventBus } from '@modelcontextprotocol/server';
import type { Redis } from 'ioredis';
import { log } from '../core/log.js';
import { INSTANCE_ID } from '../shared/shared-state.js';
import type { SharedRedis } from './redis.js';
import { describeFailure } from './redis.js';

const KINDS = new Set(['tools_list_changed', 'prompts_list_changed', 'resources_list_changed', 'resource_updated']);

/** Longest URI carried. */
const MAX_URI = 8192;

/** The event in a message from another instance, or `undefined` (own, malformed, unknown kind). */
export function parseMessage(text: string, self: string): ServerEvent | undefined {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof m !== 'object' || m === null) return undefined;
  const { from, event } = m as { from?: unknown; event?: unknown };
  if (typeof from !== 'string' || from === self || typeof event !== 'object' || event === null) return undefined;
  const { kind, uri } = event as { kind?: unknown; uri?: unknown };
  if (typeof kind !== 'string' || !KINDS.has(kind)) return undefined;
  if (kind === 'resource_updated') return typeof uri === 'string' && uri.length <= MAX_URI ? { kind, uri } : undefined;
  return { kind } as ServerEvent;
}

/** The bus (module comment). */
export class RedisBus implements ServerEventBus {
  readonly #local = new InMemoryServerEventBus((err) => log('warn', 'redis bus: a listener failed', err));
  readonly #redis: SharedRedis;
  readonly #channel: string;
  /** This bus's id in messages (the instance's, plus a random part: two buses of one process are two senders). */
  readonly #id = `${INSTANCE_ID}:${randomBytes(4).toString('hex')}`;
  #sub: Redis | undefined;
  readonly #subscribed: Promise<void>;
  #warned = 0;

  constructor(redis: SharedRedis) {
    this.#redis = redis;
    this.#channel = redis.key('events');
    const sub = (this.#sub = redis.subscriber());
    sub.on('message', (channel: string, text: string) => {
      if (channel !== this.#channel) return;
      const event = parseMessage(text, this.#id);
      if (event !== undefined) this.#local.publish(event);
    });
    this.#subscribed = sub.subscribe(this.#channel).then(
      () => undefined,
      (err: unknown) => log('warn', `redis bus: cannot subscribe to ${this.#channel}: ${describeFailure(err)}`),
    );
  }

  /** Resolves once the subscription is active (events published after it reach this instance). */
  ready(): Promise<void> {
    return this.#subscribed;
  }

  publish(event: ServerEvent): void {
    this.#local.publish(event);
    const kind = event.kind;
    const message = JSON.stringify({ from: this.#id, event: kind === 'resource_updated' ? { kind, uri: event.uri } : { kind } });
    this.#redis.client.publish(this.#channel, message).catch((err: unknown) => {
      const now = Date.now();
      if (now - this.#warned < 60_000) return;
      this.#warned = now;
      log('warn', `redis bus: a ${kind} event reached only this instance's clients: ${describeFailure(err)}`);
    });
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    return this.#local.subscribe(listener);
  }

  close(): void {
    this.#sub?.disconnect();
    this.#sub = undefined;
  }
}

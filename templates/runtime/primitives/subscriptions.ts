/**
 * Resource subscriptions, in both eras, for the resources that can change (those a handler
 * computes: fixed-URI handler resources and template resources).
 *
 * - A change is signalled by `notifyResourceUpdated(uri)` (exported here: any handler module or
 *   background code of the project may call it), or found by polling: a handler resource with
 *   `refreshMs` is read every `refreshMs` while someone may be listening, and a change of the
 *   SHA-256 of what it returned is a change (the first read is the baseline; a failing read
 *   changes nothing). One read at a time per resource, one hash per resource: bounded.
 * - Legacy (≤ 2025-11-25): `resources/subscribe` / `resources/unsubscribe` on the session's
 *   instance (stdio connection or HTTP session); the URI must be one the server serves and the
 *   request may read (the same gate as `resources/read`: concerns and the policy's access rules),
 *   else the error `resources/read` would give. `notifications/resources/updated` goes to the
 *   instance for each subscribed URI that changes, until it unsubscribes or closes.
 * - 2026-07-28: `subscriptions/listen` is served by the SDK's entries. Over HTTP, changes are
 *   published on the {@link ResourceChanges.bus} the HTTP handler's listen streams subscribe to,
 *   and the listen request is checked first ({@link ResourceChanges.checkListen}, as
 *   `resources/subscribe` is). Over stdio, the connection's instance sends the notification and
 *   the SDK's router delivers it to the listen streams that asked for the URI (only URIs the
 *   connection may read are sent).
 *
 * This file is copied verbatim into every generated project whose resources can change.
 */
import { createHash } from 'node:crypto';
import type { Server, ServerContext, ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { InMemoryServerEventBus, ProtocolError, ProtocolErrorCode, ResourceNotFoundError, UriTemplate } from '@modelcontextprotocol/server';
import { log } from '../core/log.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import { OPEN_GATE } from '../core/primitive-gate.js';
import type { ResourceDefinition, ResourceTemplateDefinition } from './resources.js';
import { toContents } from './resources.js';

/** Shortest polling interval (ms) a resource may ask for. */
export const MIN_REFRESH_MS = 100;

/** Most URIs one legacy session may be subscribed to at once (the SDK's bound on listen streams). */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 1024;

/** Checks that a request may subscribe to `uri`; throws the error `resources/read` would give. */
export type SubscribeCheck = (uri: string, ctx?: ServerContext) => void;

/** Demand key of a listener that may want any URI (a modern listen stream, a modern stdio connection). */
const ANY = '*';

/** The process-wide feed of resource changes (one per generated server: {@link resourceChanges}). */
export class ResourceChanges {
  private readonly listeners = new Set<(uri: string) => void>();
  private readonly demand = new Map<string, number>();
  private readonly pollers = new Map<string, Poller>();
  private readonly checks = new WeakMap<Server, SubscribeCheck>();
  private readonly inner = new InMemoryServerEventBus((err) => log('warn', 'subscriptions: a listener failed', err));
  /** The bus shared with other instances (redis-bus.ts), once {@link share} is called. */
  private shared: ServerEventBus | undefined;

  /** The bus of the HTTP handler's `subscriptions/listen` streams: an open stream makes every polled resource poll. */
  readonly bus: ServerEventBus = {
    publish: (event: ServerEvent) => this.inner.publish(event),
    subscribe: (listener) => {
      const stop = this.inner.subscribe(listener);
      const unwant = this.want(ANY);
      return () => {
        stop();
        unwant();
      };
    },
  };

  /**
   * Tells every listener (legacy subscribers, stdio connections, HTTP listen streams) that `uri`
   * changed; with a shared bus, those of every instance.
   */
  updated(uri: string): void {
    if (this.shared !== undefined) this.shared.publish({ kind: 'resource_updated', uri });
    else this.deliver(uri);
  }

  /**
   * Sends changes through `bus` (several instances sharing state: redis-bus.ts) instead of only
   * to this process's listeners; the bus delivers this instance's changes and other instances'
   * to {@link deliver}. Once per process.
   */
  share(bus: ServerEventBus): void {
    if (this.shared !== undefined) return;
    this.shared = bus;
    bus.subscribe((event) => {
      if (event.kind === 'resource_updated') this.deliver(event.uri);
      else this.inner.publish(event);
    });
  }

  /** Delivers a change to this process's listeners. */
  private deliver(uri: string): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(uri);
      } catch (err) {
        log('warn', 'subscriptions: a listener failed', err);
      }
    }
    this.inner.publish({ kind: 'resource_updated', uri });
  }

  /** Calls `listener` with each changed URI until the returned function is called. */
  listen(listener: (uri: string) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Declares that someone listens for `uri` (or any URI: `*`) until the returned function is called: polling runs while someone may. */
  want(uri: string): () => void {
    this.demand.set(uri, (this.demand.get(uri) ?? 0) + 1);
    this.rebalance();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.demand.get(uri) ?? 1) - 1;
      if (left > 0) this.demand.set(uri, left);
      else this.demand.delete(uri);
      this.rebalance();
    };
  }

  /** Polls `def` (a handler resource with `refreshMs`) while someone listens for its URI. */
  poll(def: ResourceDefinition & { readonly refreshMs: number; readonly handler: NonNullable<ResourceDefinition['handler']> }): void {
    if (this.pollers.has(def.uri)) return;
    this.pollers.set(def.uri, new Poller(def, (uri) => this.updated(uri)));
    this.rebalance();
  }

  /** Remembers how `server` checks a subscription (installSubscriptions registers it). */
  register(server: Server, check: SubscribeCheck): void {
    this.checks.set(server, check);
  }

  /**
   * Checks the `resourceSubscriptions` of a `subscriptions/listen` request's params against the
   * check `server` (an instance made for the request's client) registered: throws the error
   * `resources/subscribe` would give for the first URI it may not read. Other params pass.
   */
  checkListen(server: Server, params: unknown): void {
    const check = this.checks.get(server);
    const wanted = (params as { notifications?: { resourceSubscriptions?: unknown } } | undefined)?.notifications?.resourceSubscriptions;
    if (check === undefined || !Array.isArray(wanted)) return;
    for (const uri of wanted) if (typeof uri === 'string') check(uri);
  }

  private rebalance(): void {
    const any = (this.demand.get(ANY) ?? 0) > 0;
    for (const [uri, poller] of this.pollers) poller.active(any || (this.demand.get(uri) ?? 0) > 0);
  }
}

/** Reads one resource every `refreshMs` while active and reports a change of its content's hash. */
class Poller {
  private timer: NodeJS.Timeout | undefined;
  private hash: string | undefined;
  private busy = false;
  private generation = 0;

  constructor(
    private readonly def: ResourceDefinition & { readonly refreshMs: number; readonly handler: NonNullable<ResourceDefinition['handler']> },
    private readonly changed: (uri: string) => void,
  ) {}

  active(on: boolean): void {
    if (on === (this.timer !== undefined)) return;
    this.generation++;
    if (!on) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.hash = undefined;
      return;
    }
    // the baseline at once, so that a change right after subscribing is seen
    void this.tick();
    this.timer = setInterval(() => void this.tick(), Math.max(MIN_REFRESH_MS, this.def.refreshMs));
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    const generation = this.generation;
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), Math.max(MIN_REFRESH_MS, this.def.refreshMs) * 10);
    try {
      const content = toContents(this.def.uri, await this.def.handler(new URL(this.def.uri), backgroundContext(controller.signal)), this.def.mimeType);
      const hash = createHash('sha256').update(JSON.stringify(content)).digest('hex');
      if (generation !== this.generation) return;
      const before = this.hash;
      this.hash = hash;
      if (before !== undefined && before !== hash) this.changed(this.def.uri);
    } catch (err) {
      log('debug', `subscriptions: polling ${this.def.uri} failed; its last content stands`, err);
    } finally {
      clearTimeout(timeout);
      this.busy = false;
    }
  }
}

/** The context of a handler run by the poller: no client to ask, nothing to notify; logs go to stderr. */
function backgroundContext(signal: AbortSignal): ServerContext {
  const noClient = () => Promise.reject(new Error('a refresh poll has no client to ask'));
  return {
    mcpReq: {
      id: 'mcpgen-refresh',
      method: 'resources/read',
      requestState: () => undefined,
      signal,
      send: noClient as ServerContext['mcpReq']['send'],
      notify: () => Promise.resolve(),
      log: (level, data) =>
        Promise.resolve(
          log(
            level === 'debug' || level === 'info' || level === 'warning' ? (level === 'warning' ? 'warn' : level) : 'error',
            'resource handler (refresh poll)',
            data,
          ),
        ),
      elicitInput: noClient,
      requestSampling: noClient,
    },
  };
}

/** The feed of this process. */
export const resourceChanges = new ResourceChanges();

/**
 * Tells subscribers that the resource at `uri` changed (they then read it again): call it from a
 * handler that changed what a resource shows, or from code that learns of a change.
 */
export function notifyResourceUpdated(uri: string): void {
  resourceChanges.updated(uri);
}

/** Options of {@link installSubscriptions}. */
export type InstallSubscriptionsOptions = {
  /** The gate of `resources/read` (concerns, the policy's access rules); default open. */
  readonly gate?: PrimitiveGate;
  /** The feed; default {@link resourceChanges}. */
  readonly changes?: ResourceChanges;
};

/**
 * Wires subscriptions into one instance: `resources/subscribe` and `resources/unsubscribe` for a
 * legacy one, the notifications for a modern stdio connection (`connection`: the instance lives
 * as long as its client; a modern HTTP instance serves one request and gets nothing). Starts the
 * pollers of `refreshMs` resources (once per process).
 */
export function installSubscriptions(
  server: Server,
  instance: { readonly era: 'legacy' | 'modern'; readonly headers?: unknown },
  defs: { readonly resources?: readonly ResourceDefinition[]; readonly templates?: readonly ResourceTemplateDefinition[] },
  opts: InstallSubscriptionsOptions = {},
): void {
  const changes = opts.changes ?? resourceChanges;
  const gate = opts.gate ?? OPEN_GATE;
  const byUri = new Map((defs.resources ?? []).map((r) => [r.uri, r]));
  const templates = (defs.templates ?? []).map((t) => ({ def: t, template: new UriTemplate(t.uriTemplate) }));
  for (const r of defs.resources ?? []) {
    const { handler, refreshMs } = r as ResourceDefinition & { refreshMs?: number };
    if (handler !== undefined && refreshMs !== undefined) changes.poll({ ...r, handler, refreshMs });
  }
  const check: SubscribeCheck = (uri, ctx) => {
    if (byUri.has(uri)) return gate.assertAllowed('resources', uri, ctx);
    const t = templates.find(({ template }) => template.match(uri) !== null);
    if (t === undefined) throw new ResourceNotFoundError(uri, `Resource not found: ${uri}`);
    gate.assertAllowed('resourceTemplates', t.def.uriTemplate, ctx);
  };
  changes.register(server, check);
  // over stdio the instance is the connection (no HTTP headers); over HTTP a modern instance is one request
  const connection = instance.headers === undefined;
  if (instance.era === 'modern' && !connection) return;

  const stops: Array<() => void> = [];
  const previous = server.onclose;
  server.onclose = () => {
    previous?.();
    for (const stop of stops.splice(0)) stop();
  };
  if (instance.era === 'modern') {
    // the SDK's stdio router passes the notification to the listen streams that asked for the URI
    stops.push(changes.want(ANY));
    stops.push(
      changes.listen((uri) => {
        if (!readable(check, uri)) return;
        server
          .notification({ method: 'notifications/resources/updated', params: { uri } })
          .catch((err: unknown) => log('debug', 'subscriptions: notification not sent', err));
      }),
    );
    return;
  }

  const subscribed = new Map<string, () => void>();
  stops.push(() => {
    for (const unwant of subscribed.values()) unwant();
    subscribed.clear();
  });
  stops.push(
    changes.listen((uri) => {
      if (!subscribed.has(uri)) return;
      server.sendResourceUpdated({ uri }).catch((err: unknown) => log('debug', 'subscriptions: notification not sent', err));
    }),
  );
  server.setRequestHandler('resources/subscribe', (request, ctx) => {
    const { uri } = request.params;
    check(uri, ctx);
    if (!subscribed.has(uri) && subscribed.size >= MAX_SUBSCRIPTIONS_PER_SESSION)
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `Subscription limit reached (${MAX_SUBSCRIPTIONS_PER_SESSION} URIs per session); unsubscribe from one first`,
      );
    if (!subscribed.has(uri)) subscribed.set(uri, changes.want(uri));
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', (request) => {
    const { uri } = request.params;
    subscribed.get(uri)?.();
    subscribed.delete(uri);
    return {};
  });
}

/** Whether the check lets the connection read `uri`. */
function readable(check: SubscribeCheck, uri: string): boolean {
  try {
    check(uri);
    return true;
  } catch {
    return false;
  }
}

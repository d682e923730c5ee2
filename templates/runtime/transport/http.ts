/**
 * Streamable HTTP transport of the generated server, serving both protocol eras on one endpoint.
 *
 * - Modern (2026-07-28) requests go statelessly through the SDK's `createMcpHandler(…, { legacy:
 *   'reject' })`: a fresh server instance per request (factory `era: 'modern'`).
 * - Legacy (2025-era, as the SDK's `isLegacyRequest` tells them: {@link isLegacy}) requests go to SESSIONFUL `NodeStreamableHTTPServerTransport`s:
 *   `initialize` opens a session (`Mcp-Session-Id`) with its own server instance (factory
 *   `era: 'legacy'`), so server→client requests inside a call (sampling) and per-session
 *   notifications (`sessions()` → `sendToolListChanged()`) work. GET opens the session's SSE
 *   stream, DELETE ends the session. Sessions close after `sessionIdleMs` without a request (the
 *   client then gets 404 for that id), at most `maxSessions` are open (an extra `initialize` gets
 *   503; open sessions are never evicted). A session is bound to the identity that opened it
 *   (http-sessions.ts).
 * - Modern `subscriptions/listen` streams for task ids are served before the SDK's router
 *   (http-task-listen.ts).
 *
 * Gates, in order: shutting down → 503; Host not a loopback name nor in `allowedHosts` → 403;
 * Origin present and neither loopback nor in `allowedOrigins` → 403; `GET /healthz` → 200 (exempt
 * from tokens only); other paths → 404 (with `tokens`, OAuth discovery paths say there is no
 * OAuth); with `tokens`, a missing/wrong bearer → 401 whose body and `WWW-Authenticate`
 * `error_description` name `tokensFrom`, and a rate-limited log line (http-auth.ts); body over `maxBodyBytes` (4 MiB unless set) → 413, before it is parsed. No CORS headers are ever sent.
 *
 * What a request handler sees (checked by test/unit/runtime/http.test.ts):
 * - `ctx.http.authInfo` = `{ token, clientId: identity, scopes: [], expiresAt }` in both eras when
 *   tokens are configured (absent without tokens); the factory also gets `identity`.
 * - Request headers: `ctx.http.req` is the web `Request` of the HTTP request that carried the
 *   message, in BOTH eras; for a legacy session that is each POST's own request (not the
 *   `initialize` one), so per-request headers must be read from `ctx.http.req.headers`. The
 *   factory's `headers` are those of the request being served for modern, but only those of the
 *   `initialize` request for a legacy session.
 *
 * This module routes a request through the gates, reads its body and picks the era; reading and
 * writing node:http messages is http-io.ts. Every log line goes to stderr through `log.ts`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { AuthInfo, Server, ServerEventBus } from '@modelcontextprotocol/server';
import { createMcpHandler } from '@modelcontextprotocol/server';
import type { Era } from '../core/era.js';
import { log } from '../core/log.js';
import type { ResourceServer } from '../oauth/oauth-resource.js';
import type { ScopeNeeds } from '../oauth/oauth-scopes.js';
import { scopeShortfall } from '../oauth/oauth-scopes.js';
import { jsonNestsDeeper, MAX_ARGUMENT_DEPTH, MAX_BODY_DEPTH } from '../operation/argument-limits.js';
import type { TaskListen } from '../tasks/tasks-stdio.js';
import { bearerChecker, hostAllowed, isOAuthPath, noOAuth, originAllowed, refusal, refusalLog } from './http-auth.js';
import type { HeaderView } from './http-io.js';
import { header, headerView, isLegacy, isMethod, readBody, reply, rpcError, send, webHeaders } from './http-io.js';
import { legacySessions } from './http-sessions.js';
import { listenForTasks } from './http-task-listen.js';

/** Makes a fresh server instance: one per modern request, one per legacy session. `identity` is the client identity of the request (from its bearer token; undefined without tokens). `headers` are the HTTP request headers. */
export type HttpServerFactory = (ctx: { era: Era; identity?: string; headers: Headers }) => Server | Promise<Server>;
export interface HttpOptions {
  name: string;
  version: string; // for /healthz and logs
  host: string; // default used by callers: '127.0.0.1'
  port: number; // 0 = ephemeral
  allowedHosts?: readonly string[]; // Host header values accepted besides loopback names (needed when bound beyond loopback)
  allowedOrigins?: readonly string[]; // Origin values accepted besides loopback origins
  tokens?: ReadonlyMap<string, string>; // bearer token -> identity; absent/empty = no auth
  oauth?: ResourceServer; // OAuth access tokens (oauth-resource.ts): verified besides the static tokens; metadata at /.well-known/oauth-protected-resource
  scopeNeeds?: ScopeNeeds; // what an OAuth token needs to call a tool, get a prompt, read a resource (oauth-scopes.ts): a request without it is 403 insufficient_scope
  sessionIdleMs?: number; // legacy session idle timeout, default 30 min
  maxSessions?: number; // cap on open legacy sessions, default 100
  maxSessionsPerClient?: number; // cap per client identity (with tokens), default 10: its least recently used session is closed for a new one
  drainMs?: number; // graceful shutdown bound, default 10_000
  path?: string; // MCP endpoint path, default '/mcp'
  maxBodyBytes?: number; // largest request body read, default 4 MiB; a longer one is refused unparsed (413)
  bodyLimitHint?: string; // what sets the body limit, for the 413 message (e.g. the argument-size variable)
  tokensFrom?: string; // where the client tokens are set, for the 401 message (e.g. 'PETS_HTTP_TOKENS (or PETS_HTTP_TOKENS_FILE)')
  now?: () => number; // clock of the refusal log's rate limit (tests)
  bus?: ServerEventBus; // change events of modern subscriptions/listen streams (resource subscriptions)
  unknownSession?: string; // said after 'Session not found' (several instances: sessions need sticky routing)
  precheck?: (body: unknown, ctx: { identity?: string; headers: HeaderView }) => { status: number; code: number; message: string; data?: unknown } | undefined; // refuses a modern request before the SDK serves it (x-mcp-header mismatch, a subscription the client may not read)
  taskListen?: TaskListen; // 2026-07-28 listen streams for task ids (tasks-tools.ts), served before the SDK's router, which knows none
}
export interface HttpHandle {
  readonly url: string; // e.g. http://127.0.0.1:PORT/mcp
  readonly port: number;
  sessionCount(): number;
  /** Each open legacy session's own server instance (to send it list_changed notifications). */
  sessions(): Iterable<Server>;
  /** Stops accepting, lets in-flight requests finish within drainMs (then aborts them), closes every session and the listener. */
  close(): Promise<void>;
}

/** Upper bound on a request body unless `maxBodyBytes` says otherwise. */
const MAX_BODY = 4 * 1024 * 1024;
/** `expiresAt` of static tokens (seconds): they do not expire. */
const FAR_FUTURE = 32_503_680_000;

export async function serveHttp(factory: HttpServerFactory, options: HttpOptions): Promise<HttpHandle> {
  const path = options.path ?? '/mcp';
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const maxSessions = options.maxSessions ?? 100;
  const perClient = options.maxSessionsPerClient ?? 10;
  const drainMs = options.drainMs ?? 10_000;
  const maxBody = options.maxBodyBytes ?? MAX_BODY;
  const check = options.tokens && options.tokens.size > 0 ? bearerChecker(options.tokens) : undefined;
  const logRefused = refusalLog((message, data) => log('warn', message, data), options.now);
  const sessions = legacySessions({
    open: (identity, headers) => factory({ era: 'legacy', identity, headers }),
    idleMs,
    maxSessions,
    perClient,
    ...(options.unknownSession !== undefined ? { unknownSession: options.unknownSession } : {}),
  });
  let inflight = 0;
  let onIdle: (() => void) | undefined;
  let closing = false;

  const modern = createMcpHandler((ctx) => factory({ era: ctx.era, identity: ctx.authInfo?.clientId, headers: ctx.requestInfo?.headers ?? new Headers() }), {
    legacy: 'reject',
    onerror: (error) => log('debug', 'http: modern request error', error),
    ...(options.bus ? { bus: options.bus } : {}),
  });
  const modernNode = toNodeHandler(modern, { maxRequestBodySize: maxBody, onerror: (error) => log('error', 'http: modern request failed', error) });

  /** Counts a request as in flight until its response closes (or `release` is called). */
  const track = (res: ServerResponse): (() => void) => {
    let done = false;
    inflight++;
    const release = (): void => {
      if (done) return;
      done = true;
      if (--inflight === 0) onIdle?.();
    };
    res.once('close', release);
    return release;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (closing) return reply(res, 503, rpcError(-32000, 'Server is shutting down'), { connection: 'close' });
    // only a path is served (origin-form); an absolute URL (`POST http://host/mcp?…`) is refused, and never logged
    if (!(req.url ?? '/').startsWith('/'))
      return reply(res, 400, rpcError(-32600, 'Bad Request: the request target must be a path such as /mcp, not a full URL'), { connection: 'close' });
    const host = header(req, 'host');
    const origin = header(req, 'origin');
    if (!hostAllowed(host, options.allowedHosts) || !originAllowed(origin, options.allowedOrigins)) {
      log('warn', 'http: refused a request with a disallowed Host or Origin', { host, origin });
      return reply(res, 403, rpcError(-32000, `Forbidden: ${hostAllowed(host, options.allowedHosts) ? 'Origin' : 'Host'} not allowed`));
    }
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (pathname === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      return reply(res, 200, { status: 'ok', name: options.name, version: options.version });
    }
    const oauth = options.oauth;
    const resource = oauth?.resourceOf(host, path);
    if (oauth !== undefined && pathname !== path) {
      const answer = await oauth.metadata(
        new Request(`http://localhost${req.url ?? '/'}`, { method: req.method ?? 'GET', headers: webHeaders(req) }),
        resource!,
      );
      if (answer !== undefined) return send(res, answer);
    }
    // clients try OAuth after a 401 whatever it says: a static-token server's discovery paths tell them there is none
    if (pathname !== path)
      return reply(res, 404, rpcError(-32000, check !== undefined && oauth === undefined && isOAuthPath(pathname) ? noOAuth(options.tokensFrom) : 'Not found'));
    let auth: AuthInfo | undefined;
    const authorization = header(req, 'authorization');
    const known = check?.(authorization);
    if (known?.ok) auth = { token: known.token, clientId: known.identity, scopes: [], expiresAt: FAR_FUTURE };
    else if (oauth !== undefined) {
      // a token no static entry knows is an OAuth access token, or refused
      const result = await oauth.authenticate(authorization, resource!);
      if (!result.ok) {
        logRefused({ remote: req.socket.remoteAddress, reason: 'oauth', detail: result.reason });
        return send(res, result.response);
      }
      auth = result.auth;
    } else if (check !== undefined) {
      const result = known!;
      if (!result.ok) {
        logRefused({ remote: req.socket.remoteAddress, reason: result.reason });
        const { message, challenge } = refusal(result.reason, options.tokensFrom);
        return reply(res, 401, rpcError(-32000, message), { 'www-authenticate': challenge });
      }
    }
    if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'DELETE') {
      return reply(res, 405, rpcError(-32000, 'Method not allowed'), { allow: 'GET, POST, DELETE' });
    }
    const release = track(res);
    let body: unknown;
    let raw: string | undefined;
    if (req.method === 'POST') {
      // refused before it is parsed: parsing is what costs (a body of a million empty objects is tens of MB in memory)
      raw = (await readBody(req, maxBody))?.toString('utf8');
      if (raw === undefined)
        return reply(res, 413, rpcError(-32000, `Payload too large (limit ${maxBody} bytes${options.bodyLimitHint ? `; ${options.bodyLimitHint}` : ''})`), {
          connection: 'close',
        });
      // before it is parsed: the SDK re-serialises the parsed body recursively
      if (jsonNestsDeeper(raw, MAX_BODY_DEPTH))
        return reply(
          res,
          400,
          rpcError(-32600, `Bad Request: the JSON nests more than ${MAX_BODY_DEPTH} levels deep (tool arguments may nest ${MAX_ARGUMENT_DEPTH})`),
        );
      try {
        body = JSON.parse(raw);
      } catch {
        return reply(res, 400, rpcError(-32700, 'Parse error: invalid JSON'));
      }
    }
    // a call of a tool whose scopes the OAuth token lacks: 403 before the transport starts answering, so that the host can step up
    const short = oauth !== undefined && options.scopeNeeds !== undefined ? scopeShortfall(body, options.scopeNeeds, auth) : undefined;
    if (short !== undefined) {
      log('info', 'http: refused a request without the scopes it needs (403)', { client: auth!.clientId, target: short.what, missing: short.missing });
      return send(res, oauth!.insufficientScope(resource!, short.what, short.needs, auth!.scopes));
    }
    // Long-lived streams do not hold a graceful shutdown: a GET stream, a modern subscription.
    if (req.method === 'GET' || isMethod(body, 'subscriptions/listen')) release();
    // no copy of the headers per request: a legacy session's are its initialize request's, copied when it opens; the precheck reads them in place
    if (isLegacy(req, body)) return sessions.route(req, res, body, auth, () => webHeaders(req));
    const refused = options.precheck?.(body, { ...(auth?.clientId !== undefined ? { identity: auth.clientId } : {}), headers: headerView(req) });
    if (refused)
      return reply(res, refused.status, {
        jsonrpc: '2.0',
        error: { code: refused.code, message: refused.message, ...(refused.data !== undefined ? { data: refused.data } : {}) },
        id: (body as { id?: unknown }).id ?? null,
      });
    const taskIds =
      options.taskListen && isMethod(body, 'subscriptions/listen')
        ? (body as { params?: { notifications?: { taskIds?: unknown } } }).params?.notifications?.taskIds
        : undefined;
    if (Array.isArray(taskIds) && taskIds.length > 0) return listenForTasks(res, body as { id?: unknown }, taskIds, auth?.clientId, options.taskListen!);
    await modernNode(Object.assign(req, { auth }), res, body);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // the path only: a query string may carry what was never meant for a log
      log('error', 'http: request failed', {
        method: req.method,
        path: (req.url ?? '').split('?')[0],
        error: error instanceof Error ? `${error.name}: ${error.message.replace(/\?\S*/g, '?…')}` : String(error),
      });
      if (!res.headersSent) reply(res, 500, rpcError(-32603, 'Internal server error'));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  http.on('error', (error) => log('error', 'http: server error', error));
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}${path}`;
  log('info', `http: ${options.name} ${options.version} listening`, { url });

  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    sessionCount: () => sessions.count(),
    sessions: () => sessions.servers(),
    close: () =>
      (closed ??= (async () => {
        closing = true;
        const listenerClosed = new Promise<void>((resolve) => http.close(() => resolve()));
        http.closeIdleConnections();
        if (inflight > 0) {
          const drained = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), drainMs);
            onIdle = () => {
              clearTimeout(timer);
              resolve(true);
            };
          });
          if (!drained) log('warn', 'http: drain time over, aborting in-flight requests', { inflight, drainMs });
        }
        await sessions.closeAll();
        await modern.close().catch((error: unknown) => log('warn', 'http: closing the modern handler failed', error));
        http.closeAllConnections();
        await listenerClosed;
        log('info', 'http: closed');
      })()),
  };
}

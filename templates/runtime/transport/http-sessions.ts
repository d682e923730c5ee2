/**
 * The legacy (2025-era) sessions of the HTTP transport: `initialize` opens a session
 * (`Mcp-Session-Id`) on a `NodeStreamableHTTPServerTransport` with its own server instance; later
 * requests carry its id and must come from the identity that opened it (else 404). A session
 * closes after `idleMs` without a request (a POST holds it open until it ends; a GET stream only
 * re-arms the timer); at most `maxSessions` are open (an extra `initialize` gets 503, open
 * sessions are never evicted for it), and one client identity holds at most `perClient`: its
 * least recently used idle session is closed for a new one (503 when all are busy).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { AuthInfo, Server } from '@modelcontextprotocol/server';
import { isInitializeRequest } from '@modelcontextprotocol/server';
import { log } from '../core/log.js';
import { header, reply, rpcError } from './http-io.js';

export type SessionOptions = {
  /** Makes the server instance of a new session: `identity` from the bearer token, `headers` of the `initialize` request. */
  open: (identity: string | undefined, headers: Headers) => Server | Promise<Server>;
  idleMs: number;
  maxSessions: number;
  perClient: number;
  /** Said after 'Session not found' (several instances: sessions need sticky routing). */
  unknownSession?: string;
};

/** The open legacy sessions of one HTTP server. */
export type LegacySessions = {
  /** Serves a legacy request: to its session, or `initialize` opening one. */
  route(req: IncomingMessage, res: ServerResponse, body: unknown, auth: AuthInfo | undefined, headers: () => Headers): Promise<void>;
  count(): number;
  /** Each open session's own server instance. */
  servers(): Server[];
  /** Closes every session (shutdown). */
  closeAll(): Promise<void>;
};

interface Session {
  id: string;
  server: Server;
  transport: NodeStreamableHTTPServerTransport;
  identity: string | undefined;
  active: number;
  /** When a request last used it (least recently used sessions of an identity are closed first). */
  used: number;
  timer?: NodeJS.Timeout;
  closed?: boolean;
}

export function legacySessions(options: SessionOptions): LegacySessions {
  const { idleMs, maxSessions, perClient } = options;
  const sessions = new Map<string, Session>();
  let opening = 0; // legacy sessions being initialized, counted against the cap
  /** When each identity's last refusal was logged: one line per identity per minute. */
  const refusalLogged = new Map<string, number>();
  const logRefusal = (identity: string | undefined, message: string, data: Record<string, unknown>): void => {
    const key = identity ?? '';
    const now = Date.now();
    if ((refusalLogged.get(key) ?? -Infinity) > now - 60_000) return;
    if (refusalLogged.size > 10_000) refusalLogged.clear();
    refusalLogged.set(key, now);
    log('warn', message, { ...data, ...(identity !== undefined ? { client: identity } : {}), note: 'logged once a minute per client' });
  };

  const dispose = async (s: Session, why: string): Promise<void> => {
    if (s.closed) return;
    s.closed = true;
    clearTimeout(s.timer);
    sessions.delete(s.id);
    log('info', `http: session closed (${why})`, { session: s.id, open: sessions.size });
    await s.server.close().catch((error: unknown) => log('warn', 'http: closing a session failed', error));
  };

  const arm = (s: Session): void => {
    clearTimeout(s.timer);
    s.timer = setTimeout(() => {
      if (s.active === 0) void dispose(s, 'idle');
    }, idleMs);
    s.timer.unref();
  };

  /** Marks a request of session `s`: POSTs hold the idle timer until they end; a GET stream only re-arms it. */
  const touch = (s: Session, req: IncomingMessage, res: ServerResponse): void => {
    if (req.method === 'GET') return arm(s);
    s.active++;
    clearTimeout(s.timer);
    res.once('close', () => {
      if (--s.active === 0 && !s.closed) arm(s);
    });
  };

  /** `headers` makes the request's web headers: read only when `initialize` opens a session. */
  const route = async (req: IncomingMessage, res: ServerResponse, body: unknown, auth: AuthInfo | undefined, headers: () => Headers): Promise<void> => {
    const sid = header(req, 'mcp-session-id');
    if (sid !== undefined) {
      const s = sessions.get(sid);
      if (s === undefined || s.identity !== auth?.clientId) return reply(res, 404, rpcError(-32001, `Session not found${options.unknownSession ?? ''}`));
      touch(s, req, res);
      s.used = Date.now();
      return s.transport.handleRequest(Object.assign(req, { auth }), res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return reply(res, 400, rpcError(-32000, 'Bad Request: Mcp-Session-Id header is required'));
    }
    // one client (token) may not hold every session: past its own cap its least recently used idle session makes room
    if (auth?.clientId !== undefined) {
      const own = [...sessions.values()].filter((x) => x.identity === auth.clientId);
      if (own.length >= perClient) {
        const idle = own.filter((x) => x.active === 0).sort((a, b) => a.used - b.used)[0];
        if (idle === undefined) {
          logRefusal(auth.clientId, 'http: this client holds its most sessions, all busy; initialize refused', { maxSessionsPerClient: perClient });
          return reply(
            res,
            503,
            rpcError(
              -32000,
              `Too many open sessions for this client (the limit is ${perClient}, all of them busy); close one or try again later`,
              (body as { id?: unknown }).id,
            ),
            { 'retry-after': '5' },
          );
        }
        await dispose(idle, 'replaced by a newer session of the same client');
      }
    }
    if (sessions.size + opening >= maxSessions) {
      logRefusal(auth?.clientId, 'http: session cap reached, initialize refused', { maxSessions });
      return reply(res, 503, rpcError(-32000, `Too many open sessions (the limit is ${maxSessions}); try again later`, (body as { id?: unknown }).id), {
        'retry-after': '60',
      });
    }
    opening++;
    try {
      const server = await options.open(auth?.clientId, headers());
      const session: Session = { id: '', server, transport: undefined as never, identity: auth?.clientId, active: 0, used: Date.now() };
      session.transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          session.id = id;
          sessions.set(id, session);
          touch(session, req, res);
          log('info', 'http: session opened', { session: id, open: sessions.size });
        },
        onsessionclosed: () => void dispose(session, 'deleted'),
      });
      session.transport.onerror = (error) => log('debug', 'http: legacy transport error', error);
      await server.connect(session.transport);
      await session.transport.handleRequest(Object.assign(req, { auth }), res, body);
      if (session.transport.sessionId === undefined) await server.close().catch(() => undefined);
    } finally {
      opening--;
    }
  };

  return {
    route,
    count: () => sessions.size,
    servers: () => [...sessions.values()].map((s) => s.server),
    closeAll: async () => {
      await Promise.all([...sessions.values()].map((s) => dispose(s, 'shutdown')));
    },
  };
}

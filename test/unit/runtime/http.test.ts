/**
 * The Streamable HTTP transport (templates/runtime/transport/http.ts) over real node HTTP on 127.0.0.1,
 * driven by the v1 SDK client (legacy, sessionful) and the v2 client pinned to 2026-07-28 (modern).
 */

import { request as httpRequest } from 'node:http';
import { connect as connectSocket } from 'node:net';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { inputRequired, inputResponse, ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type LogSink, setLogSink } from '../../../templates/runtime/core/log.js';
import { jsonNestsDeeper } from '../../../templates/runtime/operation/argument-limits.js';
import { type HttpHandle, type HttpOptions, type HttpServerFactory, serveHttp } from '../../../templates/runtime/transport/http.js';
import { bearerChecker, hostAllowed, originAllowed } from '../../../templates/runtime/transport/http-auth.js';

type Era = 'legacy' | 'modern';
type AnyClient = LegacyClient | ModernClient;

interface Seen {
  era: string;
  factoryIdentity?: string;
  authClientId?: string;
  authToken?: string;
  authScopes?: string[];
  authExpiresAt?: number;
  header?: string | null;
  factoryHeader?: string | null;
}

/** A tiny low-level v2 server: whoami (what the handler sees), sample (sampling round), slow. */
const factory: HttpServerFactory = ({ era, identity, headers }) => {
  const server = new Server({ name: 'http-test', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler('tools/list', () => ({
    tools: ['whoami', 'sample', 'slow'].map((name) => ({ name, inputSchema: { type: 'object' as const } })),
  }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const name = request.params.name;
    if (name === 'whoami') {
      const seen: Seen = {
        era,
        factoryIdentity: identity,
        authClientId: ctx.http?.authInfo?.clientId,
        authToken: ctx.http?.authInfo?.token,
        authScopes: ctx.http?.authInfo?.scopes,
        authExpiresAt: ctx.http?.authInfo?.expiresAt,
        header: ctx.http?.req?.headers.get('x-upstream-key'),
        factoryHeader: headers.get('x-upstream-key'),
      };
      return { content: [{ type: 'text', text: JSON.stringify(seen) }] };
    }
    if (name === 'sample') {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'llm');
      if (r.kind !== 'sampling') {
        return inputRequired({
          inputRequests: {
            llm: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 50 }),
          },
        });
      }
      return { content: [{ type: 'text', text: `from ${r.result.model}` }] };
    }
    if (name === 'slow') {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return { content: [{ type: 'text', text: 'slow done' }] };
    }
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
  });
  return server;
};

const handles: HttpHandle[] = [];
const clients: AnyClient[] = [];

async function serve(extra: Partial<HttpOptions> = {}): Promise<HttpHandle> {
  const h = await serveHttp(factory, { name: 'http-test', version: '1.2.3', host: '127.0.0.1', port: 0, ...extra });
  handles.push(h);
  return h;
}

async function connect(h: HttpHandle, era: Era, opts: { headers?: Record<string, string>; fetch?: typeof fetch; sampling?: boolean } = {}): Promise<AnyClient> {
  const url = new URL(h.url);
  const requestInit = { headers: opts.headers ?? {} };
  const capabilities = opts.sampling ? { sampling: {} } : {};
  let client: AnyClient;
  if (era === 'legacy') {
    const c = new LegacyClient({ name: 'legacy', version: '1.0.0' }, { capabilities });
    if (opts.sampling) {
      c.setRequestHandler(CreateMessageRequestSchema, () => ({ model: 'legacy-model', role: 'assistant', content: { type: 'text', text: 'ok' } }));
    }
    await c.connect(new LegacyTransport(url, { requestInit, ...(opts.fetch && { fetch: opts.fetch }) }));
    client = c;
  } else {
    const c = new ModernClient({ name: 'modern', version: '1.0.0' }, {
      capabilities,
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    } as ConstructorParameters<typeof ModernClient>[1]);
    if (opts.sampling) {
      c.setRequestHandler('sampling/createMessage', () => ({
        model: 'modern-model',
        role: 'assistant' as const,
        content: { type: 'text' as const, text: 'ok' },
      }));
    }
    await c.connect(new ModernTransport(url, { requestInit, ...(opts.fetch && { fetch: opts.fetch }) }));
    client = c;
  }
  clients.push(client);
  return client;
}

async function call(client: AnyClient, name: string): Promise<string> {
  const r = (await (client as LegacyClient).callTool({ name, arguments: {} })) as { content: Array<{ text: string }> };
  return r.content[0]!.text;
}

/** A raw HTTP request (so Host and friends can be set freely). */
function raw(
  h: HttpHandle,
  opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: h.port, method: opts.method ?? 'GET', path: opts.path ?? '/mcp', headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const POST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

let prevSink: LogSink;
const logLines: string[] = [];
beforeAll(() => {
  prevSink = setLogSink((line) => void logLines.push(line));
});
afterAll(() => {
  setLogSink(prevSink);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all(handles.splice(0).map((h) => h.close()));
});

describe.each(['legacy', 'modern'] as const)('%s era', (era) => {
  it('lists and calls tools; the handler sees no authInfo without tokens', async () => {
    const h = await serve();
    const client = await connect(h, era);
    const tools = await (client as LegacyClient).listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(['whoami', 'sample', 'slow']);
    const seen = JSON.parse(await call(client, 'whoami')) as Seen;
    expect(seen.era).toBe(era);
    expect(seen.authClientId).toBeUndefined();
    expect(seen.factoryIdentity).toBeUndefined();
    expect(h.sessionCount()).toBe(era === 'legacy' ? 1 : 0);
  });

  it('answers an unknown tool with JSON-RPC -32602', async () => {
    const h = await serve();
    const client = await connect(h, era);
    await expect(call(client, 'nope')).rejects.toMatchObject({ code: -32602 });
  });

  it('runs a sampling round inside a tool call', async () => {
    const h = await serve();
    const client = await connect(h, era, { sampling: true });
    expect(await call(client, 'sample')).toBe(`from ${era}-model`);
  });

  it('with tokens: the identity reaches the factory and ctx.http.authInfo', async () => {
    const h = await serve({
      tokens: new Map([
        ['s3cret-token', 'alice'],
        ['other', 'bob'],
      ]),
    });
    const client = await connect(h, era, { headers: { authorization: 'Bearer s3cret-token' } });
    const seen = JSON.parse(await call(client, 'whoami')) as Seen;
    expect(seen).toMatchObject({ era, factoryIdentity: 'alice', authClientId: 'alice', authToken: 's3cret-token', authScopes: [] });
    expect(seen.authExpiresAt).toBeGreaterThan(Date.now() / 1000 + 100 * 365 * 86400);
  });

  it('with tokens: a missing or wrong token cannot connect', async () => {
    const h = await serve({ tokens: new Map([['s3cret-token', 'alice']]) });
    await expect(connect(h, era)).rejects.toThrow();
    await expect(connect(h, era, { headers: { authorization: 'Bearer wrong' } })).rejects.toThrow();
  });

  it('the headers of EACH request reach the handler through ctx.http.req', async () => {
    const h = await serve();
    let key = 'first';
    const stamping: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('x-upstream-key', key);
      return fetch(input, { ...init, headers });
    };
    const client = await connect(h, era, { fetch: stamping });
    key = 'second';
    const seen = JSON.parse(await call(client, 'whoami')) as Seen;
    expect(seen.header).toBe('second');
    // The factory sees the headers of the request being served (modern) or of `initialize` (legacy).
    expect(seen.factoryHeader).toBe(era === 'legacy' ? 'first' : 'second');
    key = 'third';
    expect((JSON.parse(await call(client, 'whoami')) as Seen).header).toBe('third');
  });
});

it('logs to stderr (the log sink), never to stdout', async () => {
  const out = vi.spyOn(process.stdout, 'write');
  try {
    logLines.length = 0;
    const h = await serve();
    for (const era of ['legacy', 'modern'] as const) await call(await connect(h, era), 'whoami');
    await raw(h, { headers: { host: 'evil.example' } });
    await h.close();
    expect(logLines.some((l) => l.includes('listening'))).toBe(true);
    expect(logLines.some((l) => l.includes('disallowed Host or Origin'))).toBe(true);
    expect(out).not.toHaveBeenCalled();
  } finally {
    out.mockRestore();
  }
});

describe('gates', () => {
  it('GET /healthz answers 200 JSON, without a token but not with a foreign Host', async () => {
    const h = await serve({ tokens: new Map([['t', 'alice']]) });
    const r = await raw(h, { path: '/healthz' });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ status: 'ok', name: 'http-test', version: '1.2.3' });
    expect((await raw(h, { path: '/healthz', headers: { host: 'evil.example:80' } })).status).toBe(403);
    expect((await raw(h, { path: '/other' })).status).toBe(404);
  });

  it('refuses a foreign Host (DNS rebinding) with 403 and accepts loopback names and allowedHosts', async () => {
    const h = await serve({ allowedHosts: ['mcp.example.com'] });
    const post = (host: string) => raw(h, { method: 'POST', headers: { ...POST_HEADERS, host }, body: INIT });
    expect((await post('evil.example')).status).toBe(403);
    expect((await post(`evil.example:${h.port}`)).status).toBe(403);
    for (const host of [`127.0.0.1:${h.port}`, `localhost:${h.port}`, `[::1]:${h.port}`, 'mcp.example.com', 'MCP.example.com:443']) {
      expect((await post(host)).status, host).toBe(200);
    }
  });

  it('refuses a foreign Origin with 403, accepts loopback and allowedOrigins, sends no CORS headers', async () => {
    const h = await serve({ allowedOrigins: ['https://app.example.com'] });
    const post = (origin: string) => raw(h, { method: 'POST', headers: { ...POST_HEADERS, origin }, body: INIT });
    expect((await post('https://evil.example')).status).toBe(403);
    expect((await post('null')).status).toBe(403);
    const ok = await post('http://localhost:5173');
    expect(ok.status).toBe(200);
    expect((await post('https://app.example.com')).status).toBe(200);
    expect(Object.keys(ok.headers).filter((k) => k.startsWith('access-control-'))).toEqual([]);
    const preflight = await raw(h, { method: 'OPTIONS', headers: { origin: 'http://localhost:5173' } });
    expect(Object.keys(preflight.headers).filter((k) => k.startsWith('access-control-'))).toEqual([]);
  });

  it('answers 401 with WWW-Authenticate for a missing or wrong token', async () => {
    const h = await serve({ tokens: new Map([['right', 'alice']]) });
    const none = await raw(h, { method: 'POST', headers: POST_HEADERS, body: INIT });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer realm="mcp", error_description="/);
    const wrong = await raw(h, { method: 'POST', headers: { ...POST_HEADERS, authorization: 'Bearer wrong' }, body: INIT });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toMatch(/^Bearer realm="mcp", error="invalid_token", error_description="/);
    const right = await raw(h, { method: 'POST', headers: { ...POST_HEADERS, authorization: 'Bearer right' }, body: INIT });
    expect(right.status).toBe(200);
  });

  it('answers 413 to a body over 4 MiB and 400 to invalid JSON', async () => {
    const h = await serve();
    const big = await raw(h, { method: 'POST', headers: POST_HEADERS, body: Buffer.alloc(4 * 1024 * 1024 + 10, 0x20) });
    expect(big.status).toBe(413);
    const bad = await raw(h, { method: 'POST', headers: POST_HEADERS, body: '{nope' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe(-32700);
  });

  it('answers 400, logging nothing of the URL, to an absolute-form target and to JSON nested past the limit', async () => {
    const h = await serve({ tokens: new Map([['tok-0123456789abcdef', 'alice']]) });
    const before = logLines.length;
    const absolute = await raw(h, {
      method: 'POST',
      path: 'http://evil.example/mcp?access_token=leaked-secret',
      headers: { ...POST_HEADERS, authorization: 'Bearer tok-0123456789abcdef' },
      body: INIT,
    });
    expect(absolute.status).toBe(400);
    expect(JSON.parse(absolute.body).error.message).toBe('Bad Request: the request target must be a path such as /mcp, not a full URL');
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`;
    const nested = await raw(h, {
      method: 'POST',
      headers: { ...POST_HEADERS, authorization: 'Bearer tok-0123456789abcdef', 'mcp-protocol-version': '2026-07-28' },
      body: deep,
    });
    expect(nested.status).toBe(400);
    expect(JSON.parse(nested.body).error.message).toBe('Bad Request: the JSON nests more than 80 levels deep (tool arguments may nest 64)');
    const logs = logLines.slice(before).join('\n');
    expect(logs).not.toMatch(/leaked-secret|evil\.example|ERROR|RangeError/);
    // brackets inside strings do not count
    expect(jsonNestsDeeper(JSON.stringify({ s: '['.repeat(1000) }), 80)).toBe(false);
    expect(jsonNestsDeeper(JSON.stringify({ s: '\\"' + '['.repeat(1000) }), 80)).toBe(false);
    expect(jsonNestsDeeper('['.repeat(81) + ']'.repeat(81), 80)).toBe(true);
    expect(jsonNestsDeeper('['.repeat(80) + ']'.repeat(80), 80)).toBe(false);
  });

  it('caps legacy sessions per client: past its cap the least recently used idle session of that client makes room, so one client cannot lock out another', async () => {
    const tokens = new Map([
      ['reader-0123456789abcdef', 'reader'],
      ['admin-0123456789abcdef', 'admin'],
    ]);
    const h = await serve({ tokens, maxSessions: 20, maxSessionsPerClient: 3 });
    const open = async (token: string) => {
      const r = await raw(h, { method: 'POST', headers: { ...POST_HEADERS, authorization: `Bearer ${token}` }, body: INIT });
      return { status: r.status, id: r.headers['mcp-session-id'] as string | undefined };
    };
    const readers: Array<string | undefined> = [];
    for (let i = 0; i < 100; i++) {
      const r = await open('reader-0123456789abcdef');
      expect(r.status).toBe(200);
      readers.push(r.id);
    }
    expect(h.sessionCount()).toBe(3);
    // the newest three are the ones left
    const ping = (id: string | undefined, token: string) =>
      raw(h, {
        method: 'POST',
        headers: { ...POST_HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': id!, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
      });
    expect((await ping(readers[0], 'reader-0123456789abcdef')).status).toBe(404);
    expect((await ping(readers[99], 'reader-0123456789abcdef')).status).toBe(200);
    const admin = await open('admin-0123456789abcdef');
    expect(admin.status).toBe(200);
    expect(h.sessionCount()).toBe(4);
  });

  it('logs a refused initialize once a minute per client, not once per refusal', async () => {
    const tokens = new Map([
      ['reader-0123456789abcdef', 'reader'],
      ['admin-0123456789abcdef', 'admin'],
    ]);
    const h = await serve({ tokens, maxSessions: 2, maxSessionsPerClient: 5 });
    const open = (token: string) => raw(h, { method: 'POST', headers: { ...POST_HEADERS, authorization: `Bearer ${token}` }, body: INIT });
    expect((await open('reader-0123456789abcdef')).status).toBe(200);
    expect((await open('reader-0123456789abcdef')).status).toBe(200);
    const before = logLines.length;
    for (let i = 0; i < 20; i++) expect((await open('admin-0123456789abcdef')).status).toBe(503);
    const refusals = logLines.slice(before).filter((l) => /session cap reached/.test(l));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatch(/"client":"admin"/);
  });

  it('helpers: Host/Origin rules and the bearer checker', () => {
    expect(hostAllowed(undefined)).toBe(false);
    expect(hostAllowed('localhost')).toBe(true);
    expect(hostAllowed('127.0.0.1.evil.example')).toBe(false);
    expect(hostAllowed('a.example:8080', ['a.example:8080'])).toBe(true);
    expect(hostAllowed('a.example:9090', ['a.example:8080'])).toBe(false);
    expect(originAllowed(undefined)).toBe(true);
    expect(originAllowed('http://[::1]:3000')).toBe(true);
    expect(originAllowed('file://x')).toBe(false);
    expect(originAllowed('https://app.example.com', ['https://app.example.com/'])).toBe(true);
    const check = bearerChecker(new Map([['abc', 'alice']]));
    expect(check('Bearer abc')).toEqual({ ok: true, token: 'abc', identity: 'alice' });
    expect(check('bearer abc').ok).toBe(true);
    expect(check('Bearer abcd').ok).toBe(false);
    expect(check('Basic abc').ok).toBe(false);
  });
});

describe('legacy sessions', () => {
  it('two sessions get independent instances; list_changed on one instance reaches only its client', async () => {
    const h = await serve();
    const got = { a: 0, b: 0 };
    const a = (await connect(h, 'legacy')) as LegacyClient;
    const b = (await connect(h, 'legacy')) as LegacyClient;
    a.setNotificationHandler(ToolListChangedNotificationSchema, () => void got.a++);
    b.setNotificationHandler(ToolListChangedNotificationSchema, () => void got.b++);
    expect(h.sessionCount()).toBe(2);
    const servers = [...h.sessions()];
    expect(servers).toHaveLength(2);
    expect(servers[0]).not.toBe(servers[1]);
    // Let both clients open their GET streams, then notify the first session's instance only.
    await new Promise((r) => setTimeout(r, 200));
    await servers[0]!.sendToolListChanged();
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toEqual({ a: 1, b: 0 });
  });

  it('closes an idle session; the client then gets 404 for that session id', async () => {
    const h = await serve({ sessionIdleMs: 300 });
    const init = await raw(h, { method: 'POST', headers: POST_HEADERS, body: INIT });
    const sid = init.headers['mcp-session-id'] as string;
    expect(sid).toBeTruthy();
    expect(h.sessionCount()).toBe(1);
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const headers = { ...POST_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    await new Promise((r) => setTimeout(r, 180));
    expect((await raw(h, { method: 'POST', headers, body: list })).status).toBe(200); // re-arms the timer
    await new Promise((r) => setTimeout(r, 180));
    expect(h.sessionCount()).toBe(1); // 360 ms after initialize, 180 ms after the last request
    await new Promise((r) => setTimeout(r, 400));
    expect(h.sessionCount()).toBe(0);
    const gone = await raw(h, { method: 'POST', headers, body: list });
    expect(gone.status).toBe(404);
  });

  it('DELETE ends a session', async () => {
    const h = await serve();
    const init = await raw(h, { method: 'POST', headers: POST_HEADERS, body: INIT });
    const sid = init.headers['mcp-session-id'] as string;
    const del = await raw(h, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
    expect(del.status).toBe(200);
    expect(h.sessionCount()).toBe(0);
    expect((await raw(h, { method: 'DELETE', headers: { 'mcp-session-id': sid } })).status).toBe(404);
  });

  it('refuses an initialize beyond maxSessions with 503 and a JSON-RPC error, keeping open sessions', async () => {
    const h = await serve({ maxSessions: 2 });
    await connect(h, 'legacy');
    const kept = await connect(h, 'legacy');
    const extra = await raw(h, { method: 'POST', headers: POST_HEADERS, body: INIT });
    expect(extra.status).toBe(503);
    const body = JSON.parse(extra.body) as { id: unknown; error: { message: string } };
    expect(body.id).toBe(1);
    expect(body.error.message).toMatch(/limit is 2/);
    expect(h.sessionCount()).toBe(2);
    expect(await call(kept, 'slow')).toBe('slow done');
  });

  it('a session is bound to the identity that opened it', async () => {
    const h = await serve({
      tokens: new Map([
        ['ta', 'alice'],
        ['tb', 'bob'],
      ]),
    });
    const init = await raw(h, { method: 'POST', headers: { ...POST_HEADERS, authorization: 'Bearer ta' }, body: INIT });
    const sid = init.headers['mcp-session-id'] as string;
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const as = (token: string) => raw(h, { method: 'POST', headers: { ...POST_HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': sid }, body: list });
    expect((await as('tb')).status).toBe(404);
    expect((await as('ta')).status).toBe(200);
  });
});

describe('close()', () => {
  it.each(['legacy', 'modern'] as const)('lets an in-flight %s call finish, refuses new requests, then resolves', async (era) => {
    const h = await serve({ drainMs: 5_000 });
    const client = await connect(h, era);
    const slow = call(client, 'slow');
    await new Promise((r) => setTimeout(r, 100));
    const closing = h.close();
    await new Promise((r) => setTimeout(r, 20));
    await expect(slow).resolves.toBe('slow done');
    await closing;
    expect(h.sessionCount()).toBe(0);
    await expect(raw(h, { path: '/healthz' })).rejects.toThrow();
  });

  it('aborts requests still running after drainMs and resolves', async () => {
    const h = await serve({ drainMs: 100 });
    const init = await raw(h, { method: 'POST', headers: POST_HEADERS, body: INIT });
    const headers = { ...POST_HEADERS, 'mcp-session-id': init.headers['mcp-session-id'] as string, 'mcp-protocol-version': '2025-06-18' };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: {} } });
    const slow = raw(h, { method: 'POST', headers, body }).then(
      (r) => r.body,
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 50));
    await h.close();
    // close() resolved without waiting for the tool: the response was cut before the tool's result
    // (due at 400 ms) was written. (No timed assertion: on a slow machine close() may take longer
    // than drainMs, and what matters is that the result never reached the client.)
    const outcome = await slow;
    expect(typeof outcome === 'string' ? outcome : '').not.toContain('slow done');
  });

  it('refuses new connections while draining and answers 503 to a request pipelined behind an in-flight one', async () => {
    const h = await serve({ drainMs: 2_000 });
    const init = await raw(h, { method: 'POST', headers: POST_HEADERS, body: INIT });
    const sid = init.headers['mcp-session-id'] as string;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: {} } });
    const socket = connectSocket(h.port, '127.0.0.1');
    let seen = '';
    socket.on('data', (d: Buffer) => void (seen += d.toString('utf8')));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${h.port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
        `Mcp-Session-Id: ${sid}\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await new Promise((r) => setTimeout(r, 100));
    const closing = h.close();
    // Pipelined behind the running call, on the connection that is still open.
    socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${h.port}\r\n\r\n`);
    await expect(fetch(`http://127.0.0.1:${h.port}/healthz`)).rejects.toThrow();
    await closing;
    await ended;
    expect(seen).toContain('slow done');
    expect(seen).toContain('HTTP/1.1 503');
    expect(seen).not.toContain('"status":"ok"');
  });
});

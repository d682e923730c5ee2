/**
 * Refusals of the HTTP transport with static client tokens (issue 32): the 401's body and
 * `WWW-Authenticate` `error_description` say which token is needed and where it is set, OAuth
 * discovery paths say there is no OAuth, and each refusal is logged once — remote address and
 * reason, never any byte of the token — at most one line per second with a count of the rest.
 * Real node HTTP on 127.0.0.1; the rate limit is checked with an injected clock.
 */
import { request as httpRequest } from 'node:http';
import { Server } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LogSink, setLogSink } from '../../../templates/runtime/core/log.js';
import { type HttpHandle, type HttpOptions, serveHttp } from '../../../templates/runtime/transport/http.js';
import { bearerChecker, refusal, refusalLog } from '../../../templates/runtime/transport/http-auth.js';

const TOKEN = 'right-token-4f3e2d1c0b0a9988';
const TOKENS_FROM = 'PETS_HTTP_TOKENS (or PETS_HTTP_TOKENS_FILE)';
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});
const POST = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const lines: string[] = [];
let prev: LogSink;
beforeAll(() => {
  prev = setLogSink((l) => void lines.push(l));
});
afterAll(() => {
  setLogSink(prev);
});
const handles: HttpHandle[] = [];
afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.close()));
});

async function serve(extra: Partial<HttpOptions> = {}): Promise<HttpHandle> {
  const h = await serveHttp(() => new Server({ name: 'r', version: '1' }, { capabilities: {} }), {
    name: 'r',
    version: '1',
    host: '127.0.0.1',
    port: 0,
    tokens: new Map([[TOKEN, 'alice']]),
    tokensFrom: TOKENS_FROM,
    ...extra,
  });
  handles.push(h);
  return h;
}

function raw(
  h: HttpHandle,
  opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: h.port, method: opts.method ?? 'POST', path: opts.path ?? '/mcp', headers: opts.headers ?? POST },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body ?? (opts.method === 'GET' ? undefined : INIT));
  });
}
const message = (body: string) => (JSON.parse(body) as { error: { message: string } }).error.message;
const refusals = () => lines.filter((l) => l.includes('refused a request without a valid client token'));

describe('401 with static client tokens', () => {
  it('names the token and the variables it is set in, in the body and in error_description', async () => {
    const h = await serve();
    const none = await raw(h);
    expect(none.status).toBe(401);
    expect(message(none.body)).toBe(
      `Unauthorized: this MCP server needs a client token: send "Authorization: Bearer <token>" with a token listed in ${TOKENS_FROM}`,
    );
    expect(none.headers['www-authenticate']).toBe(
      `Bearer realm="mcp", error_description="this MCP server needs a client token: send 'Authorization: Bearer <token>' with a token listed in ${TOKENS_FROM}"`,
    );
    const wrong = await raw(h, { headers: { ...POST, authorization: 'Bearer not-the-token-77665544' } });
    expect(message(wrong.body)).toBe(
      `Unauthorized: the bearer token is not one of this server's client tokens: send "Authorization: Bearer <token>" with a token listed in ${TOKENS_FROM}`,
    );
    expect(wrong.headers['www-authenticate']).toMatch(
      /^Bearer realm="mcp", error="invalid_token", error_description="the bearer token is not one of this server's client tokens: /,
    );
    const basic = await raw(h, { headers: { ...POST, authorization: 'Basic dXNlcjpwYXNz' } });
    expect(basic.headers['www-authenticate']).toMatch(
      /^Bearer realm="mcp", error="invalid_request", error_description="the Authorization header must be 'Bearer <token>': /,
    );
    expect((await raw(h, { headers: { ...POST, authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('answers the OAuth discovery paths clients probe after a 401 with a 404 that says there is no OAuth', async () => {
    const h = await serve();
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
      '/register',
    ]) {
      const r = await raw(h, { path, method: path === '/register' ? 'POST' : 'GET' });
      expect(r.status, path).toBe(404);
      expect(message(r.body)).toBe(`Not found: this MCP server does not use OAuth; send "Authorization: Bearer <token>" with a token listed in ${TOKENS_FROM}`);
    }
    expect(message((await raw(h, { path: '/elsewhere', method: 'GET' })).body)).toBe('Not found');
    // without tokens the server says nothing about OAuth
    const open = await serve({ tokens: new Map() });
    expect(message((await raw(open, { path: '/register' })).body)).toBe('Not found');
  });

  it('logs each refusal with the remote address and the reason, and never a byte of what was sent', async () => {
    let t = 0;
    const h = await serve({ now: () => (t += 5_000) });
    lines.length = 0;
    const sent = ['Bearer secret-guess-a1b2c3d4e5', 'Basic c2VjcmV0LWd1ZXNzOnB3', 'Bearer right-token-4f3e2d1c0b0a99', 'Token right-token-4f3e2d1c0b0a9988x'];
    await raw(h);
    for (const authorization of sent) await raw(h, { headers: { ...POST, authorization } });
    const logged = refusals();
    expect(logged).toHaveLength(5);
    const data = logged.map((l) => JSON.parse(l.slice(l.indexOf('{'))) as Record<string, unknown>);
    expect(data.map((d) => d.reason)).toEqual([
      'no Authorization header',
      'the bearer token is not one of the client tokens',
      'the Authorization header is not "Bearer <token>"',
      'the bearer token is not one of the client tokens',
      'the Authorization header is not "Bearer <token>"',
    ]);
    for (const d of data) expect(d.remote).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(logged[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z WARN http: refused a request without a valid client token \(401\) /);
    // no 6-character piece of any credential sent, nor of the configured token, is in the log
    const all = lines.join('\n');
    for (const secret of [...sent.map((s) => s.split(' ')[1]!), TOKEN, Buffer.from('secret-guess:pw').toString('base64')]) {
      for (let i = 0; i + 6 <= secret.length; i++) expect(all, secret.slice(i, i + 6)).not.toContain(secret.slice(i, i + 6));
    }
  });

  it('logs at most one line a second over HTTP, counting the refusals it left out', async () => {
    let t = 1_000_000;
    const h = await serve({ now: () => t });
    lines.length = 0;
    for (let i = 0; i < 25; i++) await raw(h);
    expect(refusals()).toHaveLength(1);
    t += 1_000;
    await raw(h);
    expect(refusals()).toHaveLength(2);
    expect(JSON.parse(refusals()[1]!.slice(refusals()[1]!.indexOf('{')))).toMatchObject({ reason: 'no Authorization header', suppressed: 24 });
  });
});

describe('refusalLog', () => {
  it('writes the first refusal, counts those within the interval, and reports the count with the next line', () => {
    const out: Array<Record<string, unknown>> = [];
    let t = 0;
    const log = refusalLog(
      (_m, d) => void out.push(d),
      () => t,
      1000,
    );
    log({ remote: '10.0.0.1', reason: 'missing' });
    t = 999;
    log({ remote: '10.0.0.2', reason: 'unknown-token' });
    log({ remote: undefined, reason: 'not-bearer' });
    expect(out).toEqual([{ remote: '10.0.0.1', reason: 'no Authorization header' }]);
    t = 1000;
    log({ remote: undefined, reason: 'unknown-token' });
    t = 5000;
    log({ remote: '10.0.0.3', reason: 'missing' });
    expect(out.slice(1)).toEqual([
      { remote: 'unknown', reason: 'the bearer token is not one of the client tokens', suppressed: 2 },
      { remote: '10.0.0.3', reason: 'no Authorization header' },
    ]);
  });

  it('gives reasons only: the checker reports none of the presented value', () => {
    const check = bearerChecker(new Map([[TOKEN, 'alice']]));
    expect(check(undefined)).toEqual({ ok: false, reason: 'missing' });
    expect(check('  ')).toEqual({ ok: false, reason: 'missing' });
    expect(check('Bearer x-guess-1234')).toEqual({ ok: false, reason: 'unknown-token' });
    expect(check('Digest abc')).toEqual({ ok: false, reason: 'not-bearer' });
    expect(check(`bearer ${TOKEN}`)).toEqual({ ok: true, token: TOKEN, identity: 'alice' });
  });

  it('keeps error_description a valid quoted-string whatever the variable names hold', () => {
    expect(refusal('missing', 'A"B\\C\nD').challenge).toBe(
      `Bearer realm="mcp", error_description="this MCP server needs a client token: send 'Authorization: Bearer <token>' with a token listed in A'B'C'D"`,
    );
  });
});

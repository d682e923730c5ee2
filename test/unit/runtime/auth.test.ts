/**
 * Credentials at run time: every scheme kind and location, requirement alternatives, missing
 * secrets, OAuth client credentials (caching, expiry, one refresh on 401), redirects, and that
 * no secret ever appears in a result text or a log line. Real HTTP servers on 127.0.0.1 only.
 */

import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LogSink } from '../../../templates/runtime/core/log.js';
import { getLogLevel, setLogLevel, setLogSink } from '../../../templates/runtime/core/log.js';
import type { HttpOperation, OperationTool, SecurityRequirements, SecurityScheme } from '../../../templates/runtime/core/types.js';
import { Authenticator, scrub } from '../../../templates/runtime/operation/auth.js';
import { sendOperation } from '../../../templates/runtime/operation/operation-call.js';
import type { Settings } from '../../../templates/runtime/process/settings.js';
import { createServer as createMcpServer } from '../../../templates/runtime/server/server.js';

type Recorded = { method: string; url: string; headers: IncomingHttpHeaders; body: string };
type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A recording HTTP server on 127.0.0.1 with routes by path. */
function recorder(): { server: Server; requests: Recorded[]; routes: Map<string, Route>; url: () => string } {
  const requests: Recorded[] = [];
  const routes = new Map<string, Route>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const route = routes.get(new URL(req.url ?? '/', 'http://x').pathname);
      if (route) route(req, res, body);
      else json(200, { ok: true })(req, res, body);
    });
  });
  return { server, requests, routes, url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function json(status: number, value: unknown, headers: Record<string, string> = {}): Route {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(value));
  };
}

const api = recorder();
const other = recorder();
const log: string[] = [];
let previousSink: LogSink;

const listen = (s: Server) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
const close = (s: Server) => {
  s.closeAllConnections();
  return new Promise<void>((resolve) => s.close(() => resolve()));
};
const previousLevel = getLogLevel();
beforeAll(async () => {
  previousSink = setLogSink((line) => void log.push(line));
  setLogLevel('debug');
  await Promise.all([listen(api.server), listen(other.server)]);
});
afterAll(async () => {
  setLogSink(previousSink);
  setLogLevel(previousLevel);
  await Promise.all([close(api.server), close(other.server)]);
});
beforeEach(() => {
  for (const r of [api, other]) {
    r.requests.length = 0;
    r.routes.clear();
  }
});

const SECRETS = {
  KEY: 'key-5ecret-value',
  TOKEN: 'tok-5ecret-value',
  USER: 'alice',
  PASS: 'pa55word-5ecret',
  CLIENT: 'client-id-1',
  CLIENT_SECRET: 'client-5ecret-value',
};

const schemes: SecurityScheme[] = [
  { kind: 'apiKey', name: 'header_key', in: 'header', paramName: 'X-API-Key', env: { apiKey: 'T_KEY' } },
  { kind: 'apiKey', name: 'query_key', in: 'query', paramName: 'api_key', env: { apiKey: 'T_KEY' } },
  { kind: 'apiKey', name: 'cookie_key', in: 'cookie', paramName: 'session', env: { apiKey: 'T_KEY' } },
  { kind: 'bearer', name: 'bearer', env: { token: 'T_TOKEN' } },
  { kind: 'basic', name: 'basic', env: { username: 'T_USER', password: 'T_PASS' } },
  {
    kind: 'oauth2ClientCredentials',
    name: 'oauth',
    tokenUrl: '/oauth/token',
    scopes: ['pets.read', 'pets.write'],
    env: { clientId: 'T_CLIENT', clientSecret: 'T_CLIENT_SECRET' },
  },
];

const fullEnv = (): NodeJS.ProcessEnv => ({
  T_KEY: SECRETS.KEY,
  T_TOKEN: SECRETS.TOKEN,
  T_USER: SECRETS.USER,
  T_PASS: SECRETS.PASS,
  T_CLIENT: SECRETS.CLIENT,
  T_CLIENT_SECRET: SECRETS.CLIENT_SECRET,
});

function settings(): Settings {
  return { baseUrl: `${api.url()}/v1`, timeoutMs: 5000, maxResponseBytes: 100_000, envPrefix: 'T' };
}

function tool(security: SecurityRequirements | undefined, http: Partial<HttpOperation> = {}): OperationTool {
  const t: OperationTool = { kind: 'operation', name: 'probe', inputSchema: { type: 'object' }, http: { method: 'GET', path: '/probe', params: [], ...http } };
  return security === undefined ? t : { ...t, security };
}

const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const results: CallToolResult[] = [];

async function call(t: OperationTool, auth: Authenticator, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const r = (await sendOperation(t, args, settings(), { auth })).result;
  results.push(r);
  return r;
}

let tokenCount = 0;
/** A token endpoint on the API server handing out `tok-<n>` tokens. */
function tokenEndpoint(expiresIn?: number): void {
  api.routes.set('/oauth/token', (_req, res) => {
    tokenCount++;
    json(200, { access_token: `oauth-access-${tokenCount}`, token_type: 'Bearer', ...(expiresIn === undefined ? {} : { expires_in: expiresIn }) })(
      _req,
      res,
      '',
    );
  });
}
beforeEach(() => {
  tokenCount = 0;
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await listen(s);
  const { port } = s.address() as AddressInfo;
  await close(s);
  return port;
}

const probes = () => api.requests.filter((r) => r.url.startsWith('/v1/'));

describe('applying each kind of scheme', () => {
  it('sends an apiKey in a header, replacing a header argument of the same name', async () => {
    const auth = new Authenticator(schemes, fullEnv());
    const t = tool([['header_key']], { params: [{ arg: 'key', name: 'x-api-key', in: 'header' }] });
    const r = await call(t, auth, { key: 'from-the-model' });
    expect(r.isError).toBeFalsy();
    expect(probes()[0]!.headers['x-api-key']).toBe(SECRETS.KEY);
  });

  it('sends an apiKey in the query, percent-encoded, replacing an argument of the same name', async () => {
    const env = { ...fullEnv(), T_KEY: 'a b&c=d' };
    const auth = new Authenticator(schemes, env);
    const t = tool([['query_key']], {
      params: [
        { arg: 'q', name: 'q', in: 'query' },
        { arg: 'k', name: 'api_key', in: 'query' },
      ],
    });
    await call(t, auth, { q: 'x', k: 'model' });
    const url = new URL(probes()[0]!.url, 'http://x');
    expect(url.searchParams.get('q')).toBe('x');
    expect(url.searchParams.getAll('api_key')).toEqual(['a b&c=d']);
  });

  it('sends an apiKey cookie merged with cookie parameters', async () => {
    const auth = new Authenticator(schemes, { ...fullEnv(), T_KEY: 'k;evil=1' });
    const t = tool([['cookie_key']], { params: [{ arg: 'theme', name: 'theme', in: 'cookie' }] });
    await call(t, auth, { theme: 'dark' });
    expect(probes()[0]!.headers.cookie).toBe('theme=dark; session=k%3Bevil=1');
  });

  it('sends a bearer token and basic credentials', async () => {
    const auth = new Authenticator(schemes, fullEnv());
    await call(tool([['bearer']]), auth);
    await call(tool([['basic']]), auth);
    expect(probes()[0]!.headers.authorization).toBe(`Bearer ${SECRETS.TOKEN}`);
    expect(probes()[1]!.headers.authorization).toBe(`Basic ${Buffer.from(`${SECRETS.USER}:${SECRETS.PASS}`).toString('base64')}`);
  });

  it('applies every scheme of an alternative (AND)', async () => {
    const auth = new Authenticator(schemes, fullEnv());
    await call(tool([['header_key', 'bearer']]), auth);
    expect(probes()[0]!.headers).toMatchObject({ 'x-api-key': SECRETS.KEY, authorization: `Bearer ${SECRETS.TOKEN}` });
  });

  it('trims values and refuses values a header cannot carry, naming the variable', async () => {
    const auth = new Authenticator(schemes, { ...fullEnv(), T_TOKEN: `  ${SECRETS.TOKEN}\n` });
    await call(tool([['bearer']]), auth);
    expect(probes()[0]!.headers.authorization).toBe(`Bearer ${SECRETS.TOKEN}`);
    const bad = new Authenticator(schemes, { ...fullEnv(), T_TOKEN: 'abc-1234\r\nX-Evil: 1' });
    const r = await call(tool([['bearer']]), bad);
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/T_TOKEN cannot be sent in an HTTP header/);
    expect(text(r)).not.toContain('abc-1234');
    expect(probes()).toHaveLength(1);
  });
});

describe('choosing among alternatives', () => {
  it('uses the first alternative whose variables are all set', async () => {
    const env = fullEnv();
    delete env.T_TOKEN;
    await call(tool([['bearer'], ['basic'], ['header_key']]), new Authenticator(schemes, env));
    expect(probes()[0]!.headers.authorization).toMatch(/^Basic /);
    expect(probes()[0]!.headers['x-api-key']).toBeUndefined();
  });

  it('sends nothing for `security: []` or no security, and ignores the environment', async () => {
    const auth = new Authenticator(schemes, fullEnv());
    await call(tool([]), auth);
    await call(tool(undefined), auth);
    for (const r of probes()) {
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers['x-api-key']).toBeUndefined();
    }
  });

  it('takes an HTTP basic password set to nothing as an empty password (the key as user name, as Stripe has it); unset is missing', async () => {
    await call(tool([['basic'], ['bearer']]), new Authenticator(schemes, { T_USER: 'sk_test_123', T_PASS: '', T_TOKEN: 'tok' }));
    expect(probes()[0]!.headers.authorization).toBe(`Basic ${Buffer.from('sk_test_123:').toString('base64')}`);
    await call(tool([['basic'], ['bearer']]), new Authenticator(schemes, { T_USER: 'sk_test_123', T_TOKEN: 'tok' }));
    expect(probes()[1]!.headers.authorization).toBe('Bearer tok');
    // a blank user name is still unset
    const r = await call(tool([['basic']]), new Authenticator(schemes, { T_USER: ' ', T_PASS: '' }));
    expect(text(r)).toMatch(/set T_USER \(scheme "basic"\)/);
  });

  it('treats an empty alternative as optional: credentials when set, none otherwise', async () => {
    await call(tool([[], ['header_key']]), new Authenticator(schemes, fullEnv()));
    expect(probes()[0]!.headers['x-api-key']).toBe(SECRETS.KEY);
    const r = await call(tool([[], ['header_key']]), new Authenticator(schemes, {}));
    expect(r.isError).toBeFalsy();
    expect(probes()[1]!.headers['x-api-key']).toBeUndefined();
  });

  it('refuses the call when no alternative is satisfied, naming every missing variable, and sends nothing', async () => {
    const r = await call(tool([['bearer'], ['basic']]), new Authenticator(schemes, { T_USER: 'bob', T_TOKEN: '   ' }));
    expect(r.isError).toBe(true);
    expect(text(r)).toBe(
      'Tool probe cannot run: missing credentials: set T_TOKEN (scheme "bearer"), or T_PASS (scheme "basic") in the server\'s environment, then restart the server.',
    );
    const unknown = await call(tool([['nope']]), new Authenticator(schemes, fullEnv()));
    expect(text(unknown)).toMatch(/scheme "nope" \(not configured in this server\)/);
    const withoutAuth = (await sendOperation(tool([['bearer']]), {}, settings())).result;
    expect(withoutAuth.isError).toBe(true);
    expect(api.requests).toEqual([]);
  });
});

describe('oauth2 client credentials', () => {
  it('fetches a token with client authentication and scopes, and caches it across calls', async () => {
    tokenEndpoint(3600);
    const auth = new Authenticator(schemes, fullEnv());
    for (let i = 0; i < 3; i++) expect((await call(tool([['oauth']]), auth)).isError).toBeFalsy();
    await Promise.all([1, 2, 3].map(() => call(tool([['oauth']]), auth)));
    const tokenRequests = api.requests.filter((r) => r.url === '/oauth/token');
    expect(tokenRequests).toHaveLength(1);
    const t = tokenRequests[0]!;
    expect(t.method).toBe('POST');
    expect(t.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(t.headers.authorization).toBe(`Basic ${Buffer.from(`${SECRETS.CLIENT}:${SECRETS.CLIENT_SECRET}`).toString('base64')}`);
    expect(Object.fromEntries(new URLSearchParams(t.body))).toEqual({ grant_type: 'client_credentials', scope: 'pets.read pets.write' });
    expect(probes()).toHaveLength(6);
    for (const r of probes()) expect(r.headers.authorization).toBe('Bearer oauth-access-1');
  });

  it('shares one token request between concurrent first calls', async () => {
    api.routes.set('/oauth/token', (_req, res) => {
      tokenCount++;
      setTimeout(() => json(200, { access_token: `oauth-access-${tokenCount}`, expires_in: 3600 })(_req, res, ''), 50);
    });
    const auth = new Authenticator(schemes, fullEnv());
    const rs = await Promise.all([1, 2, 3, 4].map(() => call(tool([['oauth']]), auth)));
    expect(rs.every((r) => !r.isError)).toBe(true);
    expect(tokenCount).toBe(1);
  });

  it('renews a token shortly before it expires', async () => {
    tokenEndpoint(60);
    let now = 1_000_000;
    const auth = new Authenticator(schemes, fullEnv(), { now: () => now });
    await call(tool([['oauth']]), auth);
    now += 50_000; // within the lifetime minus the skew (6 s for 60 s)
    await call(tool([['oauth']]), auth);
    expect(tokenCount).toBe(1);
    now += 5_000; // 55 s: inside the skew
    await call(tool([['oauth']]), auth);
    expect(tokenCount).toBe(2);
    expect(probes().map((r) => r.headers.authorization)).toEqual(['Bearer oauth-access-1', 'Bearer oauth-access-1', 'Bearer oauth-access-2']);
  });

  it('on a 401 drops the token, fetches a new one and retries once', async () => {
    tokenEndpoint();
    api.routes.set('/v1/probe', (req, res) => {
      if (req.headers.authorization === 'Bearer oauth-access-1') json(401, { error: 'expired' })(req, res, '');
      else json(200, { ok: 'fresh' })(req, res, '');
    });
    const auth = new Authenticator(schemes, fullEnv());
    const r = await call(tool([['oauth']], { method: 'POST', body: { arg: 'body', contentType: 'application/json' } }), auth, { body: { a: 1 } });
    expect(r.isError).toBeFalsy();
    expect(text(r)).toBe('{"ok":"fresh"}');
    expect(tokenCount).toBe(2);
    expect(probes().map((p) => [p.headers.authorization, p.body])).toEqual([
      ['Bearer oauth-access-1', '{"a":1}'],
      ['Bearer oauth-access-2', '{"a":1}'],
    ]);
    // the new token stays cached
    await call(tool([['oauth']]), auth);
    expect(tokenCount).toBe(2);
  });

  it('retries only once when the new token is rejected too', async () => {
    tokenEndpoint(3600);
    api.routes.set('/v1/probe', json(401, { error: 'nope' }));
    const auth = new Authenticator(schemes, fullEnv());
    const r = await call(tool([['oauth']]), auth);
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^HTTP 401 Unauthorized/);
    expect(tokenCount).toBe(2);
    expect(probes()).toHaveLength(2);
  });

  it('does not retry a 401 to credentials that are not OAuth tokens', async () => {
    api.routes.set('/v1/probe', json(401, { error: 'bad key' }));
    const r = await call(tool([['header_key']]), new Authenticator(schemes, fullEnv()));
    expect(r.isError).toBe(true);
    expect(probes()).toHaveLength(1);
  });

  it('reports token endpoint failures by status and OAuth error code only, and tries again on the next call', async () => {
    api.routes.set('/oauth/token', json(401, { error: 'invalid_client', error_description: `bad secret ${SECRETS.CLIENT_SECRET}` }));
    const auth = new Authenticator(schemes, fullEnv());
    const r = await call(tool([['oauth']]), auth);
    expect(r.isError).toBe(true);
    expect(text(r)).toBe(
      `Tool probe cannot authenticate: cannot get an OAuth token for scheme "oauth": the token endpoint 127.0.0.1:${new URL(api.url()).port}/oauth/token answered HTTP 401 (invalid_client)`,
    );
    expect(probes()).toHaveLength(0);
    tokenEndpoint(3600);
    expect((await call(tool([['oauth']]), auth)).isError).toBeFalsy();
  });

  it('accepts a form-encoded token response and resolves a relative token URL against the base URL', async () => {
    api.routes.set('/oauth/token', (_req, res) => {
      tokenCount++;
      res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' });
      res.end('access_token=oauth-access-form&token_type=bearer&expires_in=3600');
    });
    const r = await call(tool([['oauth']]), new Authenticator(schemes, fullEnv()));
    expect(r.isError).toBeFalsy();
    expect(api.requests.map((q) => q.url)).toEqual(['/oauth/token', '/v1/probe']);
    expect(probes()[0]!.headers.authorization).toBe('Bearer oauth-access-form');
  });

  it('reports a token response without access_token, and an unreachable token endpoint', async () => {
    api.routes.set('/oauth/token', json(200, { token: 'x' }));
    const r = await call(tool([['oauth']]), new Authenticator(schemes, fullEnv()));
    expect(text(r)).toMatch(/answered without an access_token/);
    const port = await closedPort();
    const dead = schemes.map((s) => (s.kind === 'oauth2ClientCredentials' ? { ...s, tokenUrl: `http://127.0.0.1:${port}/token` } : s));
    const r2 = await call(tool([['oauth']]), new Authenticator(dead, fullEnv()));
    expect(text(r2)).toContain(`the token request to 127.0.0.1:${port}/token failed: ECONNREFUSED`);
  });
});

describe('redirects', () => {
  it('keeps credentials on the same origin and drops them on another', async () => {
    api.routes.set('/v1/probe', (_req, res) => {
      res.writeHead(307, { location: '/v1/moved' });
      res.end();
    });
    api.routes.set('/v1/moved', (_req, res) => {
      res.writeHead(302, { location: `${other.url()}/elsewhere` });
      res.end();
    });
    const r = await call(tool([['header_key', 'bearer']]), new Authenticator(schemes, fullEnv()));
    expect(r.isError).toBeFalsy();
    expect(probes().map((p) => [p.url, p.headers['x-api-key'], p.headers.authorization])).toEqual([
      ['/v1/probe', SECRETS.KEY, `Bearer ${SECRETS.TOKEN}`],
      ['/v1/moved', SECRETS.KEY, `Bearer ${SECRETS.TOKEN}`],
    ]);
    expect(other.requests).toHaveLength(1);
    expect(other.requests[0]!.headers['x-api-key']).toBeUndefined();
    expect(other.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('turns a POST answered by 303 into a GET without body', async () => {
    api.routes.set('/v1/probe', (_req, res) => {
      res.writeHead(303, { location: '/v1/result' });
      res.end();
    });
    await call(tool([['bearer']], { method: 'POST', body: { arg: 'body', contentType: 'application/json' } }), new Authenticator(schemes, fullEnv()), {
      body: { x: 1 },
    });
    expect(probes().map((p) => [p.method, p.url, p.body])).toEqual([
      ['POST', '/v1/probe', '{"x":1}'],
      ['GET', '/v1/result', ''],
    ]);
  });
});

// what reaches the API of an MCP client's own request headers (nothing, unless a scheme takes
// its credential `fromClient`) is tested end to end over HTTP in test/e2e/from-client.test.ts

describe('secrets stay secret', () => {
  it('scrubs secrets an API echoes in an error, and the query key from failure messages', async () => {
    api.routes.set('/v1/probe', (req, res) => json(403, { message: `key ${req.headers['x-api-key'] ?? ''} rejected`, url: req.url })(req, res, ''));
    const r = await call(tool([['header_key', 'query_key']]), new Authenticator(schemes, fullEnv()));
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('[redacted]');
    const dead = (
      await sendOperation(
        tool([['query_key']]),
        {},
        { ...settings(), baseUrl: `http://127.0.0.1:${await closedPort()}/v1` },
        { auth: new Authenticator(schemes, fullEnv()) },
      )
    ).result;
    results.push(dead);
    expect(text(dead)).toMatch(/ECONNREFUSED/);
    expect(scrub(`a ${SECRETS.KEY} b`, [SECRETS.KEY])).toBe('a [redacted] b');
  });

  it('never shows a secret in any result text or log line of this file', () => {
    expect(results.length).toBeGreaterThan(20);
    const all = [...results.map(text), ...log].join('\n');
    for (const secret of [
      SECRETS.KEY,
      encodeURIComponent(SECRETS.KEY),
      SECRETS.TOKEN,
      SECRETS.PASS,
      SECRETS.CLIENT_SECRET,
      Buffer.from(`${SECRETS.USER}:${SECRETS.PASS}`).toString('base64'),
    ]) {
      expect(all).not.toContain(secret);
    }
    expect(all).not.toMatch(/oauth-access-(\d|form)/);
  });
});

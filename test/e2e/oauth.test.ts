/**
 * A generated server over Streamable HTTP as an OAuth 2.1 resource server (issue 25), against a
 * real authorization server: `oidc-provider` on 127.0.0.1 (test/helpers/idp.ts), the corpus'
 * Petstore (3.0) generated and run as a process with `PETSTORE_OAUTH_ISSUER`, and a recording
 * backend standing for the API. Discovery (401 → Protected Resource Metadata → the provider),
 * access tokens the provider issued (client credentials, and the SDK clients' own
 * authorization-code + PKCE flow in both eras), tokens it would never accept (each refused with
 * 401 invalid_token, nothing reaching the API, no token in the log), and a key rotated at the
 * provider.
 */
import { createHmac, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusSpec } from '../helpers/corpus.js';
import type { Era } from '../helpers/eras.js';
import { connectClient, type HttpProcess, startHttp } from '../helpers/eras.js';
import { type BuiltServer, buildServer } from '../helpers/generated-server.js';
import { type Idp, rsaKey, type SigningKey, startIdp } from '../helpers/idp.js';
import { oauthClient, oauthSession } from '../helpers/oauth-clients.js';

// the access rule and the audit trail show that the verified subject is the client identity of every step
const manifest = `name: petstore
version: 1.0.0
openapi: ./openapi.yaml
output: ./server
extraTools:
  - name: adopt_pet
    inputSchema: { type: object, properties: { petId: { type: integer } } }
    scopes: [write:pets]
    handler: handlers/adopt.ts#adoptPet
policy:
  audit:
    file: audit.jsonl
  access:
    default: allow
    rules:
      - clients: [user-denied]
        deny: { names: [getOrderById] }
      - clients: ['*']
        claims: { org: blocked }
        deny: { names: [logoutUser] }
  limits:
    tools:
      getUserByName: { perMinute: { client: 1 } }
`;

/** The API: answers every request with a small JSON order and remembers what it was asked. */
type Backend = { url: string; requests: Array<{ method: string; path: string; authorization?: string }>; close(): Promise<void> };
async function startBackend(): Promise<Backend> {
  const requests: Backend['requests'] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        (req.url ?? '').startsWith('/pet/findByStatus')
          ? [{ id: 1, name: 'Rex', photoUrls: [], status: 'available' }]
          : { id: 7, petId: 1, quantity: 2, status: 'placed' },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let idp: Idp;
let backend: Backend;
let built: BuiltServer;
let server: HttpProcess;
let key1: SigningKey;
/** The API's own credential for petstore_auth (from the environment, as always): what the backend must see, never the MCP token. */
const UPSTREAM = 'upstream-petstore-token-0123456789';
let audit: string;

beforeAll(async () => {
  key1 = await rsaKey('key-1');
  idp = await startIdp({ keys: [key1] });
  backend = await startBackend();
  built = await buildServer('oauth', readFileSync(corpusSpec('petstore-3.0.json'), 'utf8'), manifest);
  audit = path.join(built.dir, 'audit.jsonl');
  server = await startHttp(built.server, {
    PETSTORE_PETSTORE_AUTH_TOKEN: UPSTREAM,
    PETSTORE_AUDIT_FILE: audit,
    PETSTORE_BASE_URL: backend.url,
    PETSTORE_OAUTH_ISSUER: idp.issuer,
    PETSTORE_OAUTH_SCOPES: 'read:pets',
    PETSTORE_LOG_LEVEL: 'debug',
  });
}, 180_000);

afterAll(async () => {
  server?.kill('SIGKILL');
  await idp?.close();
  await backend?.close();
});

const metadataUrl = () => server.url.replace('/mcp', '/.well-known/oauth-protected-resource/mcp');
const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getOrderById', arguments: { orderId: 7 } } };

/** POSTs a tools/call as a 2025-11-25 client would, with `token` as bearer (none: no header). */
function post(token?: string): Promise<Response> {
  return fetch(server.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(call),
  });
}

/** Whether a modern client with `token` lists the tools (false: refused with 401). */
async function lists(token: string): Promise<boolean> {
  const connected = await connectClient({ kind: 'http', url: server.url, headers: { authorization: `Bearer ${token}` } }, 'modern').catch((err: unknown) => {
    if (!String(err).includes('401')) throw err;
    return undefined;
  });
  if (connected === undefined) return false;
  const listed = await connected.client.listTools().then(
    (r) => r.tools.length > 0,
    (err: unknown) => {
      if (!String(err).includes('401')) throw err;
      return false;
    },
  );
  await connected.client.close();
  return listed;
}

describe('discovery', () => {
  it('a request without a token is 401 naming the Protected Resource Metadata, which names the provider', async () => {
    const res = await post();
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    // RFC 6750 3.1: no credentials sent, so no error code or description in the challenge
    expect(challenge).toBe(`Bearer scope="read:pets", resource_metadata="${metadataUrl()}"`);
    const meta = await fetch(metadataUrl());
    expect(meta.status).toBe(200);
    const doc = (await meta.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      resource: server.url,
      authorization_servers: [idp.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['read:pets', 'write:pets'],
    });
    // the root form answers the same document
    const root = await fetch(server.url.replace('/mcp', '/.well-known/oauth-protected-resource'));
    expect(await root.json()).toEqual(doc);
    expect(backend.requests).toEqual([]);
  });

  it('other OAuth paths are plain 404s, not the static-token server\'s "does not use OAuth"', async () => {
    const res = await fetch(server.url.replace('/mcp', '/register'), { method: 'POST' });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('does not use OAuth');
  });
});

describe('an access token the provider issued for this server', () => {
  it.each(['legacy', 'modern'] as Era[])('lists and calls tools (%s era), and the backend never sees the token', async (era) => {
    backend.requests.length = 0;
    const token = await idp.clientToken(server.url, 'read:pets');
    const { client } = await connectClient({ kind: 'http', url: server.url, headers: { authorization: `Bearer ${token}` } }, era);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('getOrderById');
    const result = (await client.callTool({ name: 'getOrderById', arguments: { orderId: 7 } })) as { isError?: boolean; content: Array<{ text?: string }> };
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toContain('placed');
    await client.close();
    expect(backend.requests.map((r) => r.path)).toEqual(['/store/order/7']);
    expect(backend.requests[0]!.authorization).toBeUndefined();
    expect(server.stderr()).not.toContain(token);
  });
});

/** base64url of a JSON value. */
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('tokens the server must refuse (401 invalid_token, nothing reaches the API)', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const claims = () => ({ iss: idp.issuer, aud: server.url, sub: 'mallory', client_id: 'mcp-test-client', scope: 'read:pets', iat: now(), exp: now() + 600 });
  const cases: Array<[string, () => Promise<string>, RegExp]> = [
    ['expired', () => idp.sign({ ...claims(), iat: now() - 7200, exp: now() - 3600 }), /expired/],
    ['not yet valid', () => idp.sign({ ...claims(), nbf: now() + 3600 }), /not valid yet/],
    ['for another audience', () => idp.sign({ ...claims(), aud: 'http://127.0.0.1:1/mcp' }), /not issued for this resource/],
    ['for the audience with a trailing slash', () => idp.sign({ ...claims(), aud: `${server.url}/` }), /not issued for this resource/],
    ['from another issuer', () => idp.sign({ ...claims(), iss: 'http://127.0.0.1:1' }), /another authorization server/],
    ['without an expiry', () => idp.sign({ ...claims(), exp: undefined }), /valid|exp/],
    ['signed by a key the provider does not publish', async () => idp.sign(claims(), await rsaKey('stranger')), /does not publish/],
    ['signed by another key under a published kid', async () => idp.sign(claims(), { ...(await rsaKey('key-1')) }), /signature does not verify/],
    ['with alg none', async () => `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims())}.`, /algorithm|valid signed JWT/],
    [
      'HS256 with the public key as the secret',
      async () => {
        const pem = createPublicKey({ key: key1.jwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
        const input = `${b64({ alg: 'HS256', typ: 'at+jwt', kid: 'key-1' })}.${b64(claims())}`;
        return `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
      },
      /algorithm/,
    ],
    ['that is no JWT at all', async () => 'not-a-jwt-0123456789abcdef', /valid signed JWT/],
  ];
  it.each(cases)('%s', async (_name, make, why) => {
    backend.requests.length = 0;
    const token = await make();
    const res = await post(token);
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(`resource_metadata="${metadataUrl()}"`);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_token');
    expect(body.error_description).toMatch(why);
    expect(JSON.stringify(body)).not.toContain(token);
    expect(backend.requests).toEqual([]);
    expect(server.stderr()).not.toContain(token);
    expect(server.stderr()).not.toMatch(/\n\s+at /); // no stack trace
  });
});

describe('a key rotated at the provider', () => {
  /** The server fetches the key set again for an unknown key at most every 5 s (JWKS_COOLDOWN_MS). */
  const cooldown = () => new Promise((resolve) => setTimeout(resolve, 5_500));

  it('a token signed by the new key is accepted once the key set is fetched again, the old key while it is still published, not after', async () => {
    const before = await idp.clientToken(server.url);
    expect(await lists(before)).toBe(true);
    const key2 = await rsaKey('key-2');
    idp.rotate([key2, key1]);
    const after = await idp.clientToken(server.url);
    await cooldown();
    expect(await lists(after)).toBe(true);
    expect(await lists(before)).toBe(true);
    // key-1 disappears; key-3 signs: fetching for key-3 drops key-1
    const key3 = await rsaKey('key-3');
    idp.rotate([key3]);
    const third = await idp.clientToken(server.url);
    await cooldown();
    expect(await lists(third)).toBe(true);
    const refused = await post(before);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error_description: string }).error_description).toMatch(/does not publish/);
  }, 30_000);
});

describe("the SDK clients' own OAuth support: authorization code + PKCE against the provider", () => {
  it.each(['legacy', 'modern'] as Era[])(
    '%s era: registers, logs in headlessly, then lists and calls tools as the user',
    async (era) => {
      backend.requests.length = 0;
      const client = await oauthClient(era, server.url, `user-${era}`);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('getOrderById');
      const result = (await client.callTool({ name: 'getOrderById', arguments: { orderId: 7 } })) as { isError?: boolean };
      expect(result.isError).toBeFalsy();
      await client.close();
      expect(backend.requests.map((r) => r.path)).toEqual(['/store/order/7']);
      // the user who logged in is the client identity the audit trail records
      const events = readFileSync(audit, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { client?: string; primitive?: string });
      expect(events.some((e) => e.client === `user-${era}` && e.primitive === 'getOrderById')).toBe(true);
      expect(readFileSync(audit, 'utf8')).not.toMatch(/eyJ[\w-]+\.eyJ/); // no JWT anywhere
    },
    60_000,
  );

  it("an access rule naming a subject applies to that user's token", async () => {
    backend.requests.length = 0;
    const client = await oauthClient('modern', server.url, 'user-denied');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).not.toContain('getOrderById');
    const err = await client.callTool({ name: 'getOrderById', arguments: { orderId: 7 } }).then(
      () => undefined,
      (e: unknown) => e as { code: number; message: string },
    );
    expect(err?.message).toContain('not available to client "user-denied"');
    await client.close();
    expect(backend.requests).toEqual([]);
  }, 60_000);
});

describe('per-identity state', () => {
  it('two users of the same OAuth client are counted apart by a per-client rate limit', async () => {
    const now = Math.floor(Date.now() / 1000);
    // tokens as the provider issues them for two users signed in through one client
    const user = (sub: string) => idp.sign({ iss: idp.issuer, aud: server.url, sub, client_id: 'shared-app', scope: 'read:pets', iat: now, exp: now + 600 });
    const call = async (token: string) => {
      const { client } = await connectClient({ kind: 'http', url: server.url, headers: { authorization: `Bearer ${token}` } }, 'modern');
      const result = (await client.callTool({ name: 'getUserByName', arguments: { username: 'x' } })) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
      };
      await client.close();
      return result;
    };
    const alice = await user('alice');
    const bob = await user('bob');
    expect((await call(alice)).isError).toBeFalsy();
    expect((await call(bob)).isError).toBeFalsy();
    const again = await call(alice);
    expect(again.isError).toBe(true);
    expect(again.content[0]!.text).toContain('per minute for client "alice"');
    // the audit trail has both: the user (client) and the OAuth client (oauthClient), never the token
    const events = readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; client?: string; oauthClient?: string; primitive?: string });
    const invoked = events.filter((e) => e.event === 'tool.invoked' && e.primitive === 'getUserByName');
    expect(invoked.map((e) => [e.client, e.oauthClient])).toEqual([
      ['alice', 'shared-app'],
      ['bob', 'shared-app'],
      ['alice', 'shared-app'],
    ]);
    expect(readFileSync(audit, 'utf8')).not.toContain(alice);
  });
});

describe('access rules on token claims', () => {
  it('a rule on a claim applies to the tokens with that claim, whoever they are', async () => {
    backend.requests.length = 0;
    const now = Math.floor(Date.now() / 1000);
    const token = (sub: string, org: string) =>
      idp.sign({ iss: idp.issuer, aud: server.url, sub, client_id: 'shared-app', org, scope: 'read:pets', iat: now, exp: now + 600 });
    const session = async (t: string) => (await connectClient({ kind: 'http', url: server.url, headers: { authorization: `Bearer ${t}` } }, 'legacy')).client;
    const blocked = await session(await token('carol', 'blocked'));
    expect((await blocked.listTools()).tools.map((t) => t.name)).not.toContain('logoutUser');
    const err = await blocked.callTool({ name: 'logoutUser', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e as { message: string },
    );
    expect(err?.message).toContain('Tool logoutUser is not available to client "carol"');
    expect(err?.message).toContain('policy.access.rules[1].deny');
    await blocked.close();
    expect(backend.requests).toEqual([]);
    const acme = await session(await token('dave', 'acme'));
    expect((await acme.listTools()).tools.map((t) => t.name)).toContain('logoutUser');
    expect(((await acme.callTool({ name: 'logoutUser', arguments: {} })) as { isError?: boolean }).isError).toBeFalsy();
    await acme.close();
    expect(backend.requests.map((r) => r.path)).toEqual(['/user/logout']);
  });
});

describe('per-tool scopes from the API description (petstore_auth: read:pets, write:pets)', () => {
  /** The tool names a modern client with `token` is shown. */
  async function listed(token: string): Promise<string[]> {
    const { client } = await connectClient({ kind: 'http', url: server.url, headers: { authorization: `Bearer ${token}` } }, 'modern');
    const { tools } = await client.listTools();
    await client.close();
    return tools.map((t) => t.name);
  }

  it('two tokens with different scopes see different tools', async () => {
    const reader = await listed(await idp.clientToken(server.url, 'read:pets'));
    const writer = await listed(await idp.clientToken(server.url, 'read:pets write:pets'));
    // the Petstore asks for both scopes on every petstore_auth operation
    for (const tool of ['findPetsByStatus', 'addPet', 'deletePet']) {
      expect(reader).not.toContain(tool);
      expect(writer).toContain(tool);
    }
    // an extra tool's scopes come from the manifest
    expect(reader).not.toContain('adopt_pet');
    expect(writer).toContain('adopt_pet');
    // api_key and unsecured operations need no scope
    for (const tool of ['getPetById', 'getOrderById']) {
      expect(reader).toContain(tool);
      expect(writer).toContain(tool);
    }
  });

  it.each(['legacy', 'modern'] as Era[])(
    'a call without the scope is 403 insufficient_scope naming what is needed and held, nothing reaching the API (%s)',
    async (era) => {
      backend.requests.length = 0;
      const token = await idp.clientToken(server.url, 'read:pets');
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` };
      const body = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'findPetsByStatus', arguments: { status: 'available' } } };
      const res = await fetch(server.url, {
        method: 'POST',
        headers: { ...headers, 'mcp-protocol-version': era === 'legacy' ? '2025-11-25' : '2026-07-28' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(403);
      const challenge = res.headers.get('www-authenticate')!;
      expect(challenge).toContain('error="insufficient_scope"');
      expect(challenge).toContain('scope="read:pets write:pets"');
      expect(challenge).toContain(`resource_metadata="${metadataUrl()}"`);
      expect(await res.json()).toEqual({ error: 'insufficient_scope', error_description: 'The tool findPetsByStatus needs the scopes read:pets write:pets' });
      // an extra tool too
      const extra = await fetch(server.url, {
        method: 'POST',
        headers: { ...headers, 'mcp-protocol-version': era === 'legacy' ? '2025-11-25' : '2026-07-28' },
        body: JSON.stringify({ ...body, params: { name: 'adopt_pet', arguments: {} } }),
      });
      expect(extra.status).toBe(403);
      expect(extra.headers.get('www-authenticate')).toContain('scope="read:pets write:pets"');
      expect(backend.requests).toEqual([]);
    },
  );

  it('a token with the scopes calls the tool, and the API receives its own credential, never the MCP token', async () => {
    backend.requests.length = 0;
    const token = await idp.clientToken(server.url, 'read:pets write:pets');
    const { client } = await connectClient({ kind: 'http', url: server.url, headers: { authorization: `Bearer ${token}` } }, 'legacy');
    const result = (await client.callTool({ name: 'findPetsByStatus', arguments: { status: ['available'] } })) as {
      isError?: boolean;
      content: Array<{ text?: string }>;
    };
    await client.close();
    expect(result.isError, result.content[0]?.text).toBeFalsy();
    expect(backend.requests.map((r) => r.authorization)).toEqual([`Bearer ${UPSTREAM}`]);
  });

  it('the v2 client steps up: a 403 sends the user to authorize the union of scopes, and the call then goes through', async () => {
    backend.requests.length = 0;
    // the server advertises read:pets (PETSTORE_OAUTH_SCOPES): the client first asks for no more
    const { client, authorizeAgain } = await oauthSession('modern', server.url, 'user-step-up');
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('findPetsByStatus');
    const call = () => client.callTool({ name: 'findPetsByStatus', arguments: { status: ['available'] } }) as Promise<{ isError?: boolean }>;
    const first = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(first)).toMatch(/Unauthorized/);
    expect(backend.requests).toEqual([]);
    await authorizeAgain();
    expect((await call()).isError).toBeFalsy();
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('findPetsByStatus');
    await client.close();
    expect(backend.requests.map((r) => r.path)).toEqual(['/pet/findByStatus?status=available']);
  }, 60_000);

  it('static client tokens are not scoped', async () => {
    const staticServer = await startHttp(built.server, {
      PETSTORE_AUDIT_FILE: path.join(built.dir, 'audit-static.jsonl'),
      PETSTORE_BASE_URL: backend.url,
      PETSTORE_OAUTH_ISSUER: idp.issuer,
      PETSTORE_HTTP_TOKENS: 'ops=static-token-0123456789abcdef',
    });
    try {
      const tools = await (async () => {
        const { client } = await connectClient(
          { kind: 'http', url: staticServer.url, headers: { authorization: 'Bearer static-token-0123456789abcdef' } },
          'modern',
        );
        const list = await client.listTools();
        await client.close();
        return list.tools.map((t) => t.name);
      })();
      expect(tools).toContain('findPetsByStatus');
      // without PETSTORE_OAUTH_SCOPES the metadata advertises every scope a tool needs
      const doc = (await (await fetch(staticServer.url.replace('/mcp', '/.well-known/oauth-protected-resource/mcp'))).json()) as { scopes_supported: string[] };
      expect(doc.scopes_supported).toEqual(['read:pets', 'write:pets']);
    } finally {
      staticServer.kill('SIGKILL');
    }
  });
});

/**
 * Opaque access tokens (issue 25): an authorization server that issues opaque tokens
 * (oidc-provider with opaque resource-server tokens, test/helpers/idp.ts) and a generated Petstore
 * server over HTTP that introspects them (RFC 7662) with its own client credentials. An active
 * token for this server is accepted (its client is the identity); a token for another resource,
 * a revoked one, an unknown one are 401 invalid_token with nothing reaching the API; wrong
 * credentials of the server make it 503 (the token may be fine), and no log line holds a token
 * or the secret.
 */

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusSpec } from '../helpers/corpus.js';
import { connectClient, type HttpProcess, startHttp } from '../helpers/eras.js';
import { type BuiltServer, buildServer } from '../helpers/generated-server.js';
import { type Idp, RESOURCE_CLIENT, startIdp } from '../helpers/idp.js';

const manifest = 'name: petstore\nversion: 1.0.0\nopenapi: ./openapi.yaml\noutput: ./server\n';

let idp: Idp;
let built: BuiltServer;
let server: HttpProcess;
let api: http.Server;
let apiUrl: string;
const requests: string[] = [];

beforeAll(async () => {
  idp = await startIdp({ opaque: true });
  api = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 7, petId: 1, quantity: 2, status: 'placed' }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  built = await buildServer('oauth-introspection', readFileSync(corpusSpec('petstore-3.0.json'), 'utf8'), manifest);
  server = await startHttp(built.server, {
    PETSTORE_BASE_URL: apiUrl,
    PETSTORE_OAUTH_ISSUER: idp.issuer,
    PETSTORE_OAUTH_CLIENT_ID: RESOURCE_CLIENT.id,
    PETSTORE_OAUTH_CLIENT_SECRET: RESOURCE_CLIENT.secret,
  });
}, 180_000);

afterAll(async () => {
  server?.kill('SIGKILL');
  await idp?.close();
  api?.close();
});

/** A tools/call as a 2025-11-25 client sends it, with `token`. */
function post(url: string, token: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getOrderById', arguments: { orderId: 7 } } }),
  });
}

describe("the manifest's http.auth", () => {
  it('gives the OAuth defaults: the issuer and the scopes to ask for, without any setting', async () => {
    const defaults = await buildServer(
      'oauth-manifest-defaults',
      readFileSync(corpusSpec('petstore-3.0.json'), 'utf8'),
      `${manifest}http:\n  auth:\n    issuer: '${idp.issuer}'\n    scopes: [read:pets]\n`,
    );
    const plain = await startHttp(defaults.server, { PETSTORE_BASE_URL: apiUrl });
    try {
      const res = await fetch(plain.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: '{}',
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('scope="read:pets"');
      const doc = (await (await fetch(plain.url.replace('/mcp', '/.well-known/oauth-protected-resource/mcp'))).json()) as { authorization_servers: string[] };
      expect(doc.authorization_servers).toEqual([idp.issuer]);
      expect(plain.stderr()).toContain(`OAuth access tokens of ${idp.issuer}`);
    } finally {
      plain.kill('SIGKILL');
    }
  }, 120_000);
});

describe('opaque access tokens, introspected', () => {
  it('an active token for this server lists and calls tools, as its client', async () => {
    requests.length = 0;
    const token = await idp.clientToken(server.url);
    expect(token).not.toContain('.');
    const { client } = await connectClient({ kind: 'http', url: server.url, headers: { authorization: `Bearer ${token}` } }, 'modern');
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('getOrderById');
    expect(((await client.callTool({ name: 'getOrderById', arguments: { orderId: 7 } })) as { isError?: boolean }).isError).toBeFalsy();
    await client.close();
    expect(requests).toEqual(['/store/order/7']);
    expect(server.stderr()).not.toContain(token);
  });

  it.each([
    ['issued for another resource', () => idp.clientToken('http://127.0.0.1:1/mcp'), /not issued for this resource/],
    [
      'revoked',
      async () => {
        const token = await idp.clientToken(server.url);
        await idp.revoke(token);
        return token;
      },
      /not active/,
    ],
    ['unknown to the authorization server', async () => 'unknownopaquetoken0123456789abcdefghijk', /not active/],
  ] as Array<[string, () => Promise<string>, RegExp]>)('a token %s is 401 invalid_token, nothing reaching the API', async (_name, make, why) => {
    requests.length = 0;
    const token = await make();
    const res = await post(server.url, token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(((await res.json()) as { error_description: string }).error_description).toMatch(why);
    expect(requests).toEqual([]);
    expect(server.stderr()).not.toContain(token);
  });

  it('with wrong credentials of its own the server cannot introspect: 503, the reason logged without the secret', async () => {
    const wrong = await startHttp(built.server, {
      PETSTORE_BASE_URL: apiUrl,
      PETSTORE_OAUTH_ISSUER: idp.issuer,
      PETSTORE_OAUTH_CLIENT_ID: RESOURCE_CLIENT.id,
      PETSTORE_OAUTH_CLIENT_SECRET: 'not-the-secret-0123456789',
    });
    try {
      requests.length = 0;
      const res = await post(wrong.url, await idp.clientToken(wrong.url));
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: 'temporarily_unavailable' });
      expect(requests).toEqual([]);
      expect(wrong.stderr()).not.toContain('not-the-secret-0123456789');
    } finally {
      wrong.kill('SIGKILL');
    }
  });
});

/**
 * Token exchange for the API (RFC 8693, issue 25): the corpus Petstore's `petstore_auth` scheme
 * opted in with `auth.petstore_auth.exchange`, the generated server over HTTP with an oidc-provider
 * issuer that performs the exchange (test/helpers/idp.ts). The API receives a token the
 * authorization server issued for the API's audience and the caller's subject — never the MCP
 * token, nor the environment's token — one exchange per caller, kept for later calls; a static
 * client token still sends the environment's token.
 */

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusSpec } from '../helpers/corpus.js';
import type { Era } from '../helpers/eras.js';
import { connectClient, type HttpProcess, startHttp } from '../helpers/eras.js';
import { buildServer } from '../helpers/generated-server.js';
import { type Idp, RESOURCE_CLIENT, startIdp } from '../helpers/idp.js';

const API = 'https://petstore.example.com/api';
const ENV_TOKEN = 'env-upstream-token-0123456789';
const STATIC = 'static-client-token-0123456789';
const manifest = `name: petstore
version: 1.0.0
openapi: ./openapi.yaml
output: ./server
auth:
  petstore_auth:
    exchange: { audience: '${API}' }
`;

let idp: Idp;
let server: HttpProcess;
let api: http.Server;
const seen: Array<string | undefined> = [];

beforeAll(async () => {
  idp = await startIdp();
  api = http.createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('[]');
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const built = await buildServer('oauth-exchange', readFileSync(corpusSpec('petstore-3.0.json'), 'utf8'), manifest);
  server = await startHttp(built.server, {
    PETSTORE_BASE_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
    PETSTORE_OAUTH_ISSUER: idp.issuer,
    PETSTORE_OAUTH_CLIENT_ID: RESOURCE_CLIENT.id,
    PETSTORE_OAUTH_CLIENT_SECRET: RESOURCE_CLIENT.secret,
    PETSTORE_PETSTORE_AUTH_TOKEN: ENV_TOKEN,
    PETSTORE_HTTP_TOKENS: `ops=${STATIC}`,
  });
}, 180_000);

afterAll(async () => {
  server?.kill('SIGKILL');
  await idp?.close();
  api?.close();
});

/** A user's access token for this server, as the provider signs them. */
function userToken(sub: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return idp.sign({ iss: idp.issuer, aud: server.url, sub, client_id: 'claude-connector', scope: 'read:pets write:pets', iat: now, exp: now + 600 });
}

async function findPets(token: string, era: Era, times = 1): Promise<void> {
  const { client } = await connectClient({ kind: 'http', url: server.url, headers: { authorization: `Bearer ${token}` } }, era);
  for (let i = 0; i < times; i++) {
    const result = (await client.callTool({ name: 'findPetsByStatus', arguments: { status: ['available'] } })) as {
      isError?: boolean;
      content: Array<{ text?: string }>;
    };
    expect(result.isError, result.content[0]?.text).toBeFalsy();
  }
  await client.close();
}

describe('token exchange for the API', () => {
  it.each(['legacy', 'modern'] as Era[])('the API gets a token exchanged for the caller, for its audience, once per caller (%s)', async (era) => {
    seen.length = 0;
    const before = idp.exchanges.length;
    const token = await userToken(`alice-${era}`);
    await findPets(token, era, 2);
    expect(seen).toHaveLength(2);
    const sent = seen[0]!.replace(/^Bearer /, '');
    expect(seen[1]).toBe(seen[0]); // kept, not exchanged again
    expect(sent).not.toBe(token);
    expect(sent).not.toBe(ENV_TOKEN);
    expect(decodeJwt(sent)).toMatchObject({ aud: API, sub: `alice-${era}`, client_id: 'claude-connector', act: { sub: RESOURCE_CLIENT.id }, iss: idp.issuer });
    expect(idp.exchanges.slice(before)).toEqual([{ client: RESOURCE_CLIENT.id, sub: `alice-${era}`, audience: API, issued: sent }]);
    expect(server.stderr()).not.toContain(token);
    expect(server.stderr()).not.toContain(sent);
  });

  it('two users get two exchanged tokens', async () => {
    seen.length = 0;
    await findPets(await userToken('carol'), 'modern');
    await findPets(await userToken('dave'), 'modern');
    expect(seen.map((h) => decodeJwt(h!.replace(/^Bearer /, '')).sub)).toEqual(['carol', 'dave']);
  });

  it('a refused exchange fails the call, saying why, and nothing reaches the API', async () => {
    seen.length = 0;
    const token = await userToken('not-delegable');
    const { client } = await connectClient({ kind: 'http', url: server.url, headers: { authorization: `Bearer ${token}` } }, 'modern');
    const result = (await client.callTool({ name: 'findPetsByStatus', arguments: { status: ['available'] } })) as {
      isError?: boolean;
      content: Array<{ text?: string }>;
    };
    await client.close();
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toContain(`the token exchange for scheme "petstore_auth" at ${idp.issuer}/token answered HTTP 400 (invalid_grant)`);
    expect(result.content[0]!.text).not.toContain(token);
    expect(seen).toEqual([]);
  });

  it("a static client token sends the environment's token, as before", async () => {
    seen.length = 0;
    await findPets(STATIC, 'modern');
    expect(seen).toEqual([`Bearer ${ENV_TOKEN}`]);
  });
});

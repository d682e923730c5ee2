/**
 * The resource server's discovery of its authorization server (RFC 8414, then OpenID discovery)
 * against a real one (oidc-provider on 127.0.0.1) and against servers that answer wrongly: the
 * metadata URLs tried, an issuer that does not match, and an authorization server that cannot be
 * reached (503, never 401: the token may be fine).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverIssuer, discoveryUrls, resourceServer } from '../../../templates/runtime/oauth/oauth-resource.js';
import { type Idp, startIdp } from '../../helpers/idp.js';

let idp: Idp;
beforeAll(async () => {
  idp = await startIdp();
});
afterAll(async () => {
  await idp?.close();
});

/** A server answering every request with `body` (JSON). */
async function answering(body: (origin: string) => unknown): Promise<{ origin: string; close(): Promise<void> }> {
  let origin = '';
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body(origin)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('discovery', () => {
  it('tries RFC 8414 first, with the issuer path inserted, then OpenID discovery inserted and appended', () => {
    expect(discoveryUrls('https://login.example.com')).toEqual([
      'https://login.example.com/.well-known/oauth-authorization-server',
      'https://login.example.com/.well-known/openid-configuration',
    ]);
    expect(discoveryUrls('https://login.example.com/realms/mcp/')).toEqual([
      'https://login.example.com/.well-known/oauth-authorization-server/realms/mcp',
      'https://login.example.com/.well-known/openid-configuration/realms/mcp',
      'https://login.example.com/realms/mcp/.well-known/openid-configuration',
    ]);
  });

  it("finds the real provider's metadata and its key set", async () => {
    const meta = await discoverIssuer(idp.issuer);
    expect(meta.issuer).toBe(idp.issuer);
    expect(meta.jwks_uri).toBe(`${idp.issuer}/jwks`);
  });

  it('refuses metadata naming another issuer, naming both', async () => {
    const impostor = await answering(() => ({ issuer: 'https://elsewhere.example.com', jwks_uri: 'https://elsewhere.example.com/jwks' }));
    await expect(discoverIssuer(impostor.origin)).rejects.toThrow(`names the issuer "https://elsewhere.example.com", not "${impostor.origin}"`);
    await impostor.close();
  });

  it('says which URLs it tried and what each answered', async () => {
    const wrong = `${idp.issuer}/nowhere`;
    await expect(discoverIssuer(wrong)).rejects.toThrow(
      new RegExp(`cannot discover the metadata of the OAuth issuer ${wrong}: .*oauth-authorization-server/nowhere \\(HTTP 404\\)`),
    );
  });
});

describe('an authorization server that cannot be reached', () => {
  it('answers 503 temporarily_unavailable, not 401, and logs why', async () => {
    const gone = await answering(() => ({}));
    const issuer = gone.origin;
    await gone.close();
    const errors: string[] = [];
    const rs = resourceServer({ issuer }, (m) => errors.push(m));
    const result = await rs.authenticate('Bearer abc.def.ghi', 'http://127.0.0.1:1/mcp');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.response.status).toBe(503);
    expect(await result.response.json()).toMatchObject({ error: 'temporarily_unavailable' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors.join('\n')).toContain(`cannot discover the metadata of the OAuth issuer ${issuer}`);
  });
});

/**
 * A real OAuth 2.1 / OpenID authorization server for tests: `oidc-provider` (a certified OpenID
 * Provider) on 127.0.0.1 with dynamic client registration, PKCE, resource indicators issuing RS256
 * JWT access tokens (RFC 9068) for the resources a test names, a confidential test client for the
 * client-credentials grant, and its development login pages (any user name logs in), driven
 * headlessly by {@link headlessAuthorize}.
 *
 * Its signing keys can be rotated ({@link Idp.rotate}): the provider is rebuilt on the same
 * address with the new key set, so tokens signed before stay signed by a key that may or may not
 * be published any more. {@link Idp.sign} signs arbitrary claims with a key of the test's choice
 * (a published one, or one the provider never had) to make tokens a provider would never issue.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { JWK, JWTPayload } from 'jose';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import Provider from 'oidc-provider';

/** A signing key: its private JWK (with `kid`, `alg`), and the key object jose signs with. */
export type SigningKey = { jwk: JWK; key: CryptoKey };

/** Makes an RS256 key with `kid`. */
export async function rsaKey(kid: string): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  return { jwk, key: privateKey };
}

export const TEST_CLIENT = { id: 'mcp-test-client', secret: 'mcp-test-client-secret-0123456789abcdef' };
/** The MCP server's own client, for token introspection (HTTP Basic). */
export const RESOURCE_CLIENT = { id: 'mcp-resource-server', secret: 'mcp-resource-server-secret-0123456789' };

export type Idp = {
  /** The issuer: http://127.0.0.1:PORT (no trailing slash). */
  readonly issuer: string;
  /** Every token exchange performed, in order. */
  readonly exchanges: Exchange[];
  /** The key the provider signs with now. */
  current(): SigningKey;
  /** Replaces the published key set (the first key signs from now on). */
  rotate(keys: readonly SigningKey[]): void;
  /** A client-credentials access token for `resource` with `scope` (what the provider really issues). */
  clientToken(resource: string, scope?: string): Promise<string>;
  /** Revokes a token the test client was issued. */
  revoke(token: string): Promise<void>;
  /** `claims` signed with `key` (default: the current one) under `alg` (default RS256), `typ: at+jwt`. */
  sign(claims: JWTPayload, key?: SigningKey, header?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
};

/** Scopes the provider knows (the SDK client registers with the resource's `scopes_supported`: each must be here). */
const SCOPES = ['openid', 'offline_access', 'read:pets', 'write:pets'];

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** A token exchange (RFC 8693) this provider performed: who asked, for whom, for what audience. */
export type Exchange = { client: string; sub: unknown; audience: string; issued: string };

/**
 * The token exchange grant (RFC 8693), which oidc-provider does not implement: the subject token
 * must be an access token this provider signed (a published key, not expired); the answer is a
 * JWT for `audience` with the subject's `sub` and `client_id` and `act: { sub: <the client that
 * asked> }`, signed with the current key. The subject `not-delegable` is refused (invalid_grant).
 */
function exchangeGrant(issuer: string, keys: readonly SigningKey[], exchanges: Exchange[]) {
  const published = createLocalJWKSet({ keys: keys.map(({ jwk }) => ({ kty: jwk.kty, n: jwk.n, e: jwk.e, kid: jwk.kid, alg: jwk.alg, use: 'sig' })) as JWK[] });
  return async (ctx: { oidc: { params: Record<string, string | undefined>; client: { clientId: string } }; status: number; body: unknown }): Promise<void> => {
    const { subject_token: subject, subject_token_type: type, audience } = ctx.oidc.params;
    if (type !== 'urn:ietf:params:oauth:token-type:access_token' || subject === undefined || audience === undefined) {
      ctx.status = 400;
      ctx.body = { error: 'invalid_request' };
      return;
    }
    let sub: unknown;
    let clientId: unknown;
    try {
      const { payload } = await jwtVerify(subject, published, { issuer });
      sub = payload.sub;
      clientId = payload.client_id;
    } catch {
      ctx.status = 400;
      ctx.body = { error: 'invalid_grant' };
      return;
    }
    // the authorization server's own policy: this subject may not act at any API
    if (sub === 'not-delegable') {
      ctx.status = 400;
      ctx.body = { error: 'invalid_grant', error_description: `no delegation for ${String(sub)}` };
      return;
    }
    const now = Math.floor(Date.now() / 1000);
    const scope = ctx.oidc.params.scope;
    const issued = await new SignJWT({ sub: sub as string, client_id: clientId as string, act: { sub: ctx.oidc.client.clientId }, ...(scope ? { scope } : {}) })
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: keys[0]!.jwk.kid })
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(keys[0]!.key);
    exchanges.push({ client: ctx.oidc.client.clientId, sub, audience, issued });
    ctx.body = { access_token: issued, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: 300 };
  };
}

function makeProvider(issuer: string, keys: readonly SigningKey[], scopes: readonly string[], opaque: boolean, exchanges: Exchange[]): Provider {
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: TEST_CLIENT.id,
        client_secret: TEST_CLIENT.secret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_post',
      },
      {
        client_id: RESOURCE_CLIENT.id,
        client_secret: RESOURCE_CLIENT.secret,
        grant_types: [TOKEN_EXCHANGE],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: keys.map((k) => k.jwk) } as never,
    scopes: [...SCOPES, ...scopes],
    pkce: { required: () => true },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      // the resource server may introspect any token; the test client may revoke its own
      introspection: { enabled: true, allowedPolicy: () => true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: [...SCOPES, ...scopes].filter((s) => s !== 'openid' && s !== 'offline_access').join(' '),
          accessTokenFormat: opaque ? 'opaque' : 'jwt',
          accessTokenTTL: 600,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    // refresh tokens without offline_access, so that clients that registered the grant get one
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(g: string): boolean }) => client.grantTypeAllowed('refresh_token'),
  } as never);
  if (process.env.DEBUG_OAUTH) {
    provider.on('registration_create.success', (_ctx: unknown, client: { scope?: string }) => console.log('registered scope', client.scope));
    provider.on('authorization.error', (ctx: { oidc?: { params?: unknown } }, err: Error) =>
      console.log('authorization error', err.message, JSON.stringify(ctx.oidc?.params)),
    );
    provider.on('grant.error', (_ctx: unknown, err: Error) =>
      console.log('grant error', err.message, (err as { error_description?: string }).error_description),
    );
  }
  provider.registerGrantType(TOKEN_EXCHANGE, exchangeGrant(issuer, keys, exchanges), [
    'subject_token',
    'subject_token_type',
    'requested_token_type',
    'audience',
    'scope',
  ]);
  provider.on('server_error', (_ctx: unknown, err: Error) => process.stderr.write(`oidc-provider: ${err.stack}\n`));
  return provider;
}

/**
 * Dynamic client registration, with the registration's `scope` dropped: oidc-provider would limit
 * the client to the scopes it registered with, and the SDK clients register with the scopes of
 * their first request, so a step-up to more scopes could never be granted. Many authorization
 * servers do not limit registered clients so; this one, for the tests, does not either.
 */
function registerWithoutScope(req: http.IncomingMessage, res: http.ServerResponse, provider: Provider): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let body = Buffer.concat(chunks);
    try {
      const metadata = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      delete metadata.scope;
      body = Buffer.from(JSON.stringify(metadata));
    } catch {
      // not JSON: the provider answers it
    }
    const replay = Readable.from([body]) as unknown as http.IncomingMessage;
    Object.assign(replay, {
      method: req.method,
      url: req.url,
      headers: { ...req.headers, 'content-length': String(body.length) },
      socket: req.socket,
      connection: req.socket,
      httpVersion: req.httpVersion,
    });
    void provider.callback()(replay, res);
  });
}

/**
 * Starts the provider on 127.0.0.1 (any free port) signing with `keys[0]` (a fresh RS256 key by
 * default); `scopes` are extra scopes it knows; `opaque`: access tokens are opaque (introspect them).
 */
export async function startIdp(options: { keys?: SigningKey[]; scopes?: readonly string[]; opaque?: boolean } = {}): Promise<Idp> {
  let keys = options.keys ?? [await rsaKey('key-1')];
  let provider: Provider | undefined;
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/reg') return void registerWithoutScope(req, res, provider!);
    void provider!.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const opaque = options.opaque === true;
  const exchanges: Exchange[] = [];
  provider = makeProvider(issuer, keys, options.scopes ?? [], opaque, exchanges);
  return {
    exchanges,
    issuer,
    current: () => keys[0]!,
    rotate(next) {
      keys = [...next];
      provider = makeProvider(issuer, keys, options.scopes ?? [], opaque, exchanges);
    },
    async revoke(token) {
      const res = await fetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: TEST_CLIENT.id, client_secret: TEST_CLIENT.secret }),
      });
      if (!res.ok) throw new Error(`revocation refused: ${res.status} ${await res.text()}`);
    },
    async clientToken(resource, scope = 'read:pets') {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: TEST_CLIENT.id, client_secret: TEST_CLIENT.secret, resource, scope }),
      });
      const body = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!res.ok || body.access_token === undefined) throw new Error(`token request refused: ${res.status} ${body.error} ${body.error_description}`);
      return body.access_token;
    },
    async sign(claims, key = keys[0]!, header = {}) {
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: key.jwk.kid, ...header }).sign(key.key);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A cookie jar for `fetch`: the provider's login session lives in cookies. */
class Jar {
  readonly #cookies = new Map<string, string>();
  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      this.#cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
  }
}

/**
 * Follows an authorization URL through the provider's development login and consent pages as a
 * user named `login` would in a browser, and returns the URL the provider finally redirects to
 * (the client's redirect URI with `code`, `state` and `iss`).
 */
export async function headlessAuthorize(authorizationUrl: string, login: string, redirectPrefix: string): Promise<URL> {
  const jar = new Jar();
  let url = authorizationUrl;
  let method = 'GET';
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(body ? { body } : {}),
    });
    jar.take(res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location !== null) {
      const next = new URL(location, url);
      if (next.href.startsWith(redirectPrefix)) return next;
      url = next.href;
      method = 'GET';
      body = undefined;
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`the provider answered ${res.status} at ${url}: ${html.slice(0, 500)}`);
    // the dev interaction pages: a login form (prompt=login) or a consent form (prompt=consent)
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (action === undefined) throw new Error(`no form at ${url}: ${html.slice(0, 500)}`);
    const fields = new URLSearchParams();
    for (const [tag] of html.matchAll(/<input[^>]*>/g)) {
      const name = /name="([^"]+)"/.exec(tag)?.[1];
      if (name !== undefined) fields.set(name, /value="([^"]*)"/.exec(tag)?.[1] ?? '');
    }
    if (fields.has('login')) fields.set('login', login);
    if (fields.has('password')) fields.set('password', 'any');
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
    method = 'POST';
    body = fields;
  }
  throw new Error('the authorization did not finish within 20 steps');
}

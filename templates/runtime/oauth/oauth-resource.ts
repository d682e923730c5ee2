/**
 * The Streamable HTTP server as an OAuth 2.1 resource server (MCP authorization, RFC 9728): with
 * `<PREFIX>_OAUTH_ISSUER` set, clients bring access tokens (JWT) the authorization server issued
 * for this server, and this module checks them.
 *
 * - The issuer's metadata is discovered (RFC 8414 `/.well-known/oauth-authorization-server`,
 *   then OpenID discovery), its `issuer` must equal the setting; the signing keys come from its
 *   `jwks_uri` (or `<PREFIX>_OAUTH_JWKS_URL`), fetched by `jose`'s remote key set: cached, fetched
 *   again for a token signed by a key it does not know (key rotation), at most once per
 *   {@link JWKS_COOLDOWN_MS}.
 * - A token is accepted when its signature verifies with one of those keys under an algorithm of
 *   {@link ALGORITHMS} (asymmetric only: never `none`, never HS*), `iss` equals the issuer, `aud`
 *   holds the expected audience exactly (`<PREFIX>_OAUTH_AUDIENCE`, else the resource URL), it
 *   has an `exp` not past and no `nbf` in the future (both with {@link CLOCK_SKEW_S} seconds of
 *   skew), and a `sub` or `client_id`. Everything else is `401 invalid_token` with a fixed
 *   description of what failed — never the token, nor anything of it.
 * - The verified identity becomes the request's `AuthInfo`: `clientId` is the client identity
 *   every step uses (`sub`, else `client_id`), `scopes` those of `scope`/`scp`, `extra` holds
 *   `sub`, `client_id` and `iss`.
 *
 * The SDK's `verifyBearerToken` (expected resource, expiry), `bearerAuthChallengeResponse` (401
 * with `WWW-Authenticate: Bearer … resource_metadata="…"`) and `oauthMetadataResponse` (the
 * Protected Resource Metadata document) do the protocol; this module supplies the verifier.
 */

import type { AuthInfo, OAuthMetadata, OAuthTokenVerifier } from '@modelcontextprotocol/server';
import {
  bearerAuthChallengeResponse,
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  OAuthErrorCode,
  oauthMetadataResponse,
  verifyBearerToken,
} from '@modelcontextprotocol/server';
import type { JWTPayload } from 'jose';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { isLoopbackHostname } from '../core/loopback.js';
import { readBounded } from '../operation/body.js';
import type { IntrospectionCache, IntrospectionOptions } from './oauth-introspect.js';
import { introspectionVerifier, looksLikeJwt } from './oauth-introspect.js';
import { AuthorizationServerUnavailable, asUrl, CLOCK_SKEW_S, tokenAuthInfo } from './oauth-token.js';

export { AuthorizationServerUnavailable, CLOCK_SKEW_S } from './oauth-token.js';

/** Signature algorithms accepted: asymmetric ones only, so a public key can never serve as an HMAC secret. */
export const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
/** Least time between two fetches of the key set for tokens signed by an unknown key. */
export const JWKS_COOLDOWN_MS = 5_000;
/** Largest metadata document read. */
const MAX_METADATA_BYTES = 256 * 1024;

/** The resource server's settings. */
export type OAuthResourceOptions = {
  /** The authorization server's issuer, exactly as configured (published verbatim in `authorization_servers`). */
  readonly issuer: string;
  /** The `aud` tokens must hold; absent ⇒ the resource URL. */
  readonly audience?: string;
  /** The key set's URL; absent ⇒ the discovered `jwks_uri`. */
  readonly jwksUrl?: string;
  /** The MCP endpoint's public URL (`<PREFIX>_PUBLIC_URL`); absent ⇒ `http://<Host><path>` of each request. */
  readonly publicUrl?: string;
  /** Scopes advertised in the metadata (`scopes_supported`); absent or empty ⇒ not advertised. */
  readonly scopesSupported?: readonly string[];
  /** Scopes a 401 asks for (`scope` of its challenge: what clients request at first); absent or empty ⇒ none named. */
  readonly challengeScopes?: readonly string[];
  /** Name advertised as `resource_name`. */
  readonly resourceName?: string;
  /** Timeout of a discovery or key set request, in milliseconds (default 10 000). */
  readonly timeoutMs?: number;
  /** Introspection of opaque tokens (oauth-introspect.ts): the resource server's client credentials, and the endpoint unless discovered. */
  readonly introspection?: { readonly url?: string; readonly clientId: string; readonly clientSecret: string };
};

/** `issuer` without one trailing slash, for comparing issuers as clients do. */
const bare = (url: string): string => url.replace(/\/$/, '');

/** The metadata URLs tried for `issuer`, in order: RFC 8414 (path inserted), OpenID (path inserted, then appended). */
export function discoveryUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : bare(url.pathname);
  const urls = [`${url.origin}/.well-known/oauth-authorization-server${path}`];
  if (path !== '') urls.push(`${url.origin}/.well-known/openid-configuration${path}`);
  urls.push(`${url.origin}${path}/.well-known/openid-configuration`);
  return urls;
}

/**
 * Discovers the authorization server's metadata: the first of {@link discoveryUrls} answering 200
 * with a JSON object whose `issuer` is `issuer` (one trailing slash tolerated). Throws
 * {@link AuthorizationServerUnavailable} naming every URL tried and what it answered.
 */
export async function discoverIssuer(issuer: string, timeoutMs = 10_000): Promise<OAuthMetadata> {
  const tried: string[] = [];
  for (const url of discoveryUrls(issuer)) {
    let status: number;
    let document: unknown;
    try {
      const res = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
      status = res.status;
      const body = await readBounded(res, MAX_METADATA_BYTES);
      if (!res.ok || body.truncated) {
        tried.push(`${url} (HTTP ${status}${body.truncated ? ', too large' : ''})`);
        continue;
      }
      document = JSON.parse(new TextDecoder().decode(body.bytes));
    } catch (err) {
      tried.push(
        `${url} (${err instanceof SyntaxError ? 'not JSON' : err instanceof Error ? (err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : err.message) : String(err)})`,
      );
      continue;
    }
    const meta = document as Partial<OAuthMetadata> | null;
    if (typeof meta !== 'object' || meta === null || typeof meta.issuer !== 'string') {
      tried.push(`${url} (no issuer in the document)`);
      continue;
    }
    if (bare(meta.issuer) !== bare(issuer)) {
      throw new AuthorizationServerUnavailable(
        `the metadata at ${url} names the issuer ${JSON.stringify(meta.issuer)}, not ${JSON.stringify(issuer)}: set the issuer exactly as the authorization server spells it`,
      );
    }
    return meta as OAuthMetadata;
  }
  throw new AuthorizationServerUnavailable(`cannot discover the metadata of the OAuth issuer ${issuer}: ${tried.join('; ')}`);
}

/** Fixed descriptions of why a token was refused (never anything of the token). */
function refusalOf(err: unknown): string {
  const e = err as { code?: string; claim?: string };
  switch (e.code) {
    case 'ERR_JWT_EXPIRED':
      return 'The access token has expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (e.claim === 'nbf') return 'The access token is not valid yet';
      if (e.claim === 'iss') return 'The access token was issued by another authorization server';
      if (e.claim === 'aud') return 'The access token was not issued for this resource';
      return `The access token's ${e.claim ?? 'claims'} claim is not acceptable`;
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return 'The access token is signed by a key the authorization server does not publish';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return `The access token's signature algorithm is not accepted (accepted: ${ALGORITHMS.join(', ')})`;
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return "The access token's signature does not verify";
    default:
      return 'The access token is not a valid signed JWT';
  }
}

/** Whether a key set failure means the keys could not be had (not that the token is bad). */
function keysUnavailable(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === undefined || code === 'ERR_JOSE_GENERIC' || code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JWKS_INVALID';
}

/** The key set function `jose` verifies with. */
type KeySet = ReturnType<typeof createRemoteJWKSet>;

/** A verifier of JWT access tokens for one expected audience (the SDK's `OAuthTokenVerifier`). */
export function jwtVerifier(keys: KeySet, issuer: string, audience: string): OAuthTokenVerifier {
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys, { issuer, audience, algorithms: [...ALGORITHMS], clockTolerance: CLOCK_SKEW_S, requiredClaims: ['exp'] }));
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY' || !keysUnavailable(err))
          throw new OAuthError(OAuthErrorCode.InvalidToken, refusalOf(err));
        throw new AuthorizationServerUnavailable(`the signing keys of ${issuer} cannot be fetched: ${err instanceof Error ? err.message : String(err)}`);
      }
      return tokenAuthInfo(token, payload, issuer, audience);
    },
  };
}

/** The outcome of authenticating one request: its identity, or the answer refusing it. */
/** `reason`: a fixed text saying why (for the log; nothing of the token). */
export type OAuthCheck = { ok: true; auth: AuthInfo } | { ok: false; response: Response; reason: string };

/** What http.ts needs of the resource server. */
export type ResourceServer = {
  /** The resource URL of a request to the MCP endpoint (the public URL, else from its Host). */
  resourceOf(host: string | undefined, path: string): string;
  /** The metadata answer for a request at a discovery path, or `undefined` for other paths. */
  metadata(request: Request, resource: string): Promise<Response | undefined>;
  /** The authorization server's token endpoint (discovered), for token exchange. */
  tokenEndpoint(): Promise<string>;
  /** Verifies the request's `Authorization` header for `resource`. */
  authenticate(authorization: string | undefined, resource: string): Promise<OAuthCheck>;
  /**
   * The 403 answer to a call of `tool` without the scopes it `needs`: `WWW-Authenticate: Bearer
   * error="insufficient_scope", scope="<held and needed>"` — both, since some clients ask for no
   * more than the challenge names when they step up.
   */
  insufficientScope(resource: string, what: string, needs: readonly string[], held: readonly string[]): Response;
};

/**
 * Makes the resource server. Discovery happens at the first request that needs it (and again
 * after a failure, at most every {@link JWKS_COOLDOWN_MS}); until it succeeds requests are
 * answered 503.
 */
export function resourceServer(options: OAuthResourceOptions, onError: (message: string) => void): ResourceServer {
  const timeoutMs = options.timeoutMs ?? 10_000;
  let discovered: Promise<{ meta: OAuthMetadata; keys: KeySet }> | undefined;
  const introspected: IntrospectionCache = new Map();
  const introspectionAt = (meta: OAuthMetadata): IntrospectionOptions => {
    const i = options.introspection!;
    const endpoint = i.url ?? meta.introspection_endpoint;
    if (typeof endpoint !== 'string')
      throw new AuthorizationServerUnavailable(`the metadata of ${options.issuer} names no introspection_endpoint; set the introspection URL explicitly`);
    return { endpoint, clientId: i.clientId, clientSecret: i.clientSecret, issuer: options.issuer, timeoutMs: options.timeoutMs ?? 10_000 };
  };
  let failedAt = -Infinity;
  const ready = async (): Promise<{ meta: OAuthMetadata; keys: KeySet }> => {
    if (discovered === undefined) {
      if (Date.now() - failedAt < JWKS_COOLDOWN_MS)
        throw new AuthorizationServerUnavailable(`the OAuth issuer ${options.issuer} could not be reached a moment ago`);
      discovered = discoverIssuer(options.issuer, timeoutMs).then((meta) => {
        const jwks = options.jwksUrl ?? meta.jwks_uri;
        if (typeof jwks !== 'string')
          throw new AuthorizationServerUnavailable(`the metadata of ${options.issuer} has no jwks_uri; set the key set's URL explicitly`);
        return { meta, keys: createRemoteJWKSet(new URL(jwks), { cooldownDuration: JWKS_COOLDOWN_MS, timeoutDuration: timeoutMs }) };
      });
      discovered.catch((err: unknown) => {
        discovered = undefined;
        failedAt = Date.now();
        onError(err instanceof Error ? err.message : String(err));
      });
    }
    return discovered;
  };
  const metadataOptions = (meta: OAuthMetadata, resource: string) => ({
    // the issuer as configured: clients compare the authorization server's metadata with it
    oauthMetadata: { ...meta, issuer: options.issuer },
    resourceServerUrl: new URL(resource),
    ...(options.scopesSupported && options.scopesSupported.length > 0 ? { scopesSupported: [...options.scopesSupported] } : {}),
    ...(options.resourceName !== undefined ? { resourceName: options.resourceName } : {}),
    dangerouslyAllowInsecureIssuerUrl: isLoopbackUrl(options.issuer),
  });
  // the scopes to ask for, in the challenge's scope (clients without scopes_supported read them there)
  const advertised = options.challengeScopes && options.challengeScopes.length > 0 ? { requiredScopes: [...options.challengeScopes] } : {};
  const unavailable = (err: unknown): Response => {
    if (!(err instanceof AuthorizationServerUnavailable)) throw err;
    return Response.json(
      { error: 'temporarily_unavailable', error_description: 'The authorization server cannot be reached to check the access token; try again later' },
      { status: 503, headers: { 'retry-after': '5' } },
    );
  };
  return {
    resourceOf: (host, path) => options.publicUrl ?? `http://${host ?? 'localhost'}${path}`,
    async metadata(request, resource) {
      const url = new URL(request.url);
      if (!url.pathname.startsWith('/.well-known/oauth-')) return undefined;
      try {
        const { meta } = await ready();
        // the document is served at the root form too (clients that drop the endpoint's path)
        const suffixed = new URL(getOAuthProtectedResourceMetadataUrl(new URL(resource))).pathname;
        if (url.pathname === '/.well-known/oauth-protected-resource' && suffixed !== url.pathname)
          request = new Request(new URL(suffixed, url), { method: request.method, headers: request.headers });
        const answer = oauthMetadataResponse(request, metadataOptions(meta, resource));
        if (answer === undefined || answer.status !== 200 || new URL(request.url).pathname !== suffixed || request.method !== 'GET') return answer;
        // the SDK's document lacks bearer_methods_supported: tokens are taken from the Authorization header only
        const headers = new Headers(answer.headers);
        headers.delete('content-length');
        return Response.json({ ...((await answer.json()) as object), bearer_methods_supported: ['header'] }, { headers });
      } catch (err) {
        return unavailable(err);
      }
    },
    async tokenEndpoint() {
      const { meta } = await ready();
      return meta.token_endpoint;
    },
    async authenticate(authorization, resource) {
      const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(new URL(resource));
      try {
        const { meta, keys } = await ready();
        const audience = options.audience ?? resource;
        const expected = asUrl(audience);
        // a token that is no JWT is introspected, when the server may
        const presented = /^\s*Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
        const opaque = options.introspection !== undefined && presented !== undefined && !looksLikeJwt(presented);
        const verifier = opaque ? introspectionVerifier(introspectionAt(meta), audience, introspected) : jwtVerifier(keys, options.issuer, audience);
        const auth = await verifyBearerToken(authorization, { verifier, ...(expected ? { expectedResource: expected } : {}), resourceMetadataUrl });
        return { ok: true, auth };
      } catch (err) {
        if (err instanceof OAuthError) {
          const response = bearerAuthChallengeResponse(err, { resourceMetadataUrl, ...advertised });
          // RFC 6750 3.1: a request with no credentials at all gets no error code in the challenge
          if ((authorization ?? '').trim() === '')
            response.headers.set(
              'www-authenticate',
              response.headers.get('www-authenticate')!.replace(/^Bearer error="[^"]*", error_description="(?:[^"\\]|\\.)*"(?:, )?/, 'Bearer '),
            );
          return { ok: false, response, reason: err.message };
        }
        return { ok: false, response: unavailable(err), reason: 'the authorization server cannot be reached' };
      }
    },
    insufficientScope(resource, what, needs, held) {
      const error = new OAuthError(OAuthErrorCode.InsufficientScope, `The ${what} needs the scope${needs.length > 1 ? 's' : ''} ${needs.join(' ')}`);
      return bearerAuthChallengeResponse(error, {
        requiredScopes: [...new Set([...held, ...needs])],
        resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(resource)),
      });
    },
  };
}

/** Whether `url` is on a loopback host (an http issuer is accepted there only). */
export function isLoopbackUrl(url: string): boolean {
  return isLoopbackHostname(new URL(url).hostname);
}

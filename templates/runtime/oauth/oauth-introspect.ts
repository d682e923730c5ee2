/**
 * Opaque access tokens, checked by token introspection (RFC 7662) at the authorization server:
 * with `<PREFIX>_OAUTH_CLIENT_ID` and `<PREFIX>_OAUTH_CLIENT_SECRET` set (the resource server's
 * own credentials there), a token that is not a JWT is POSTed to the introspection endpoint
 * (`<PREFIX>_OAUTH_INTROSPECTION_URL`, else the discovered `introspection_endpoint`) with HTTP
 * Basic client authentication. It is accepted only when the answer says `active: true`, names
 * the issuer (when it names one), holds the expected audience in `aud` (required: a token
 * without an audience could be meant for any resource), has an `exp` not past and no `nbf` in the
 * future (skew {@link CLOCK_SKEW_S}), and a `sub` or `client_id`. Accepted answers are kept for
 * at most {@link INTROSPECTION_CACHE_MS} (never past `exp`), keyed by the token's SHA-256, so a
 * revoked token is refused within that time. The endpoint's answers never reach a log or an error:
 * failures are reported by URL and status.
 */
import { createHash } from 'node:crypto';
import type { AuthInfo, OAuthTokenVerifier } from '@modelcontextprotocol/server';
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import { isRecord } from '../core/json-shapes.js';
import { type FormAnswer, FormPostFailure, postClientForm } from '../operation/oauth-post.js';
import type { Claims } from './oauth-token.js';
import { AuthorizationServerUnavailable, CLOCK_SKEW_S, tokenAuthInfo } from './oauth-token.js';

/** Longest time an introspected token is taken as active without asking again. */
export const INTROSPECTION_CACHE_MS = 30_000;
/** Most introspection answers kept. */
const CACHE_ENTRIES = 1000;

/** Whether `token` has the form of a JWS compact serialization (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/** Where and as whom to introspect. */
export type IntrospectionOptions = {
  readonly endpoint: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly issuer: string;
  readonly timeoutMs: number;
};

/** Accepted answers by the token's SHA-256: the claims, and until when they count. */
export type IntrospectionCache = Map<string, { claims: Claims; until: number }>;

/** Asks the endpoint about `token`; throws AuthorizationServerUnavailable when it cannot answer. */
async function introspect(token: string, o: IntrospectionOptions): Promise<Claims> {
  let res: FormAnswer;
  try {
    res = await postClientForm(o.endpoint, {
      clientId: o.clientId,
      clientSecret: o.clientSecret,
      form: new URLSearchParams({ token, token_type_hint: 'access_token' }),
      timeoutMs: o.timeoutMs,
    });
  } catch (err) {
    const timedOut = err instanceof FormPostFailure && err.timedOut;
    throw new AuthorizationServerUnavailable(
      `the introspection endpoint ${o.endpoint} ${timedOut ? `did not answer within ${o.timeoutMs} ms` : 'cannot be reached'}`,
    );
  }
  if (!res.ok)
    throw new AuthorizationServerUnavailable(
      `the introspection endpoint ${o.endpoint} answered HTTP ${res.status}${res.status === 401 ? " (check the resource server's client ID and secret)" : ''}`,
    );
  try {
    const body = JSON.parse(res.text) as unknown;
    if (isRecord(body)) return body as Claims;
  } catch {
    // reported below
  }
  throw new AuthorizationServerUnavailable(`the introspection endpoint ${o.endpoint} answered something other than a JSON object`);
}

/** A verifier of opaque access tokens by introspection, for one expected audience. */
export function introspectionVerifier(o: IntrospectionOptions, audience: string, cache: IntrospectionCache): OAuthTokenVerifier {
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const key = createHash('sha256').update(token, 'utf8').digest('base64url');
      const now = Date.now();
      const kept = cache.get(key);
      let claims: Claims;
      if (kept !== undefined && kept.until > now) claims = kept.claims;
      else {
        claims = await introspect(token, o);
        if (claims.active !== true) throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token is not active (unknown, revoked or expired)');
      }
      const s = now / 1000;
      if (claims.iss !== undefined && claims.iss !== o.issuer)
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token was issued by another authorization server');
      const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (!aud.includes(audience)) throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token was not issued for this resource');
      if (typeof claims.exp !== 'number' || claims.exp + CLOCK_SKEW_S < s) throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token has expired');
      if (typeof claims.nbf === 'number' && claims.nbf - CLOCK_SKEW_S > s)
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token is not valid yet');
      const auth = tokenAuthInfo(token, claims, o.issuer, audience);
      if (kept === undefined || kept.until <= now) {
        if (cache.size >= CACHE_ENTRIES) cache.clear();
        cache.set(key, { claims, until: Math.min(now + INTROSPECTION_CACHE_MS, claims.exp * 1000) });
      }
      return auth;
    },
  };
}

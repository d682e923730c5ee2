/**
 * OAuth 2.0 Token Exchange (RFC 8693) for the API: the MCP specification forbids passing the
 * client's access token through to an upstream API, so a security scheme with
 * `auth.<scheme>.exchange: { audience, scopes? }` gets a token of its own for each caller. Over
 * HTTP with an OAuth access token (and the server's own client credentials,
 * `<PREFIX>_OAUTH_CLIENT_ID` / `_SECRET`), the token is exchanged at the authorization server's
 * token endpoint — `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, the MCP token as
 * `subject_token`, the API's `audience`, HTTP Basic client authentication — and the API receives
 * the issued token. Exchanged tokens are kept per MCP token (its SHA-256), audience and scopes
 * until 30 s before they expire (never past the MCP token's own expiry); concurrent calls share
 * one exchange. Failures are reported by endpoint, status and OAuth error code, never by body.
 */
import { createHash } from 'node:crypto';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { TokenExchangeSpec } from '../core/types.js';
import { AuthError } from '../operation/oauth.js';
import { type FormAnswer, FormPostFailure, postClientForm } from '../operation/oauth-post.js';

/** Exchanges the OAuth access token of a call (`auth`) for an API token as `spec` asks, for `scheme`. */
export type TokenExchanger = (auth: AuthInfo, spec: TokenExchangeSpec, scheme: string) => Promise<string>;

/** Where and as whom to exchange. */
export type ExchangeOptions = {
  /** The token endpoint (from the authorization server's metadata). */
  readonly tokenEndpoint: () => Promise<string>;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly timeoutMs: number;
};

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
/** OAuth error codes quoted in messages (anything else is left out: it is the server's text). */
const CODES = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
]);
/** Most exchanged tokens kept. */
const CACHE_ENTRIES = 1000;

/** Makes the exchanger. */
export function tokenExchanger(o: ExchangeOptions): TokenExchanger {
  const kept = new Map<string, { token: string; until: number }>();
  const pending = new Map<string, Promise<{ token: string; until: number }>>();
  const exchange = async (subject: AuthInfo, spec: TokenExchangeSpec, scheme: string): Promise<{ token: string; until: number }> => {
    const endpoint = await o.tokenEndpoint();
    const form = new URLSearchParams({
      grant_type: GRANT,
      subject_token: subject.token,
      subject_token_type: ACCESS_TOKEN,
      requested_token_type: ACCESS_TOKEN,
      audience: spec.audience,
    });
    if (spec.scopes !== undefined && spec.scopes.length > 0) form.set('scope', spec.scopes.join(' '));
    const where = `the token exchange for scheme ${JSON.stringify(scheme)} at ${endpoint}`;
    let res: FormAnswer;
    try {
      res = await postClientForm(endpoint, { clientId: o.clientId, clientSecret: o.clientSecret, form, timeoutMs: o.timeoutMs });
    } catch (err) {
      throw new AuthError(`${where} ${err instanceof FormPostFailure && err.timedOut ? `got no answer within ${o.timeoutMs} ms` : 'could not be sent'}`);
    }
    const text = res.text;
    let body: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed === 'object' && parsed !== null) body = parsed as Record<string, unknown>;
    } catch {
      // reported below
    }
    if (!res.ok)
      throw new AuthError(`${where} answered HTTP ${res.status}${typeof body.error === 'string' && CODES.has(body.error) ? ` (${body.error})` : ''}`);
    if (typeof body.access_token !== 'string' || body.access_token === '') throw new AuthError(`${where} answered without an access_token`);
    const now = Date.now();
    const life = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in * 1000 : 60_000;
    return {
      token: body.access_token,
      until: Math.min(now + Math.max(0, life - 30_000), subject.expiresAt !== undefined ? subject.expiresAt * 1000 : Infinity),
    };
  };
  return async (auth, spec, scheme) => {
    const key = `${createHash('sha256').update(auth.token, 'utf8').digest('base64url')}\n${spec.audience}\n${(spec.scopes ?? []).join(' ')}`;
    const hit = kept.get(key);
    if (hit !== undefined && hit.until > Date.now()) return hit.token;
    let running = pending.get(key);
    if (running === undefined) {
      running = exchange(auth, spec, scheme).finally(() => pending.delete(key));
      pending.set(key, running);
    }
    const got = await running;
    if (kept.size >= CACHE_ENTRIES) kept.clear();
    if (got.until > Date.now()) kept.set(key, got);
    return got.token;
  };
}

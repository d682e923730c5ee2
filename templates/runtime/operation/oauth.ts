/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4): fetches access tokens from a token endpoint and
 * keeps them in memory until shortly before they expire. Concurrent calls share one token
 * request; a token the API rejected is dropped so the next call fetches a new one.
 *
 * Nothing here ever puts a secret into an error message or a log line: token endpoint
 * failures are reported by status (and the standard OAuth error code) only, never by body.
 */
import { isRecord } from '../core/json-shapes.js';
import { isLoopbackHostname } from '../core/loopback.js';
import { type FormAnswer, FormPostFailure, postClientForm } from './oauth-post.js';

/** A failure to obtain or apply credentials; its message names variables and endpoints, never secret values. */
export class AuthError extends Error {
  /** Creates the error; `message` must not contain secrets. */
  constructor(message: string) {
    super(message);
    this.name = 'AuthError';
  }
}

/** What a token request needs besides the client's credentials. */
export type TokenRequest = {
  /** Token endpoint, absolute or relative to `baseUrl`. */
  tokenUrl: string;
  /** Scopes to request; none ⇒ no `scope` parameter. */
  scopes: readonly string[];
  clientId: string;
  clientSecret: string;
  /** Base URL of the API, to resolve a relative `tokenUrl`. */
  baseUrl?: string;
  /** Timeout of the token request in milliseconds. */
  timeoutMs: number;
  fetch: typeof fetch;
};

/** A token and when it stops being used (epoch ms; `Infinity` when the endpoint gave no lifetime). */
type Cached = { token: string; expiresAt: number };

/** Longest margin before `expires_in` at which a token is renewed (it is also at most a tenth of the lifetime). */
export const EXPIRY_SKEW_MS = 30_000;

/** Error codes of RFC 6749 §5.2, the only part of an error response that is repeated. */
const OAUTH_ERRORS = new Set(['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope']);

/** Host and path of a URL, without query or credentials. */
function where(url: URL): string {
  return `${url.host}${url.pathname}`;
}

/** Whether a URL's hostname is this machine (`localhost`, 127.0.0.0/8, `[::1]`): a request there never crosses the network. */
function isLoopback(hostname: string): boolean {
  return isLoopbackHostname(hostname) || hostname.toLowerCase().endsWith('.localhost');
}

/** The first error code (`ECONNREFUSED`, `UND_ERR_…`) in an error's cause chain, else the innermost message. */
function causeOf(err: unknown): string {
  let cur: unknown = err;
  let message = 'unknown error';
  for (let depth = 0; depth < 6 && cur instanceof Error; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    message = cur.message;
    cur = cur.cause;
  }
  // a URL in the message keeps its host and path only
  return message.replace(/\?[^\s"')]*/g, '');
}

/** The fields of a token response: JSON (RFC 6749), or form-encoded as some older endpoints answer. */
function tokenFields(text: string): Record<string, unknown> {
  try {
    const json: unknown = JSON.parse(text);
    return isRecord(json) ? json : {};
  } catch {
    return /^[^\s{[<]*=/.test(text.trim()) ? Object.fromEntries(new URLSearchParams(text.trim())) : {};
  }
}

/** Resolves the token URL against the API base URL. */
function tokenEndpoint(req: TokenRequest): URL {
  try {
    return req.baseUrl !== undefined ? new URL(req.tokenUrl, req.baseUrl) : new URL(req.tokenUrl);
  } catch {
    throw new AuthError(
      `the token URL ${JSON.stringify(req.tokenUrl)} is not an absolute URL${req.baseUrl === undefined ? ' and no base URL is configured to resolve it against' : ''}`,
    );
  }
}

/** Requests one token; `now` is read when the request starts, so lifetimes are never overestimated. */
async function requestToken(req: TokenRequest, now: () => number): Promise<Cached> {
  const url = tokenEndpoint(req);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new AuthError(`the token URL of ${where(url)} is not http(s)`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new AuthError(
      `the token URL http://${where(url)} is not https, and the client secret must not cross the network in clear (plain http is accepted for localhost and 127.0.0.1 only)`,
    );
  }
  const form = new URLSearchParams([['grant_type', 'client_credentials']]);
  if (req.scopes.length > 0) form.set('scope', req.scopes.join(' '));
  const started = now();
  let response: FormAnswer;
  try {
    response = await postClientForm(url.href, { clientId: req.clientId, clientSecret: req.clientSecret, form, timeoutMs: req.timeoutMs, fetch: req.fetch });
  } catch (err) {
    const failure = err instanceof FormPostFailure ? err : new FormPostFailure(false, { cause: err });
    throw new AuthError(`the token request to ${where(url)} ${failure.timedOut ? `timed out after ${req.timeoutMs} ms` : `failed: ${causeOf(failure.cause)}`}`);
  }
  const text = response.text;
  const fields = tokenFields(text);
  if (!response.ok) {
    const code = typeof fields.error === 'string' && OAUTH_ERRORS.has(fields.error) ? ` (${fields.error})` : '';
    throw new AuthError(`the token endpoint ${where(url)} answered HTTP ${response.status}${code}`);
  }
  const token = fields.access_token;
  if (typeof token !== 'string' || token.trim() === '') throw new AuthError(`the token endpoint ${where(url)} answered without an access_token`);
  if (/[^\x21-\x7e]/.test(token.trim())) throw new AuthError(`the token endpoint ${where(url)} returned an access token that cannot be sent in a header`);
  const raw = fields.expires_in;
  const seconds = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : undefined;
  if (seconds === undefined || !Number.isFinite(seconds)) return { token: token.trim(), expiresAt: Infinity };
  const lifetime = Math.max(0, seconds * 1000);
  return { token: token.trim(), expiresAt: started + lifetime - Math.min(EXPIRY_SKEW_MS, lifetime / 10) };
}

/** In-memory tokens per security scheme, with at most one request in flight per scheme. */
export class TokenCache {
  private readonly cached = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<Cached>>();
  private readonly now: () => number;

  /** `now` is the clock (tests pass a fake one). */
  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /**
   * A valid token for `scheme`: the cached one until it expires, else a new one. Calls that
   * arrive while a request is in flight wait for that request instead of sending their own.
   * Throws `AuthError` when no token can be obtained (the next call tries again).
   */
  async token(scheme: string, req: TokenRequest): Promise<string> {
    const hit = this.cached.get(scheme);
    if (hit !== undefined && hit.expiresAt > this.now()) return hit.token;
    let pending = this.pending.get(scheme);
    if (pending === undefined) {
      pending = requestToken(req, this.now)
        .then((fresh) => {
          this.cached.set(scheme, fresh);
          return fresh;
        })
        .finally(() => this.pending.delete(scheme));
      this.pending.set(scheme, pending);
    }
    return (await pending).token;
  }

  /** Drops `token` of `scheme` if it is still the cached one (another call may have renewed it already). */
  invalidate(scheme: string, token: string): void {
    if (this.cached.get(scheme)?.token === token) this.cached.delete(scheme);
  }
}

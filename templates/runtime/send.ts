/**
 * Sends one API request, with credentials when the tool needs them:
 * - credentials are added by the `Authenticator` (OAuth tokens fetched or reused);
 * - redirects are followed by hand, so that credential headers, cookies and `Authorization` go
 *   to the same origin only (fetch itself would forward a custom API-key header anywhere);
 * - when the API answers 401 to a request that carried an OAuth token, the token is dropped, a
 *   new one fetched and the request sent again, once.
 * The MCP client's own headers are never involved: a request carries the tool's arguments and
 * the server's own credentials only.
 */
import type { Applied, ApplyContext, Authenticator } from './auth.js';
import type { BuiltRequest } from './request.js';
import type { SecurityScheme } from './types.js';

/** Most redirects followed for one request (fetch's own limit). */
export const MAX_REDIRECTS = 20;

/** Options of {@link send}. */
export type SendOptions = ApplyContext & {
  signal: AbortSignal;
  auth: Authenticator;
  /**
   * Receives the request as actually sent (credentials included) and the secret values in it,
   * before sending, so that failure messages can be scrubbed even when sending throws.
   */
  onApplied?: (applied: Applied) => void;
};

/** A redirect that cannot or may not be followed. */
export class RedirectError extends Error {
  /** Creates the error; `message` names no URL query. */
  constructor(message: string) {
    super(message);
    this.name = 'RedirectError';
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** `init` for fetch from a built request. */
function init(req: BuiltRequest, signal: AbortSignal, redirect: RequestRedirect): RequestInit {
  const out: RequestInit = { method: req.method, headers: req.headers, signal, redirect };
  if (req.body !== undefined) out.body = typeof req.body === 'string' ? req.body : new Uint8Array(req.body);
  return out;
}

/**
 * Follows redirects of a request that carries credentials. On a hop to another origin every
 * credential header (and `Cookie`) is dropped; 303, and 301/302 after a POST, become a GET
 * without body, as in fetch.
 */
async function follow(applied: Applied, opts: SendOptions): Promise<Response> {
  let req: BuiltRequest = { ...applied.request, headers: { ...applied.request.headers } };
  for (let hop = 0; ; hop++) {
    const response = await opts.fetch(req.url, init(req, opts.signal, 'manual'));
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null) return response;
    await response.body?.cancel().catch(() => undefined);
    if (hop >= MAX_REDIRECTS) throw new RedirectError(`more than ${MAX_REDIRECTS} redirects`);
    let next: URL;
    try {
      next = new URL(location, req.url);
    } catch {
      throw new RedirectError('the API redirected to an invalid URL');
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new RedirectError(`the API redirected to a ${next.protocol} URL`);
    const headers = { ...req.headers };
    if (next.origin !== new URL(req.url).origin) {
      const drop = new Set([...applied.headers, 'authorization', 'cookie']);
      for (const h of Object.keys(headers)) if (drop.has(h.toLowerCase())) delete headers[h];
    }
    let { method, body } = req;
    if ((response.status === 303 && method !== 'HEAD') || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      for (const h of Object.keys(headers)) if (h.toLowerCase() === 'content-type') delete headers[h];
    }
    req = { url: next.href, method, headers };
    if (body !== undefined) req.body = body;
  }
}

/**
 * Sends `request` with the credentials of `schemes` (none ⇒ a plain fetch that follows
 * redirects). Throws `AuthError` when credentials cannot be obtained, and whatever fetch throws.
 */
export async function send(request: BuiltRequest, schemes: readonly SecurityScheme[], opts: SendOptions): Promise<Response> {
  if (schemes.length === 0) return opts.fetch(request.url, init(request, opts.signal, 'follow'));
  let applied = await opts.auth.apply(request, schemes, opts);
  opts.onApplied?.(applied);
  const response = await follow(applied, opts);
  if (response.status !== 401 || !opts.auth.invalidate(applied)) return response;
  // the token was rejected (revoked, or expired early): one new token, one retry
  await response.body?.cancel().catch(() => undefined);
  applied = await opts.auth.apply(request, schemes, opts);
  opts.onApplied?.(applied);
  return follow(applied, opts);
}

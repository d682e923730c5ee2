/**
 * Sends one API request, with credentials when the tool needs them:
 * - credentials are added by the `Authenticator` (OAuth tokens fetched or reused);
 * - redirects of a request that carries credentials (or values of hidden arguments read from the
 *   environment) are followed by hand, so that credential headers, cookies and `Authorization`
 *   go to the same origin only (fetch itself would forward a custom API-key header anywhere),
 *   and a redirect to another origin whose URL carries a secret (an API key in the query that
 *   the API copied into `Location`) is not followed at all;
 * - when the API answers 401 to a request that carried an OAuth token, the token is dropped, a
 *   new one fetched and the request sent again, once.
 * The MCP client's own headers are never involved: a request carries the tool's arguments and
 * the server's own credentials only. A request's signal ({@link deadline}) aborts it after its
 * timeout or when its caller cancels.
 */

import type { SecurityScheme } from '../core/types.js';
import type { Applied, ApplyContext, Authenticator } from './auth.js';
import type { BuiltRequest } from './request.js';

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
  /** Secret values the request carries besides credentials (hidden arguments read from the environment). */
  secrets?: readonly string[];
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

/** Secrets that are long enough to look for (as in error scrubbing: shorter ones would match by chance). */
function searchable(secrets: readonly string[]): string[] {
  return secrets.filter((s) => s.length >= 4);
}

/** Whether `url` carries one of `secrets`: in its text, or decoded in a query value or the path. */
function carriesSecret(url: URL, secrets: readonly string[]): boolean {
  const values = [url.href, decodeSafely(url.pathname), ...[...url.searchParams].flatMap(([k, v]) => [k, v])];
  return secrets.some((s) => values.some((v) => v.includes(s)));
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `init` for fetch from a built request. */
function init(req: BuiltRequest, signal: AbortSignal, redirect: RequestRedirect): RequestInit {
  const out: RequestInit = { method: req.method, headers: req.headers, signal, redirect };
  if (req.body !== undefined) out.body = typeof req.body === 'string' ? req.body : new Uint8Array(req.body);
  return out;
}

/**
 * Follows redirects of a request that carries credentials. On a hop to another origin every
 * credential header (and `Cookie`, and any header holding a secret) is dropped, and a target URL
 * that holds a secret is refused; 303, and 301/302 after a POST, become a GET without body, as
 * in fetch.
 */
async function follow(applied: Applied, opts: SendOptions): Promise<Response> {
  let req: BuiltRequest = { ...applied.request, headers: { ...applied.request.headers } };
  const secrets = searchable([...applied.secrets, ...(opts.secrets ?? [])]);
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
      if (carriesSecret(next, secrets))
        throw new RedirectError(
          `the API redirected to another origin (${next.host}) with a credential in the URL; not followed, so that the credential stays with the API`,
        );
      const drop = new Set([...applied.headers, 'authorization', 'cookie']);
      for (const h of Object.keys(headers)) if (drop.has(h.toLowerCase()) || secrets.some((s) => headers[h]!.includes(s))) delete headers[h];
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
 * Sends `request` with the credentials of `schemes` (none, and no `opts.secrets` ⇒ a plain fetch
 * that follows redirects). Throws `AuthError` when credentials cannot be obtained,
 * `RedirectError` for a redirect that may not be followed, and whatever fetch throws.
 */
export async function send(request: BuiltRequest, schemes: readonly SecurityScheme[], opts: SendOptions): Promise<Response> {
  if (schemes.length === 0) {
    if (searchable(opts.secrets ?? []).length === 0) return opts.fetch(request.url, init(request, opts.signal, 'follow'));
    return follow({ request, secrets: [], headers: [], tokens: new Map() }, opts);
  }
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

/** setTimeout's longest delay; a longer one fires at once (as AbortSignal.timeout's does). */
const TIMEOUT_MAX = 2 ** 31 - 1;

/** The signal of one API request: aborted after `ms` or when `caller` is; `clear()` once the call is over. */
export type Deadline = { readonly signal: AbortSignal; readonly timeout: { readonly aborted: boolean }; clear(): void };

/**
 * A {@link Deadline}: the same signal as `AbortSignal.any([caller, AbortSignal.timeout(ms)])` (the
 * reason is the caller's, or a `TimeoutError` DOMException), made of one controller and one timer
 * that `clear()` stops: a fraction of the cost per call, and no timer left behind.
 */
export function deadline(ms: number, caller?: AbortSignal): Deadline {
  if (ms > TIMEOUT_MAX) {
    const timeout = AbortSignal.timeout(ms);
    return { signal: caller ? AbortSignal.any([caller, timeout]) : timeout, timeout, clear: () => undefined };
  }
  const controller = new AbortController();
  const timeout = { aborted: false };
  if (caller?.aborted) {
    controller.abort(caller.reason);
    return { signal: controller.signal, timeout, clear: () => undefined };
  }
  const onAbort = (): void => controller.abort(caller!.reason);
  caller?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    timeout.aborted = true;
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, ms);
  timer.unref();
  return {
    signal: controller.signal,
    timeout,
    clear: () => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    },
  };
}

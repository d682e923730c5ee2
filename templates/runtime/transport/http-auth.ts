/**
 * Request gates of the Streamable HTTP transport (`http.ts`): Host validation against DNS
 * rebinding, Origin validation, and static bearer tokens compared in constant time, with the
 * answer and the (rate-limited) log line of a refused request.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Splits a Host header value into its lower-cased host name and port (`[::1]:80` → `[::1]`, `80`). */
function splitHost(value: string): { name: string; port: string | undefined } {
  const v = value.trim().toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d+))?$/.exec(v);
  return m ? { name: m[1]!, port: m[2] } : { name: '', port: undefined };
}

/**
 * Whether a Host header is acceptable: a loopback name (`localhost`, `127.0.0.1`, `[::1]`, any
 * port), or a value in `allowed` (compared case-insensitively, either the whole `name:port` or the
 * bare name). A missing or malformed Host is refused.
 */
export function hostAllowed(host: string | undefined, allowed: readonly string[] = []): boolean {
  if (host === undefined || host === '') return false;
  const { name, port } = splitHost(host);
  if (name === '') return false;
  if (LOOPBACK_NAMES.has(name)) return true;
  const full = port === undefined ? name : `${name}:${port}`;
  return allowed.some((a) => {
    const x = a.trim().toLowerCase();
    return x === full || x === name;
  });
}

/**
 * Whether an Origin header is acceptable: absent (non-browser clients send none), an http(s)
 * origin on a loopback name (any port), or one of `allowed` (compared as normalized origins, so
 * `https://app.example.com/` matches `https://app.example.com`). `null` and junk are refused.
 */
export function originAllowed(origin: string | undefined, allowed: readonly string[] = []): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (LOOPBACK_NAMES.has(url.hostname.toLowerCase())) return true;
  return allowed.some((a) => {
    try {
      return new URL(a).origin === url.origin;
    } catch {
      return false;
    }
  });
}

/** Why a request was refused for want of a valid client token. */
export type BearerRefusal = 'missing' | 'not-bearer' | 'unknown-token';

/** The outcome of checking an `Authorization` header against the configured tokens. */
export type BearerCheck = { ok: true; token: string; identity: string } | { ok: false; reason: BearerRefusal };

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * Makes a checker for `Authorization: Bearer <token>` against `tokens` (token → identity). Tokens
 * are compared as sha256 digests with `timingSafeEqual`, every configured token every time, so
 * neither the length nor the content of a right token leaks through timing. A failed check says
 * why ({@link refusal} turns that into the answer), never what was sent.
 */
export function bearerChecker(tokens: ReadonlyMap<string, string>): (authorization: string | undefined) => BearerCheck {
  const known = [...tokens].map(([token, identity]) => ({ token, identity, hash: digest(token) }));
  return (authorization) => {
    if (authorization === undefined || authorization.trim() === '') return { ok: false, reason: 'missing' };
    const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (m === null) return { ok: false, reason: 'not-bearer' };
    const presented = digest(m[1]!);
    let found: (typeof known)[number] | undefined;
    for (const k of known) {
      if (timingSafeEqual(presented, k.hash) && found === undefined) found = k;
    }
    return found ? { ok: true, token: found.token, identity: found.identity } : { ok: false, reason: 'unknown-token' };
  };
}

/** What each refusal is, in the log line (fixed texts: nothing of the request). */
const REASONS: Record<BearerRefusal, string> = {
  missing: 'no Authorization header',
  'not-bearer': 'the Authorization header is not "Bearer <token>"',
  'unknown-token': 'the bearer token is not one of the client tokens',
};

/** `text` fit for a quoted-string of a `WWW-Authenticate` parameter (RFC 9110): no quotes, backslashes or controls. */
function quotable(text: string): string {
  return text.replace(/["\\\u0000-\u001f\u007f-\uffff]/g, "'");
}

/**
 * The 401 answer to a refused request: the JSON-RPC error message of its body and the
 * `WWW-Authenticate` value, both saying that a bearer token from `tokensFrom` (the variables
 * holding the client tokens, e.g. `PETS_HTTP_TOKENS`) is needed. A static-token server has no
 * OAuth: clients that try OAuth discovery after a 401 (they do, whatever the header says) find
 * {@link noOAuth} at every discovery path instead.
 */
export function refusal(reason: BearerRefusal, tokensFrom = "the server's client tokens"): { message: string; challenge: string } {
  const need = `send "Authorization: Bearer <token>" with a token listed in ${tokensFrom}`;
  const description =
    reason === 'missing'
      ? `this MCP server needs a client token: ${need}`
      : reason === 'not-bearer'
        ? `the Authorization header must be "Bearer <token>": ${need}`
        : `the bearer token is not one of this server's client tokens: ${need}`;
  // RFC 6750 3.1: no error code when no credentials were sent; invalid_token for a wrong one
  const code = reason === 'missing' ? '' : reason === 'not-bearer' ? ', error="invalid_request"' : ', error="invalid_token"';
  return { message: `Unauthorized: ${description}`, challenge: `Bearer realm="mcp"${code}, error_description="${quotable(description)}"` };
}

/** Paths clients probe for OAuth (RFC 9728 and 8414 metadata, OpenID discovery, the 2025-03-26 default endpoints). */
export function isOAuthPath(pathname: string): boolean {
  return (
    pathname.startsWith('/.well-known/oauth-') ||
    pathname.startsWith('/.well-known/openid-configuration') ||
    pathname === '/register' ||
    pathname === '/authorize' ||
    pathname === '/token'
  );
}

/** The 404 message at an OAuth discovery path of a server with static client tokens (clients show it to the user). */
export function noOAuth(tokensFrom = "the server's client tokens"): string {
  return `Not found: this MCP server does not use OAuth; send "Authorization: Bearer <token>" with a token listed in ${tokensFrom}`;
}

/** Logs one refused request, or counts it: `oauth` with `detail`, the verifier's fixed text. */
export type RefusalLog = (entry: { remote: string | undefined; reason: BearerRefusal | 'oauth'; detail?: string }) => void;

/**
 * Logs refused requests: one line each (remote address and reason; the time is the line's), at
 * most one per `intervalMs` (1 s): refusals in between are counted and the next line says how
 * many were not logged (`suppressed`). A flood of bad requests cannot flood the log. Nothing of
 * the request's headers is ever written: the reason is one of three fixed texts, or the OAuth
 * verifier's fixed text.
 */
export function refusalLog(write: (message: string, data: Record<string, unknown>) => void, now: () => number = Date.now, intervalMs = 1000): RefusalLog {
  let last = -Infinity;
  let suppressed = 0;
  return ({ remote, reason, detail }) => {
    const t = now();
    if (t - last < intervalMs) {
      suppressed++;
      return;
    }
    last = t;
    write('http: refused a request without a valid client token (401)', {
      remote: remote ?? 'unknown',
      reason: reason === 'oauth' ? `OAuth: ${detail ?? 'refused'}` : REASONS[reason],
      ...(suppressed > 0 ? { suppressed } : {}),
    });
    suppressed = 0;
  };
}

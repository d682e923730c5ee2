/**
 * Request gates of the Streamable HTTP transport (`http.ts`): Host validation against DNS
 * rebinding, Origin validation, and static bearer tokens compared in constant time.
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

/** The outcome of checking an `Authorization` header against the configured tokens. */
export type BearerCheck =
  | { ok: true; token: string; identity: string }
  | { ok: false; challenge: string };

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * Makes a checker for `Authorization: Bearer <token>` against `tokens` (token → identity). Tokens
 * are compared as sha256 digests with `timingSafeEqual`, every configured token every time, so
 * neither the length nor the content of a right token leaks through timing. A failed check carries
 * the `WWW-Authenticate` value to answer with (`error="invalid_token"` when a token was sent).
 */
export function bearerChecker(tokens: ReadonlyMap<string, string>): (authorization: string | undefined) => BearerCheck {
  const known = [...tokens].map(([token, identity]) => ({ token, identity, hash: digest(token) }));
  return (authorization) => {
    const m = authorization === undefined ? null : /^\s*Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (m === null) return { ok: false, challenge: 'Bearer realm="mcp"' };
    const presented = digest(m[1]!);
    let found: (typeof known)[number] | undefined;
    for (const k of known) {
      if (timingSafeEqual(presented, k.hash) && found === undefined) found = k;
    }
    return found
      ? { ok: true, token: found.token, identity: found.identity }
      : { ok: false, challenge: 'Bearer realm="mcp", error="invalid_token"' };
  };
}

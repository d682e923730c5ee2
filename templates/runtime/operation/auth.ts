/**
 * Credentials for API calls: the OpenAPI security schemes of the generated config, with their
 * secrets read from environment variables when a tool is called.
 *
 * - A tool lists requirement alternatives (OR of AND). The first alternative whose variables
 *   are all set is used; an empty alternative (auth optional) is used only when no other one
 *   can be. When none can, the call is refused with a message naming the missing variables, and
 *   nothing is sent: a credential is never sent empty (blank variables count as unset).
 * - apiKey goes in a header, the query or a cookie (merged with cookie parameters); bearer and
 *   OAuth tokens as `Authorization: Bearer`; basic as `Authorization: Basic`.
 * - Values are never logged or put into messages; {@link scrub} removes them from error texts
 *   (an API may echo a rejected key back in its error body).
 * - A scheme with `fromClient` (apiKey, bearer, basic) takes its credential from that header of
 *   the MCP request when the call came over HTTP (`clientHeaders` given), instead of the
 *   environment: bearer from the value with a leading `Bearer ` dropped, apiKey from the value,
 *   basic from `Basic <base64 of user:password>` or plain `user:password`. Over stdio (no
 *   `clientHeaders`) the environment is used as for any scheme. Nothing else of the MCP request
 *   is ever forwarded.
 */

import type { SecurityRequirements, SecurityScheme, TokenExchangeSpec } from '../core/types.js';
import { read } from '../process/settings.js';
import { schemeVariables } from '../process/variables.js';
import { AuthError, TokenCache } from './oauth.js';
import type { BuiltRequest } from './request.js';
import { encodeRfc3986 } from './request.js';

export { schemeVariables } from '../process/variables.js';

export { AuthError } from './oauth.js';

/** Options of {@link Authenticator}. */
export type AuthOptions = {
  /** Clock for token expiry (tests). */
  now?: () => number;
};

/** The credentials chosen for one call, or why there are none. */
export type Selection = { readonly ok: true; readonly schemes: readonly SecurityScheme[] } | { readonly ok: false; readonly message: string };

/** Headers of the MCP request (a WHATWG `Headers` fits); `get` is case-insensitive and answers `null` when absent. */
export type ClientHeaders = { get(name: string): string | null };

/** What the server needs to fetch OAuth tokens for a call, and the MCP request's headers over HTTP. */
export type ApplyContext = {
  baseUrl?: string;
  timeoutMs: number;
  fetch: typeof fetch;
  /** Headers of the MCP request, given only over HTTP: `fromClient` schemes read their credential from them. */
  clientHeaders?: ClientHeaders;
  /**
   * Exchanges the call's OAuth access token for a token for an API (RFC 8693); given only over
   * HTTP with an OAuth token and a server that may exchange. Schemes with `exchange` use it.
   */
  exchange?: (spec: TokenExchangeSpec, scheme: string) => Promise<string>;
};

/** A request with credentials applied, and what a caller needs to handle it safely. */
export type Applied = {
  readonly request: BuiltRequest;
  /** Secret values sent (and their encoded forms), to scrub from any error text. */
  readonly secrets: readonly string[];
  /** Names of the headers that carry credentials (dropped on a redirect to another origin). */
  readonly headers: readonly string[];
  /** OAuth tokens used, by scheme name, so that a 401 can drop exactly these. */
  readonly tokens: ReadonlyMap<string, string>;
};

/**
 * A variable of `scheme` as the call uses it: blank counts as unset, except an HTTP basic
 * password, which may be empty when the variable is set (APIs such as Stripe take the key as
 * the user name and no password).
 */
function readVariable(env: NodeJS.ProcessEnv, scheme: SecurityScheme, name: string): string | undefined {
  if (scheme.kind === 'basic' && name === scheme.env.password && env[name] !== undefined) return env[name]!.trim();
  return read(env, name);
}

/** The header a scheme takes its credential from over HTTP, if it does (manifest `fromClient`). */
export function clientHeaderOf(scheme: SecurityScheme): string | undefined {
  return scheme.kind === 'oauth2ClientCredentials' ? undefined : scheme.fromClient;
}

/** Value of a header of the MCP request, trimmed; `undefined` when absent or blank. */
function readHeader(headers: ClientHeaders, name: string): string | undefined {
  const v = headers.get(name);
  return v === null || v.trim() === '' ? undefined : v.trim();
}

/** Sets a header, replacing any of the same name in another letter case. */
function setHeader(headers: Record<string, string>, name: string, value: string): void {
  for (const h of Object.keys(headers)) if (h.toLowerCase() === name.toLowerCase()) delete headers[h];
  headers[name] = value;
}

/** Refuses values that HTTP headers cannot carry; the message names the variable, not the value. */
function headerSafe(variable: string, value: string): string {
  if (/[^\t\x20-\x7e\x80-\xff]/.test(value))
    throw new AuthError(`the value of ${variable} cannot be sent in an HTTP header (it contains line breaks, control or non-Latin-1 characters)`);
  return value;
}

/** Adds `name=value` to the query, replacing a parameter of the same name. */
function withQueryParam(url: string, name: string, value: string): string {
  const at = url.indexOf('?');
  const base = at === -1 ? url : url.slice(0, at);
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  const pairs =
    at === -1
      ? []
      : url
          .slice(at + 1)
          .split('&')
          .filter((p) => p !== '' && decode(p.split('=')[0] ?? '') !== name);
  pairs.push(`${encodeRfc3986(name)}=${encodeRfc3986(value)}`);
  return `${base}?${pairs.join('&')}`;
}

/** A cookie value: characters outside RFC 6265's cookie-octet are percent-encoded, so `;` cannot add cookies. */
function cookieValue(value: string): string {
  return value.replace(/[^\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]/gu, (c) => encodeURIComponent(c));
}

/** `text` with every secret replaced by `[redacted]` (secrets shorter than 4 characters are left: they would mangle text). */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of [...secrets].filter((x) => x.length >= 4).sort((a, b) => b.length - a.length)) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * User name and password from a `fromClient` header: `Basic <base64 of user:password>` or plain
 * `user:password` (the user name ends at the first `:`). Messages never contain the value.
 */
function basicFromHeader(scheme: string, header: string, value: string): [string, string] {
  const wrong = `the ${header} header of the MCP request must hold Basic <base64 of user:password> or user:password (security scheme ${JSON.stringify(scheme)})`;
  let pair = value;
  const m = /^Basic\s+(\S+)$/i.exec(value);
  if (m) {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(m[1]!)) throw new AuthError(wrong);
    pair = Buffer.from(m[1]!, 'base64').toString('utf8');
  }
  const colon = pair.indexOf(':');
  if (colon <= 0) throw new AuthError(wrong);
  return [pair.slice(0, colon), pair.slice(colon + 1)];
}

/**
 * Chooses and applies credentials. One instance serves a whole server, so OAuth tokens are
 * shared by all calls; secrets are read from `env` at each call and never stored elsewhere.
 */
export class Authenticator {
  private readonly schemes = new Map<string, SecurityScheme>();
  private readonly env: NodeJS.ProcessEnv;
  private readonly tokens: TokenCache;

  /** `schemes` come from the generated config; `env` holds the secrets. */
  constructor(schemes: readonly SecurityScheme[], env: NodeJS.ProcessEnv, options: AuthOptions = {}) {
    for (const s of schemes) this.schemes.set(s.name, s);
    this.env = env;
    this.tokens = new TokenCache(options.now);
  }

  /**
   * Picks the credentials for a call with these requirements: the first alternative whose
   * credentials are all there; else an empty alternative (auth optional); else a refusal naming,
   * per alternative, the variables to set or (`fromClient` schemes over HTTP, when
   * `clientHeaders` is given) the headers the MCP client must send.
   */
  select(requirements: SecurityRequirements | undefined, clientHeaders?: ClientHeaders, exchanging = false): Selection {
    if (requirements === undefined || requirements.length === 0) return { ok: true, schemes: [] };
    const wanted: Array<{ which: string; unknown: boolean; missing: string[]; headers: string[] }> = [];
    for (const alternative of requirements) {
      if (alternative.length === 0) continue;
      const schemes: SecurityScheme[] = [];
      const missing = new Set<string>();
      const headers = new Set<string>();
      let unknown = false;
      for (const name of alternative) {
        const scheme = this.schemes.get(name);
        if (scheme === undefined) {
          unknown = true;
          continue;
        }
        schemes.push(scheme);
        // an exchanged token needs neither the environment nor a header
        if (exchanging && scheme.kind === 'bearer' && scheme.exchange !== undefined) continue;
        const header = clientHeaders ? clientHeaderOf(scheme) : undefined;
        if (header !== undefined) {
          if (readHeader(clientHeaders!, header) === undefined) headers.add(header);
        } else for (const v of schemeVariables(scheme)) if (readVariable(this.env, scheme, v) === undefined) missing.add(v);
      }
      if (!unknown && missing.size === 0 && headers.size === 0) return { ok: true, schemes };
      const names = alternative.map((n) => JSON.stringify(n)).join(' + ');
      wanted.push({ which: `${alternative.length > 1 ? 'schemes' : 'scheme'} ${names}`, unknown, missing: [...missing], headers: [...headers] });
    }
    if (requirements.some((a) => a.length === 0)) return { ok: true, schemes: [] };
    const notConfigured = (w: (typeof wanted)[number]) => `${w.which.replace(/^schemes/, 'scheme')} (not configured in this server)`;
    if (wanted.every((w) => w.headers.length === 0)) {
      const wants = wanted.map((w) => (w.unknown ? notConfigured(w) : `${w.missing.join(' and ')} (${w.which})`));
      return { ok: false, message: `missing credentials: set ${wants.join(', or ')} in the server's environment` };
    }
    const wants = wanted.map((w) => {
      if (w.unknown) return notConfigured(w);
      const parts = [];
      if (w.headers.length > 0) parts.push(`the MCP client to send the ${w.headers.join(' and ')} header${w.headers.length > 1 ? 's' : ''}`);
      if (w.missing.length > 0) parts.push(`${w.missing.join(' and ')} set in the server's environment`);
      return `${parts.join(' and ')} (${w.which})`;
    });
    return { ok: false, message: `missing credentials: the call needs ${wants.join(', or ')}` };
  }

  /**
   * Returns `request` with the credentials of `schemes` added (fetching OAuth tokens as needed).
   * Throws `AuthError` when a value is missing or cannot be sent; the request is not modified.
   */
  async apply(request: BuiltRequest, schemes: readonly SecurityScheme[], ctx: ApplyContext): Promise<Applied> {
    const headers = { ...request.headers };
    const secrets: string[] = [];
    const credentialHeaders = new Set<string>();
    const tokens = new Map<string, string>();
    let url = request.url;
    const secret = (variable: string): string => {
      const v = read(this.env, variable);
      if (v === undefined) throw new AuthError(`missing credentials: set ${variable} in the server's environment`);
      return v;
    };
    // over HTTP, a `fromClient` scheme's credential: that header of the MCP request, never the environment
    const fromClient = (s: SecurityScheme): { header: string; value: string } | undefined => {
      const header = ctx.clientHeaders ? clientHeaderOf(s) : undefined;
      if (header === undefined) return undefined;
      const value = readHeader(ctx.clientHeaders!, header);
      if (value === undefined)
        throw new AuthError(`missing credentials: the MCP client must send the ${header} header with its requests (security scheme ${JSON.stringify(s.name)})`);
      return { header, value: headerSafe(`the ${header} header`, value) };
    };
    const bearer = (variable: string, token: string) => {
      setHeader(headers, 'Authorization', `Bearer ${headerSafe(variable, token)}`);
      credentialHeaders.add('authorization');
      secrets.push(token);
    };
    for (const s of schemes) {
      switch (s.kind) {
        case 'apiKey': {
          const key = fromClient(s)?.value ?? secret(s.env.apiKey);
          secrets.push(key, encodeRfc3986(key));
          if (s.in === 'header') {
            setHeader(headers, s.paramName, headerSafe(s.env.apiKey, key));
            credentialHeaders.add(s.paramName.toLowerCase());
          } else if (s.in === 'query') {
            url = withQueryParam(url, s.paramName, key);
          } else {
            const value = cookieValue(key);
            secrets.push(value);
            const pair = `${encodeRfc3986(s.paramName)}=${value}`;
            const existing = Object.entries(headers).find(([h]) => h.toLowerCase() === 'cookie')?.[1];
            setHeader(headers, 'Cookie', existing ? `${existing}; ${pair}` : pair);
            credentialHeaders.add('cookie');
          }
          break;
        }
        case 'bearer': {
          if (s.exchange !== undefined && ctx.exchange !== undefined) {
            bearer(`the token exchanged for scheme ${JSON.stringify(s.name)}`, await ctx.exchange(s.exchange, s.name));
            break;
          }
          const given = fromClient(s);
          if (given === undefined) bearer(s.env.token, secret(s.env.token));
          else {
            const token = given.value.replace(/^Bearer(?:\s+|$)/i, '');
            if (token === '')
              throw new AuthError(
                `missing credentials: the ${given.header} header of the MCP request holds no token (security scheme ${JSON.stringify(s.name)})`,
              );
            bearer(`the ${given.header} header`, token);
          }
          break;
        }
        case 'basic': {
          const given = fromClient(s);
          const password = (): string => {
            const v = readVariable(this.env, s, s.env.password);
            if (v === undefined) throw new AuthError(`missing credentials: set ${s.env.password} in the server's environment`);
            return v;
          };
          const [user, pass] = given !== undefined ? basicFromHeader(s.name, given.header, given.value) : [secret(s.env.username), password()];
          if (given === undefined && user.includes(':'))
            throw new AuthError(`the value of ${s.env.username} must not contain ":" (HTTP basic authentication cannot carry it)`);
          const encoded = Buffer.from(`${user}:${pass}`, 'utf8').toString('base64');
          setHeader(headers, 'Authorization', `Basic ${encoded}`);
          credentialHeaders.add('authorization');
          // an API may echo the user name back ("user … may not …"): it is as private as the password
          secrets.push(user, encodeRfc3986(user), ...(pass !== '' ? [pass] : []), encoded);
          break;
        }
        case 'oauth2ClientCredentials': {
          const clientSecret = secret(s.env.clientSecret);
          secrets.push(clientSecret);
          const req = {
            tokenUrl: s.tokenUrl,
            scopes: s.scopes ?? [],
            clientId: secret(s.env.clientId),
            clientSecret,
            timeoutMs: ctx.timeoutMs,
            fetch: ctx.fetch,
          };
          let token: string;
          try {
            token = await this.tokens.token(s.name, ctx.baseUrl !== undefined ? { ...req, baseUrl: ctx.baseUrl } : req);
          } catch (err) {
            if (err instanceof AuthError) throw new AuthError(`cannot get an OAuth token for scheme ${JSON.stringify(s.name)}: ${err.message}`);
            throw err;
          }
          bearer(`the OAuth token of scheme ${JSON.stringify(s.name)}`, token);
          tokens.set(s.name, token);
          break;
        }
      }
    }
    const out: BuiltRequest = { url, method: request.method, headers };
    if (request.body !== undefined) out.body = request.body;
    return { request: out, secrets, headers: [...credentialHeaders], tokens };
  }

  /**
   * After the API answered 401 to `applied`: drops the OAuth tokens it carried so the next
   * `apply` fetches new ones. True when there were any, i.e. when one retry may succeed.
   */
  invalidate(applied: Applied): boolean {
    for (const [scheme, token] of applied.tokens) this.tokens.invalidate(scheme, token);
    return applied.tokens.size > 0;
  }
}

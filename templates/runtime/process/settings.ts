/**
 * Run-time settings: the manifest's values (`ServerConfig`) overridden by
 * `<envPrefix>_BASE_URL`, `<envPrefix>_TIMEOUT_MS`, `<envPrefix>_MAX_RESPONSE_BYTES` and (when the
 * manifest enables local uploads) `<envPrefix>_UPLOAD_ROOT`.
 *
 * The base URL is an absolute http(s) URL, or a local (unix domain) socket as container engines
 * serve their APIs: `unix:<socket path>` optionally followed by `:<base path>`, e.g.
 * `unix:/var/run/docker.sock:/v1.43`. Docker's and Podman's own spelling `unix:///run/x.sock`
 * works too. The socket path ends at the first `:` (write a `:` inside it as `%3A`), so the
 * form is never ambiguous.
 */
import path from 'node:path';
import { isLoopbackHostname } from '../core/loopback.js';
import type { ResultPolicy, ServerConfig } from '../core/types.js';
import type { SettingKey } from './variables.js';
import { DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_IN_FLIGHT_BYTES, settingNames } from './variables.js';

/** Effective settings a server calls its API with. */
export type Settings = {
  /**
   * Base URL without trailing `/`; `undefined` when neither the manifest nor the environment sets
   * one. With a socket it is {@link SOCKET_ORIGIN} plus the base path.
   */
  baseUrl?: string;
  /** Absolute path of the unix socket requests go through (base URL `unix:…`); `undefined` ⇒ TCP. */
  socketPath?: string;
  /** Per-request timeout in milliseconds (covers connecting and reading the body). */
  timeoutMs: number;
  /** Largest response body, in bytes, passed back to the client. */
  maxResponseBytes: number;
  /**
   * Most bytes of response bodies (and results not yet sent) all calls may hold at once
   * (default {@link DEFAULT_MAX_IN_FLIGHT_BYTES}); at least `maxResponseBytes`.
   */
  maxInFlightBytes?: number;
  /** How results are made to fit (the manifest's `results`); absent ⇒ results.ts `DEFAULT_RESULT_POLICY`. */
  results?: ResultPolicy;
  /** Largest arguments of one tool call, in bytes of JSON (default {@link DEFAULT_MAX_ARGUMENT_BYTES}). */
  maxArgumentBytes?: number;
  /** Prefix of the environment variables (e.g. `PETSTORE`), so messages can name them; optional. */
  envPrefix?: string;
  /** Absolute directory local file uploads may be read from; `undefined` ⇒ local uploads disabled. */
  uploadRoot?: string;
};

/** A setting (environment variable or manifest value) that has an unusable value. */
export class SettingsError extends Error {
  /** Name of the offending variable or setting. */
  readonly variable: string;
  /** Creates the error; `variable` is the name of the offending variable. */
  constructor(variable: string, message: string) {
    super(message);
    this.name = 'SettingsError';
    this.variable = variable;
  }
}

/** Names of the environment variables read for `envPrefix` (declared in variables.ts). */
export function settingsVariables(envPrefix: string): Record<SettingKey, string> {
  return settingNames(envPrefix);
}

/**
 * Checks that `value` is an absolute http(s) URL without query, fragment or credentials, and
 * returns it without trailing slashes. Throws `SettingsError` naming `variable` otherwise.
 */
export function parseBaseUrl(variable: string, value: string): string {
  const expected = `${variable} must be an absolute http:// or https:// URL such as https://api.example.com/v1 (or unix:<socket path>[:<base path>] for a local socket)`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SettingsError(variable, `${expected} (got ${JSON.stringify(value)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SettingsError(variable, `${expected} (got scheme ${JSON.stringify(url.protocol.slice(0, -1))})`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new SettingsError(variable, `${expected}, without user name or password in it`);
  }
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#')) {
    throw new SettingsError(variable, `${expected}, without a query (?) or fragment (#)`);
  }
  return url.href.replace(/\/+$/, '');
}

/** Origin of requests sent over a unix socket: the `Host` they carry (servers behind a socket rarely look at it). */
export const SOCKET_ORIGIN = 'http://localhost';

/** Where the API is: a base URL, and the unix socket to reach it through, if any. */
export type ApiBase = { baseUrl: string; socketPath?: string };

/**
 * Parses a base URL setting: an http(s) URL (see {@link parseBaseUrl}) or
 * `unix:<absolute socket path>[:<base path>]` (`unix:///path` accepted too). Throws
 * `SettingsError` naming `variable`, with the expected forms, otherwise.
 */
export function parseApiBase(variable: string, value: string): ApiBase {
  if (!/^unix:/i.test(value)) return { baseUrl: parseBaseUrl(variable, value) };
  const expected = `${variable} must be unix:<absolute socket path>, optionally followed by :<base path>, such as unix:/var/run/docker.sock or unix:/var/run/docker.sock:/v1.43`;
  let rest = value.slice('unix:'.length);
  // Docker's and Podman's spelling (DOCKER_HOST=unix:///var/run/docker.sock): an empty authority
  if (rest.startsWith('//')) rest = rest.slice(2);
  const colon = rest.indexOf(':');
  const rawSocket = colon < 0 ? rest : rest.slice(0, colon);
  const basePath = colon < 0 ? '' : rest.slice(colon + 1);
  if (!rawSocket.startsWith('/') || rawSocket.length < 2)
    throw new SettingsError(variable, `${expected}: the socket path must be absolute (got ${JSON.stringify(value)})`);
  if (/[?#\s]/.test(rest)) throw new SettingsError(variable, `${expected}, without spaces, a query (?) or fragment (#)`);
  let socketPath: string;
  try {
    socketPath = decodeURIComponent(rawSocket);
  } catch {
    throw new SettingsError(variable, `${expected}: the socket path has an invalid %-escape (got ${JSON.stringify(value)})`);
  }
  if (socketPath.includes('\0')) throw new SettingsError(variable, `${expected}: the socket path may not contain a NUL character`);
  if (basePath !== '' && !basePath.startsWith('/')) {
    throw new SettingsError(
      variable,
      `${expected}: the base path after the socket path must start with / (a : inside the socket path is written %3A) (got ${JSON.stringify(value)})`,
    );
  }
  let url: URL;
  try {
    url = new URL(basePath, SOCKET_ORIGIN);
  } catch {
    throw new SettingsError(variable, `${expected}: the base path is not a valid URL path (got ${JSON.stringify(value)})`);
  }
  return { baseUrl: url.href.replace(/\/+$/, ''), socketPath };
}

/** How the settings reach the API, for messages: `base URL …`, or the socket and its base path. */
export function describeBase(settings: Pick<Settings, 'baseUrl' | 'socketPath'>): string {
  if (settings.socketPath === undefined) return settings.baseUrl !== undefined ? `base URL ${settings.baseUrl}` : 'no base URL';
  const basePath = settings.baseUrl !== undefined ? new URL(settings.baseUrl).pathname.replace(/\/+$/, '') : '';
  return `unix socket ${settings.socketPath}${basePath ? ` (base path ${basePath})` : ''}`;
}

/** Parses a positive whole number; throws `SettingsError` naming `variable` otherwise. */
export function parsePositiveInteger(variable: string, value: string, unit: string): number {
  const text = value.trim();
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new SettingsError(variable, `${variable} must be a positive whole number of ${unit} (got ${JSON.stringify(value)})`);
  }
  return n;
}

/** Value of an environment variable, trimmed; `undefined` when unset or blank. */
export function read(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/** The positive whole number `variable` holds, `fallback` when unset or blank; throws `SettingsError` naming it otherwise. */
export function readPositiveInteger(env: NodeJS.ProcessEnv, variable: string, fallback: number, unit: string): number {
  const v = read(env, variable);
  return v === undefined ? fallback : parsePositiveInteger(variable, v, unit);
}

/**
 * Resolves the effective settings: environment variables win over the manifest values.
 * Blank variables count as unset. Throws `SettingsError` (naming the variable and the expected
 * form) for a malformed value.
 */
export function resolveSettings(config: ServerConfig, env: NodeJS.ProcessEnv): Settings {
  const vars = settingsVariables(config.envPrefix);
  const envBase = read(env, vars.baseUrl);
  const envTimeout = read(env, vars.timeoutMs);
  const envMax = read(env, vars.maxResponseBytes);
  const settings: Settings = {
    timeoutMs:
      envTimeout !== undefined
        ? parsePositiveInteger(vars.timeoutMs, envTimeout, 'milliseconds')
        : parsePositiveInteger('timeoutMs (manifest)', String(config.timeoutMs), 'milliseconds'),
    maxResponseBytes:
      envMax !== undefined
        ? parsePositiveInteger(vars.maxResponseBytes, envMax, 'bytes')
        : parsePositiveInteger('maxResponseBytes (manifest)', String(config.maxResponseBytes), 'bytes'),
    envPrefix: config.envPrefix,
  };
  const envInFlight = read(env, vars.maxInFlightBytes);
  settings.maxInFlightBytes =
    envInFlight !== undefined
      ? parsePositiveInteger(vars.maxInFlightBytes, envInFlight, 'bytes')
      : parsePositiveInteger('maxInFlightBytes (manifest)', String(config.maxInFlightBytes ?? DEFAULT_MAX_IN_FLIGHT_BYTES), 'bytes');
  if (settings.maxInFlightBytes < settings.maxResponseBytes) {
    throw new SettingsError(
      vars.maxInFlightBytes,
      `${envInFlight !== undefined ? vars.maxInFlightBytes : 'maxInFlightBytes (manifest)'} must be at least the response limit of ${settings.maxResponseBytes} bytes, or no response could be read (got ${settings.maxInFlightBytes}); set ${vars.maxInFlightBytes} higher`,
    );
  }
  const envArguments = read(env, vars.maxArgumentBytes);
  settings.maxArgumentBytes = envArguments !== undefined ? parsePositiveInteger(vars.maxArgumentBytes, envArguments, 'bytes') : DEFAULT_MAX_ARGUMENT_BYTES;
  if (config.results) settings.results = config.results;
  if (config.uploads) settings.uploadRoot = path.resolve(read(env, vars.uploadRoot) ?? config.uploads.root);
  if (envBase !== undefined) Object.assign(settings, parseApiBase(vars.baseUrl, envBase));
  else if (config.baseUrl !== undefined && config.baseUrl.trim() !== '') {
    try {
      Object.assign(settings, parseApiBase('baseUrl', config.baseUrl.trim()));
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new SettingsError(vars.baseUrl, `The built-in ${why}; set ${vars.baseUrl} to the API's absolute URL instead`);
    }
  }
  return settings;
}

/** Client identities: what a token maps to, and what `<envPrefix>_CLIENT` names. */
const IDENTITY = /^[A-Za-z0-9._@-]{1,128}$/;

/** Checks a client identity; throws `SettingsError` naming `where` otherwise. */
export function parseIdentity(variable: string, where: string, value: string): string {
  if (value === '') throw new SettingsError(variable, `${where}: the client identity is empty; write name=token with a name such as alice or ci-bot`);
  if (!IDENTITY.test(value))
    throw new SettingsError(variable, `${where}: the client identity ${JSON.stringify(value)} may only hold letters, digits and . _ @ - (at most 128)`);
  return value;
}

/** Shortest MCP HTTP token accepted: shorter ones can be guessed. */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Adds the `name=token` entries of one source to `tokens` (token ⇒ identity). `entries` are
 * `[where, text]` pairs, `where` saying which entry it is for messages (`entry 2 of X`, `line 3
 * of f`). Messages never contain a token: a malformed entry may be nothing but one.
 */
export function addTokens(variable: string, entries: ReadonlyArray<readonly [string, string]>, tokens: Map<string, string>): void {
  for (const [where, text] of entries) {
    const eq = text.indexOf('=');
    if (eq < 0) throw new SettingsError(variable, `${where} is not name=token (the value is not shown: it may be a token)`);
    const name = parseIdentity(variable, where, text.slice(0, eq).trim());
    const token = text.slice(eq + 1).trim();
    if (token === '') throw new SettingsError(variable, `${where}: the token of ${name} is empty`);
    if (!/^[\x21-\x2b\x2d-\x7e]+$/.test(token))
      throw new SettingsError(variable, `${where}: the token of ${name} may only hold printable ASCII characters without spaces or commas`);
    if (token.length < MIN_TOKEN_LENGTH)
      throw new SettingsError(
        variable,
        `${where}: the token of ${name} is shorter than ${MIN_TOKEN_LENGTH} characters; use a long random value such as the output of \`openssl rand -hex 32\``,
      );
    const other = tokens.get(token);
    if (other !== undefined)
      throw new SettingsError(variable, `${where}: the token of ${name} is the same as the token of ${other}; every token must be different`);
    tokens.set(token, name);
  }
}

/** `name=token[,name=token…]` (`<envPrefix>_HTTP_TOKENS`) as `[where, entry]` pairs, blank entries skipped. */
export function tokenListEntries(variable: string, value: string): Array<[string, string]> {
  return value.split(',').flatMap((e, i) => (e.trim() === '' ? [] : [[`entry ${i + 1} of ${variable}`, e.trim()] as [string, string]]));
}

/** The lines of a token file (`<envPrefix>_HTTP_TOKENS_FILE`) as `[where, entry]` pairs; blank lines and `#` comments skipped. */
export function tokenFileEntries(file: string, text: string): Array<[string, string]> {
  return text.split(/\r?\n/).flatMap((line, i) => {
    const t = line.trim();
    return t === '' || t.startsWith('#') ? [] : [[`line ${i + 1} of ${file}`, t] as [string, string]];
  });
}

/** Comma-separated Host header values (`<envPrefix>_ALLOWED_HOSTS`): lower-cased `host` or `host:port`, IPv6 in brackets. */
export function parseAllowedHosts(variable: string, value: string): string[] {
  return value
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '')
    .map((h) => {
      if (!/^(?:[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/.test(h)) {
        throw new SettingsError(
          variable,
          `${variable} lists host names as sent in the Host header, such as mcp.example.com or mcp.example.com:3000 (got ${JSON.stringify(h)})`,
        );
      }
      return h;
    });
}

/** Comma-separated origins (`<envPrefix>_ALLOWED_ORIGINS`): `http(s)://host[:port]`, normalized as browsers send them. */
export function parseAllowedOrigins(variable: string, value: string): string[] {
  return value
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '')
    .map((o) => {
      const expected = `${variable} lists origins such as https://app.example.com or http://localhost:5173, without a path (got ${JSON.stringify(o)})`;
      let url: URL;
      try {
        url = new URL(o);
      } catch {
        throw new SettingsError(variable, expected);
      }
      const bare = url.pathname === '/' && !/[?#]/.test(o) && url.username === '' && url.password === '' && !/^[a-z]+:\/\/[^/]*\/./i.test(o);
      if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !bare) throw new SettingsError(variable, expected);
      return url.origin;
    });
}

/** The OAuth resource server's settings (`<envPrefix>_OAUTH_*`, `<envPrefix>_PUBLIC_URL`); oauth-resource.ts takes them. */
export type OAuthSettings = {
  /** The issuer exactly as set. */
  readonly issuer: string;
  readonly audience?: string;
  readonly jwksUrl?: string;
  /** Scopes advertised (`scopes_supported`, and `scope` of 401 answers). */
  readonly scopes?: readonly string[];
  /** The MCP endpoint's public URL, as set (no trailing slash added or removed: it is compared byte for byte). */
  readonly publicUrl?: string;
  /** Token introspection for opaque tokens: this server's client credentials, and the endpoint unless discovered. */
  readonly introspection?: { readonly url?: string; readonly clientId: string; readonly clientSecret: string };
};

/** Whether `url`'s host is loopback (localhost, 127.0.0.0/8, [::1]): plain http is accepted there only. */
function loopbackUrl(url: URL): boolean {
  return isLoopbackHostname(url.hostname);
}

/** Checks an absolute URL setting: https (http on loopback), no credentials, query or fragment. Returns it as set. */
function parseOAuthUrl(variable: string, value: string, example: string): string {
  const expected = `${variable} must be an absolute https:// URL such as ${example} (http:// only on localhost or 127.0.0.1), without user name, query (?) or fragment (#)`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SettingsError(variable, `${expected} (got ${JSON.stringify(value)})`);
  }
  const scheme = url.protocol === 'https:' || (url.protocol === 'http:' && loopbackUrl(url));
  if (!scheme || url.username !== '' || url.password !== '' || value.includes('?') || value.includes('#'))
    throw new SettingsError(variable, `${expected} (got ${JSON.stringify(value)})`);
  return value;
}

/**
 * The OAuth settings, or `undefined` when `<envPrefix>_OAUTH_ISSUER` is unset (no OAuth). The
 * audience, key set URL and public URL are checked even then: a value set by mistake says so.
 * Throws `SettingsError` naming the variable.
 */
export function resolveOAuthSettings(envPrefix: string, env: NodeJS.ProcessEnv, defaults: ServerConfig['oauth'] = {}): OAuthSettings | undefined {
  const vars = settingsVariables(envPrefix);
  // the manifest's http.auth, unless the settings say otherwise
  const envIssuer = read(env, vars.oauthIssuer);
  const issuer = envIssuer ?? defaults.issuer;
  const issuerFrom = envIssuer !== undefined ? vars.oauthIssuer : 'http.auth.issuer (manifest)';
  const audience = read(env, vars.oauthAudience) ?? defaults.audience;
  const jwks = read(env, vars.oauthJwksUrl);
  const publicUrl = read(env, vars.publicUrl);
  const scopes =
    read(env, vars.oauthScopes)
      ?.split(/\s+/)
      .filter((s) => s !== '') ?? (defaults.scopes !== undefined ? [...defaults.scopes] : undefined);
  for (const scope of scopes ?? []) {
    // RFC 6749 3.3 scope-token: printable ASCII but space, " and \
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))
      throw new SettingsError(
        vars.oauthScopes,
        `${vars.oauthScopes} lists scopes separated by spaces, each of printable ASCII characters without " or \\ (got ${JSON.stringify(scope)})`,
      );
  }
  const introspectionUrl = read(env, vars.oauthIntrospectionUrl);
  const clientId = read(env, vars.oauthClientId);
  const clientSecret = read(env, vars.oauthClientSecret);
  if ((clientId === undefined) !== (clientSecret === undefined)) {
    const [set, unset] = clientId !== undefined ? [vars.oauthClientId, vars.oauthClientSecret] : [vars.oauthClientSecret, vars.oauthClientId];
    throw new SettingsError(
      unset,
      `${set} is set but ${unset} is not: token introspection needs both (this server's client credentials at the authorization server)`,
    );
  }
  if (introspectionUrl !== undefined && clientId === undefined)
    throw new SettingsError(
      vars.oauthClientId,
      `${vars.oauthIntrospectionUrl} is set but ${vars.oauthClientId} and ${vars.oauthClientSecret} are not: introspection needs this server's client credentials`,
    );
  const settings = {
    ...(clientId !== undefined && clientSecret !== undefined
      ? {
          introspection: {
            ...(introspectionUrl !== undefined
              ? { url: parseOAuthUrl(vars.oauthIntrospectionUrl, introspectionUrl, 'https://login.example.com/oauth2/introspect') }
              : {}),
            clientId,
            clientSecret,
          },
        }
      : {}),
    ...(scopes !== undefined && scopes.length > 0 ? { scopes } : {}),
    ...(audience !== undefined ? { audience } : {}),
    ...(jwks !== undefined ? { jwksUrl: parseOAuthUrl(vars.oauthJwksUrl, jwks, 'https://login.example.com/.well-known/jwks.json') } : {}),
    ...(publicUrl !== undefined ? { publicUrl: parseOAuthUrl(vars.publicUrl, publicUrl, 'https://mcp.example.com/mcp') } : {}),
  };
  if (issuer === undefined) {
    // a setting without the issuer is a mistake (the manifest's defaults only apply with one)
    const orphan = [vars.oauthAudience, vars.oauthJwksUrl, vars.oauthScopes, vars.oauthClientId].find((v) => read(env, v) !== undefined);
    if (orphan !== undefined)
      throw new SettingsError(
        orphan,
        `${orphan} is set but ${vars.oauthIssuer} is not: set the issuer URL of the authorization server too, or unset ${orphan}`,
      );
    return undefined;
  }
  return { issuer: parseOAuthUrl(issuerFrom, issuer, 'https://login.example.com/realms/mcp'), ...settings };
}

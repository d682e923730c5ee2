/**
 * Authentication in the model stage: the spec's security schemes (`components.securitySchemes`,
 * or `securityDefinitions` in Swagger 2.0) and the manifest's `auth` map → the schemes the
 * included tools use, each with the NAMES of the environment variables its secrets come from,
 * and every tool's security requirement alternatives (the operation's `security`, else the
 * document's). No secret value ever passes through here: the manifest only holds variable names.
 */

import { SETTINGS } from '../../../templates/runtime/process/variables.js';
import { type Diagnostics, escapePointerToken, type Location, pointer } from '../../core/diagnostics.js';
import { isObject } from '../../core/json.js';
import { suggest } from '../../core/suggest.js';
import type { AuthScheme } from '../../manifest/types.gen.js';
import type { LoadedSpec } from '../../openapi/load.js';
import type { RawOperation } from '../../openapi/operations.js';
import type { ApiKeyLocation, IrSecurityScheme } from '../types.js';

/** Inputs of {@link buildSecurity}. */
export type SecurityInput = {
  spec: LoadedSpec;
  /** The operations that become tools. */
  ops: readonly RawOperation[];
  /** The manifest's `auth` map, as written. */
  auth?: Record<string, AuthScheme>;
  envPrefix: string;
  /** Resolves internal `$ref`s of the bundled document. */
  deref: (node: unknown) => unknown;
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
};

/** What {@link buildSecurity} decides. */
export type SecurityResult = {
  /** The schemes some tool uses, sorted by name. */
  schemes: IrSecurityScheme[];
  /** Requirement alternatives per operation (OR of AND); `[]` means no authentication. */
  requirements: Map<RawOperation, string[][]>;
};

/** A scheme as the spec defines it. */
type SpecScheme = { name: string; node: Record<string, unknown>; pointer: string };

/** How a spec scheme is applied. */
type Classified =
  | { kind: 'apiKey'; in: ApiKeyLocation; paramName: string }
  | { kind: 'bearer'; fallbackFrom?: string }
  | { kind: 'basic' }
  | { kind: 'oauth2ClientCredentials'; tokenUrl: string };

/** Manifest fields that apply to each kind of scheme. */
const FIELDS: Record<Classified['kind'], readonly (keyof AuthScheme)[]> = {
  apiKey: ['env', 'fromClient'],
  bearer: ['env', 'fromClient', 'exchange'],
  basic: ['username', 'password', 'fromClient'],
  oauth2ClientCredentials: ['clientId', 'clientSecret', 'tokenUrl', 'scopes'],
};

/**
 * Variables the generated server reads for its own settings: every setting of its registry
 * (runtime/process/variables.ts), derived from it so that a new setting is reserved at once. A credential
 * or hidden argument must not use them.
 */
export const SETTINGS_SUFFIXES: readonly string[] = Object.values(SETTINGS).map((s) => s.suffix);

/** The variable names reserved for the server's own settings under `envPrefix`. */
export function reservedVariables(envPrefix: string): ReadonlySet<string> {
  return new Set(SETTINGS_SUFFIXES.map((s) => `${envPrefix}_${s}`));
}

/** A header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Headers of the MCP request that belong to the transport, never to an API credential (lower case). */
const TRANSPORT_HEADERS = new Set([
  'host',
  'origin',
  'accept',
  'content-type',
  'content-length',
  'connection',
  'transfer-encoding',
  'cookie',
  'last-event-id',
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
]);

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The default variable-name stem of a scheme: `<ENV_PREFIX>_<SCHEME>`. */
export function schemeEnvStem(envPrefix: string, scheme: string): string {
  return `${envPrefix}_${scheme.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** Resolves the security schemes and requirements of the included operations. */
export function buildSecurity(input: SecurityInput): SecurityResult {
  const defined = specSchemes(input);
  const classified = new Map<string, Classified>();
  for (const [name, s] of defined) classified.set(name, classify(s));
  checkManifest(input, defined, classified);

  const requirements = new Map<RawOperation, string[][]>();
  const scopes = new Map<string, Set<string>>();
  const warned = new Set<string>();
  for (const op of input.ops) {
    const own = Array.isArray(op.node.security);
    const list = own ? op.node.security : input.spec.document.security;
    const base = own ? `${op.pointer}/security` : '/security';
    const alternatives: string[][] = [];
    const seen = new Set<string>();
    (Array.isArray(list) ? list : []).forEach((alt, i) => {
      if (!isObject(alt)) return;
      const names = Object.keys(alt);
      const undefinedName = names.find((n) => !defined.has(n));
      if (undefinedName !== undefined) {
        const at = `${base}/${i}/${escapePointerToken(undefinedName)}`;
        if (!warned.has(at)) {
          warned.add(at);
          const near = suggest(undefinedName, defined.keys());
          input.diagnostics.warn(
            'MCPGEN_SPEC_UNDEFINED_SECURITY_SCHEME',
            `security requirement names scheme "${undefinedName}", which the spec does not define; this alternative is ignored`,
            near
              ? `did you mean "${near}"?`
              : `define "${undefinedName}" under ${input.spec.version === '2.0' ? '`securityDefinitions`' : '`components.securitySchemes`'}`,
            input.spec.source.locate(at, { key: true }),
          );
        }
        return;
      }
      for (const n of names) {
        const wanted = alt[n];
        if (!Array.isArray(wanted)) continue;
        const set = scopes.get(n) ?? new Set<string>();
        for (const s of wanted) if (typeof s === 'string' && s !== '') set.add(s);
        scopes.set(n, set);
      }
      // the schemes of one alternative are unordered (all of them apply): sorted, for stable output
      const sorted = [...names].sort(byCodeUnit);
      const key = JSON.stringify(sorted);
      if (seen.has(key)) return;
      seen.add(key);
      alternatives.push(sorted);
    });
    // `[{}]` (only the empty alternative) is the same as no authentication
    requirements.set(op, alternatives.every((a) => a.length === 0) ? [] : alternatives);
  }

  const used = new Set([...requirements.values()].flat(2));
  const schemes: IrSecurityScheme[] = [];
  for (const name of [...used].sort(byCodeUnit)) {
    const s = defined.get(name)!;
    const c = classified.get(name)!;
    const m = input.auth && Object.hasOwn(input.auth, name) ? input.auth[name]! : {};
    const stem = schemeEnvStem(input.envPrefix, name);
    const origin = { file: input.spec.source.file, pointer: s.pointer };
    switch (c.kind) {
      case 'apiKey':
        schemes.push({ name, kind: 'apiKey', in: c.in, paramName: c.paramName, env: { apiKey: m.env ?? `${stem}_API_KEY` }, ...fromClient(m), origin });
        break;
      case 'basic':
        schemes.push({
          name,
          kind: 'basic',
          env: { username: m.username ?? `${stem}_USERNAME`, password: m.password ?? `${stem}_PASSWORD` },
          ...fromClient(m),
          origin,
        });
        break;
      case 'oauth2ClientCredentials':
        checkTokenUrl({
          url: m.tokenUrl ?? c.tokenUrl,
          scheme: name,
          at:
            m.tokenUrl !== undefined
              ? input.locateManifest(`/auth/${escapePointerToken(name)}/tokenUrl`)
              : input.spec.source.locate(`${s.pointer}${s.node.flows !== undefined ? '/flows/clientCredentials' : ''}/tokenUrl`),
          diagnostics: input.diagnostics,
        });
        schemes.push({
          name,
          kind: 'oauth2ClientCredentials',
          tokenUrl: m.tokenUrl ?? c.tokenUrl,
          scopes: m.scopes ? [...m.scopes] : [...(scopes.get(name) ?? [])].sort(byCodeUnit),
          env: { clientId: m.clientId ?? `${stem}_CLIENT_ID`, clientSecret: m.clientSecret ?? `${stem}_CLIENT_SECRET` },
          origin,
        });
        break;
      case 'bearer': {
        const scheme: IrSecurityScheme = {
          name,
          kind: 'bearer',
          env: { token: m.env ?? `${stem}_TOKEN` },
          ...fromClient(m),
          ...(m.exchange !== undefined
            ? { exchange: { audience: m.exchange.audience, ...(m.exchange.scopes !== undefined ? { scopes: m.exchange.scopes } : {}) } }
            : {}),
          origin,
        };
        if (c.fallbackFrom !== undefined) {
          scheme.fallbackFrom = c.fallbackFrom;
          // naming the variable in the manifest (`auth.<scheme>.env`) is the acknowledgement the help asks for
          if (m.env === undefined) {
            input.diagnostics.warn(
              'MCPGEN_AUTH_UNSUPPORTED_SCHEME',
              `security scheme "${name}" is ${c.fallbackFrom}, which the generated server cannot perform; it sends a static token from ${scheme.env.token} as \`Authorization: Bearer\` instead`,
              `obtain a token yourself and name the variable that holds it in mcpgen.yaml, which acknowledges this: \`auth: { ${yamlKey(name)}: { env: ${scheme.env.token} } }\``,
              input.spec.source.locate(s.pointer, { key: true }),
            );
          }
        }
        schemes.push(scheme);
        break;
      }
    }
  }
  return { schemes, requirements };
}

/** A scheme name as a YAML flow-mapping key: plain when it is a simple word, else double-quoted (JSON is YAML). */
function yamlKey(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name) ? name : JSON.stringify(name);
}

/** `{ fromClient }` when the manifest entry opts in (checked by {@link checkManifest}), else nothing. */
function fromClient(m: AuthScheme): { fromClient?: string } {
  return m.fromClient !== undefined ? { fromClient: m.fromClient } : {};
}

/** Whether `host` (a URL's hostname) is this machine: `localhost`, 127.0.0.0/8 or `[::1]`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Refuses an `http://` token URL: the client secret would cross the network in clear. Loopback
 * hosts are allowed (the request never leaves the machine: local token servers, tests); a
 * relative URL is checked by the server once it is resolved against the base URL.
 */
function checkTokenUrl(opts: { url: string; scheme: string; at: Location; diagnostics: Diagnostics }): void {
  let url: URL;
  try {
    url = new URL(opts.url);
  } catch {
    return;
  }
  if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return;
  opts.diagnostics.error(
    'MCPGEN_INSECURE_TOKEN_URL',
    `the OAuth token URL of security scheme "${opts.scheme}" is ${opts.url}: plain http would send the client secret in clear`,
    'use the https:// URL of the token endpoint (plain http is accepted for localhost and 127.0.0.1 only); set it with `auth.<scheme>.tokenUrl` in the manifest if the spec is wrong',
    opts.at,
  );
}

/** The schemes the spec defines, by name. */
function specSchemes(input: SecurityInput): Map<string, SpecScheme> {
  const doc = input.spec.document;
  const two = input.spec.version === '2.0';
  const container = two ? doc.securityDefinitions : isObject(doc.components) ? doc.components.securitySchemes : undefined;
  const base = two ? ['securityDefinitions'] : ['components', 'securitySchemes'];
  const out = new Map<string, SpecScheme>();
  if (!isObject(container)) return out;
  for (const [name, raw] of Object.entries(container)) {
    const node = input.deref(raw);
    if (isObject(node)) out.set(name, { name, node, pointer: pointer([...base, name]) });
  }
  return out;
}

/** Decides how a spec scheme is applied; anything the server cannot perform becomes a static bearer token. */
function classify(s: SpecScheme): Classified {
  const n = s.node;
  const type = typeof n.type === 'string' ? n.type : '';
  if (type === 'apiKey') {
    const where = n.in;
    if ((where === 'header' || where === 'query' || where === 'cookie') && typeof n.name === 'string' && n.name !== '')
      return { kind: 'apiKey', in: where, paramName: n.name };
    return { kind: 'bearer', fallbackFrom: `an apiKey scheme without a usable \`in\`/\`name\`` };
  }
  if (type === 'basic') return { kind: 'basic' };
  if (type === 'http') {
    const scheme = typeof n.scheme === 'string' ? n.scheme.toLowerCase() : '';
    if (scheme === 'basic') return { kind: 'basic' };
    if (scheme === 'bearer') return { kind: 'bearer' };
    return { kind: 'bearer', fallbackFrom: `http scheme "${String(n.scheme)}"` };
  }
  if (type === 'oauth2') {
    if (isObject(n.flows)) {
      const cc = n.flows.clientCredentials;
      if (isObject(cc) && typeof cc.tokenUrl === 'string' && cc.tokenUrl !== '') return { kind: 'oauth2ClientCredentials', tokenUrl: cc.tokenUrl };
      return { kind: 'bearer', fallbackFrom: `oauth2 (${Object.keys(n.flows).sort(byCodeUnit).join(', ') || 'no flows'})` };
    }
    if (n.flow === 'application' && typeof n.tokenUrl === 'string' && n.tokenUrl !== '') return { kind: 'oauth2ClientCredentials', tokenUrl: n.tokenUrl };
    return { kind: 'bearer', fallbackFrom: `oauth2 (${typeof n.flow === 'string' ? n.flow : 'no flow'})` };
  }
  return { kind: 'bearer', fallbackFrom: type || 'a scheme without a type' };
}

/** A short description of a scheme for messages. */
function describe(c: Classified): string {
  switch (c.kind) {
    case 'apiKey':
      return `an apiKey scheme (in ${c.in})`;
    case 'basic':
      return 'an http basic scheme';
    case 'oauth2ClientCredentials':
      return 'an oauth2 client-credentials scheme';
    case 'bearer':
      return c.fallbackFrom ? `${c.fallbackFrom}, used as a static bearer token` : 'an http bearer scheme';
  }
}

/** Checks the manifest's `auth` map against the spec's schemes. */
function checkManifest(input: SecurityInput, defined: Map<string, SpecScheme>, classified: Map<string, Classified>): void {
  const auth = input.auth ?? {};
  const reserved = reservedVariables(input.envPrefix);
  for (const name of Object.keys(auth).sort(byCodeUnit)) {
    const at = `/auth/${escapePointerToken(name)}`;
    const c = classified.get(name);
    if (!defined.has(name) || !c) {
      const near = suggest(name, defined.keys());
      const known = [...defined.keys()].sort(byCodeUnit);
      input.diagnostics.error(
        'MCPGEN_UNKNOWN_AUTH_SCHEME',
        `auth entry "${name}" names no security scheme of the spec`,
        near ? `did you mean "${near}"?` : known.length ? `the spec defines: ${known.join(', ')}` : 'the spec defines no security schemes; remove the entry',
        input.locateManifest(at, { key: true }),
      );
      continue;
    }
    const entry = auth[name]!;
    const allowed = FIELDS[c.kind];
    for (const field of Object.keys(entry) as (keyof AuthScheme)[]) {
      if (field === 'fromClient' && c.kind === 'bearer' && c.fallbackFrom?.startsWith('oauth2')) {
        input.diagnostics.error(
          'MCPGEN_AUTH_INVALID_FIELD',
          `\`fromClient\` does not apply to "${name}", which is ${describe(c)}: credentials from the MCP client are supported for apiKey, http bearer and http basic schemes, not for oauth2`,
          'remove `fromClient`; the server sends the token set in its environment',
          input.locateManifest(`${at}/fromClient`, { key: true }),
        );
        continue;
      }
      if (field === 'fromClient' && allowed.includes(field)) {
        checkFromClient({ value: entry.fromClient, scheme: name, at: input.locateManifest(`${at}/fromClient`), input });
        continue;
      }
      if (!allowed.includes(field)) {
        input.diagnostics.error(
          'MCPGEN_AUTH_INVALID_FIELD',
          `\`${field}\` does not apply to "${name}", which is ${describe(c)}`,
          `"${name}" takes ${allowed.map((f) => `\`${f}\``).join(', ')}`,
          input.locateManifest(`${at}/${escapePointerToken(field)}`, { key: true }),
        );
        continue;
      }
      const value = entry[field];
      if (typeof value === 'string' && reserved.has(value)) {
        input.diagnostics.error(
          'MCPGEN_AUTH_INVALID_FIELD',
          `${value} is one of the server's own settings variables and cannot hold a secret`,
          'choose another variable name',
          input.locateManifest(`${at}/${escapePointerToken(field)}`),
        );
      }
    }
  }
}

/**
 * Checks `auth.<scheme>.fromClient`: a header name, not one the MCP transport itself uses. Warns
 * about `Authorization`: it carries the MCP client tokens when the server is given some, and the
 * server then refuses to start (tokens are run-time configuration, unknown here).
 */
function checkFromClient(opts: { value: unknown; scheme: string; at: Location; input: SecurityInput }): void {
  const { value, scheme, at, input } = opts;
  if (typeof value !== 'string' || !HEADER_NAME.test(value)) {
    input.diagnostics.error(
      'MCPGEN_AUTH_INVALID_FIELD',
      `\`fromClient\` of "${scheme}" must be an HTTP header name (got ${JSON.stringify(value)})`,
      'name the header MCP clients send the credential in, such as X-Api-Key',
      at,
    );
    return;
  }
  if (TRANSPORT_HEADERS.has(value.toLowerCase())) {
    input.diagnostics.error(
      'MCPGEN_AUTH_INVALID_FIELD',
      `\`fromClient\` of "${scheme}" is ${value}, a header of the MCP transport itself, which cannot carry an API credential`,
      'name another header, such as X-Api-Key',
      at,
    );
    return;
  }
  if (value.toLowerCase() === 'authorization') {
    const tokens = `${input.envPrefix}_${SETTINGS.httpTokens.suffix}, ${input.envPrefix}_${SETTINGS.httpTokensFile.suffix} or ${input.envPrefix}_${SETTINGS.oauthIssuer.suffix}`;
    input.diagnostics.warn(
      'MCPGEN_AUTH_FROM_CLIENT_AUTHORIZATION',
      `\`fromClient\` of "${scheme}" is Authorization, the header that carries the MCP client tokens over HTTP: the server refuses to start with ${tokens} set`,
      'use another header (such as X-Upstream-Authorization) unless the server runs without client tokens, e.g. behind a proxy that authenticates clients',
      at,
    );
  }
}

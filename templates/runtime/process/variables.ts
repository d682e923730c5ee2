/**
 * Every environment variable the server reads, declared once: its name, what it is for, the
 * form of its value, its default and whether it is a secret. The modules that read variables
 * take their names from here (settings.ts, auth.ts, arguments.ts, reflection.ts), `--help` and
 * `--print-config` list them, and the project's README table, `.env.example`, client
 * configurations and MCP Bundle manifest were generated from these same declarations.
 *
 * Pure data and functions, with no imports: mcpgen runs this very module when it generates the
 * project, so the files it writes list exactly what the server reads.
 */

/** What a variable configures. */
export type VariableKind = 'setting' | 'credential' | 'argument';

/** The form of a variable's value. */
export type VariableType = 'url' | 'integer' | 'level' | 'path' | 'string';

/** One environment variable the server reads. */
export type Variable = {
  readonly name: string;
  readonly kind: VariableKind;
  readonly type: VariableType;
  /** What it is for, as one line of plain text. */
  readonly description: string;
  /** Whether the value is a secret: masked by `--print-config`, never logged or returned. */
  readonly secret: boolean;
  /** Whether some tool cannot work while it is unset. */
  readonly required: boolean;
  /** What the server uses while it is unset or blank, as text; absent when nothing. */
  readonly default?: string;
  /** The only transport the server reads it with (`--transport`); absent when it reads it with both. */
  readonly transport?: Transport;
};

/** How the server serves MCP: over stdin/stdout, or Streamable HTTP. */
export type Transport = 'stdio' | 'http';

/** The server's own settings, `<envPrefix>_<suffix>`. */
type SettingDeclaration = {
  readonly suffix: string;
  readonly type: VariableType;
  readonly description: string;
  /** Whether the value is a secret (masked, never logged); default false. */
  readonly secret?: boolean;
  /** The only transport that reads it; absent ⇒ both. */
  readonly transport?: Transport;
};

/** Every setting, in the order they are listed. */
export const SETTINGS = {
  baseUrl: {
    suffix: 'BASE_URL',
    type: 'url',
    description: 'Base URL of the API: an absolute http(s) URL, or unix:<socket path>[:<base path>] for a local socket',
  },
  timeoutMs: { suffix: 'TIMEOUT_MS', type: 'integer', description: 'Timeout of one API request, in milliseconds' },
  maxResponseBytes: {
    suffix: 'MAX_RESPONSE_BYTES',
    type: 'integer',
    description: 'Longer response bodies are truncated, with a note giving the original size',
  },
  maxInFlightBytes: {
    suffix: 'MAX_IN_FLIGHT_BYTES',
    type: 'integer',
    description: 'Most bytes of response bodies all calls together may hold at once; at least the response limit',
  },
  maxArgumentBytes: {
    suffix: 'MAX_ARGUMENT_BYTES',
    type: 'integer',
    description: 'Largest arguments of one tool call, in bytes of JSON; a larger call is refused before anything else looks at it',
  },
  logLevel: { suffix: 'LOG_LEVEL', type: 'level', description: 'Least severe log level written to stderr: debug, info, warn or error' },
  uploadRoot: { suffix: 'UPLOAD_ROOT', type: 'path', description: 'Directory local file uploads may be read from (relative to the working directory)' },
  reflectionDir: { suffix: 'REFLECTION_DIR', type: 'path', description: 'Where the reflection gate stores justifications (relative to the working directory)' },
  transport: { suffix: 'TRANSPORT', type: 'string', description: 'How to serve MCP: stdio, or http (Streamable HTTP); the --transport flag wins' },
  port: { suffix: 'PORT', type: 'integer', transport: 'http', description: 'TCP port to listen on (0: any free port); the --port flag wins' },
  host: {
    suffix: 'HOST',
    type: 'string',
    transport: 'http',
    description: 'Address to listen on; anything but loopback also needs the allowed hosts; the --host flag wins',
  },
  allowedHosts: {
    suffix: 'ALLOWED_HOSTS',
    type: 'string',
    transport: 'http',
    description: 'Comma-separated Host header values accepted besides loopback names: a host name (any port) or host:port, e.g. mcp.example.com',
  },
  allowAnonymous: {
    suffix: 'ALLOW_ANONYMOUS',
    type: 'string',
    transport: 'http',
    description:
      'true: serve clients without a token on an address beyond loopback (without it, such a server refuses to start unless it has client tokens or an OAuth issuer)',
  },
  publicUrl: {
    suffix: 'PUBLIC_URL',
    type: 'url',
    transport: 'http',
    description:
      'URL clients reach the MCP endpoint at (e.g. https://mcp.example.com/mcp, behind a proxy): the OAuth resource identifier and default token audience; unset: http://<Host header><path> of each request',
  },
  oauthIssuer: {
    suffix: 'OAUTH_ISSUER',
    type: 'url',
    transport: 'http',
    description:
      "Issuer URL of the OAuth authorization server whose access tokens (JWT) clients bring; its metadata is discovered (RFC 8414, then OpenID discovery) and published as this server's authorization server",
  },
  oauthAudience: {
    suffix: 'OAUTH_AUDIENCE',
    type: 'string',
    transport: 'http',
    description: 'Audience (aud) an access token must carry, compared exactly; unset: the resource URL (the public URL, else that of the request)',
  },
  oauthScopes: {
    suffix: 'OAUTH_SCOPES',
    type: 'string',
    transport: 'http',
    description:
      'Space-separated scopes clients ask the authorization server for at first (the scope of 401 answers; the resource metadata lists them and every scope some tool needs); unset: every scope some tool needs',
  },
  oauthIntrospectionUrl: {
    suffix: 'OAUTH_INTROSPECTION_URL',
    type: 'url',
    transport: 'http',
    description:
      "Token introspection endpoint (RFC 7662) for opaque access tokens; unset: the one the authorization server's metadata names. Used with the client ID and secret",
  },
  oauthClientId: {
    suffix: 'OAUTH_CLIENT_ID',
    type: 'string',
    transport: 'http',
    description:
      "This server's client ID at the authorization server, to introspect opaque access tokens (with the client secret); unset: only JWT access tokens are accepted",
  },
  oauthClientSecret: {
    suffix: 'OAUTH_CLIENT_SECRET',
    type: 'string',
    secret: true,
    transport: 'http',
    description: "This server's client secret at the authorization server, for token introspection",
  },
  oauthJwksUrl: {
    suffix: 'OAUTH_JWKS_URL',
    type: 'url',
    transport: 'http',
    description: "URL of the authorization server's signing keys (JWKS); unset: the key set URL of its discovered metadata",
  },
  allowedOrigins: {
    suffix: 'ALLOWED_ORIGINS',
    type: 'string',
    transport: 'http',
    description: 'Comma-separated Origin values (scheme://host[:port]) accepted from browsers besides loopback origins',
  },
  httpTokens: {
    suffix: 'HTTP_TOKENS',
    type: 'string',
    secret: true,
    transport: 'http',
    description: 'Bearer tokens MCP clients must send, as name=token[,name=token...]: each token maps to the client identity name',
  },
  httpTokensFile: {
    suffix: 'HTTP_TOKENS_FILE',
    type: 'path',
    transport: 'http',
    description: 'File of more tokens: one name=token per line, # starts a comment',
  },
  client: {
    suffix: 'CLIENT',
    type: 'string',
    transport: 'stdio',
    description: 'Client identity of the stdio client: letters, digits, dots, underscores, hyphens and @ (HTTP clients without a token are anonymous)',
  },
  stateKey: {
    suffix: 'STATE_KEY',
    type: 'string',
    secret: true,
    description:
      'Key (at least 32 characters) signing state that outlives a request (reflection hints, input rounds); unset: a new key at each start, so that state does not survive a restart',
  },
  auditFile: {
    suffix: 'AUDIT_FILE',
    type: 'path',
    description: "JSON Lines file the audit trail is appended to (relative to the working directory); overrides the manifest's policy.audit.file",
  },
  hintTtlMs: { suffix: 'HINT_TTL_MS', type: 'integer', description: 'How long a reflection-gate hint stays valid, in milliseconds' },
  sessionIdleMs: {
    suffix: 'SESSION_IDLE_MS',
    type: 'integer',
    transport: 'http',
    description: 'Idle time after which a legacy HTTP session (clients before MCP 2026-07-28) is closed, in milliseconds',
  },
  maxSessions: { suffix: 'MAX_SESSIONS', type: 'integer', transport: 'http', description: 'Most legacy HTTP sessions open at once' },
  maxSessionsPerClient: {
    suffix: 'MAX_SESSIONS_PER_CLIENT',
    type: 'integer',
    transport: 'http',
    description: 'Most legacy HTTP sessions one client token holds at once; a new one closes its least recently used idle session',
  },
  drainMs: {
    suffix: 'DRAIN_MS',
    type: 'integer',
    description: 'On SIGTERM or SIGINT, how long calls under way may finish before the server exits, in milliseconds',
  },
  redisUrl: {
    suffix: 'REDIS_URL',
    type: 'string',
    secret: true,
    description:
      'Redis shared by several instances of this server: redis://[user:password@]host[:port][/db], or rediss:// for TLS. Justifications, limits, MCP task state and change notifications are then shared; unset: they stay in this process',
  },
  redisPrefix: {
    suffix: 'REDIS_PREFIX',
    type: 'string',
    description: 'Prefix of the Redis keys and channels, so several servers can share one Redis (default: the server name)',
  },
  redisFailOpen: {
    suffix: 'REDIS_FAIL_OPEN',
    type: 'string',
    description: 'limits: calls pass their limits while Redis cannot be reached (logged); unset: they are refused. Justifications always fail closed',
  },
  redisLeaseMs: {
    suffix: 'REDIS_LEASE_MS',
    type: 'integer',
    description: 'With Redis: how long a concurrency slot outlives an instance that died holding it, in milliseconds (renewed while the call runs)',
  },
  codeTimeoutMs: {
    suffix: 'CODE_TIMEOUT_MS',
    type: 'integer',
    description: 'Code mode: wall time of one execute (its code and its API calls), in milliseconds',
  },
  codeMemoryBytes: {
    suffix: 'CODE_MEMORY_BYTES',
    type: 'integer',
    description: "Code mode: memory of one execute's sandbox (its own WebAssembly memory), in bytes",
  },
  codeMaxCalls: { suffix: 'CODE_MAX_CALLS', type: 'integer', description: 'Code mode: API calls one execute may make' },
  codeMaxOutputBytes: {
    suffix: 'CODE_MAX_OUTPUT_BYTES',
    type: 'integer',
    description: 'Code mode: largest value one execute may return, in bytes of JSON (before the results budget shapes it)',
  },
  codeMaxConsoleBytes: {
    suffix: 'CODE_MAX_CONSOLE_BYTES',
    type: 'integer',
    description: 'Code mode: console output one execute may write, in bytes; more stops the run',
  },
  codeAuditText: {
    suffix: 'CODE_AUDIT_TEXT',
    type: 'integer',
    description:
      "Code mode: keep at most this many characters of each execute's code in its audit record (never splitting a word; credentials scrubbed, and cut to the audit's bound on arguments); unset: only the code's SHA-256 and length",
  },
  codeMaxRuns: {
    suffix: 'CODE_MAX_RUNS',
    type: 'integer',
    description:
      'Code mode: most execute runs under way at once in this process (each holds up to its memory bound); one client identity may hold half of them (rounded up); an execute past either is refused at once',
  },
  redisTimeoutMs: {
    suffix: 'REDIS_TIMEOUT_MS',
    type: 'integer',
    description: 'With Redis: bound on connecting and on each command, in milliseconds; a call never waits on Redis longer',
  },
  maxTasks: {
    suffix: 'MAX_TASKS',
    type: 'integer',
    description: 'Tasks: most tasks kept at once; the oldest finished one makes room, and while all run a new task is refused',
  },
  taskTtlMs: {
    suffix: 'TASK_TTL_MS',
    type: 'integer',
    description: 'Tasks: how long a task is kept after its creation, in milliseconds (a 2025-11-25 client may ask for less)',
  },
} as const satisfies Record<string, SettingDeclaration>;

/** Key of a setting in {@link SETTINGS}. */
export type SettingKey = keyof typeof SETTINGS;

/** The variable names of every setting for `envPrefix`, by key. */
export function settingNames(envPrefix: string): Record<SettingKey, string> {
  const out = {} as Record<SettingKey, string>;
  for (const key of Object.keys(SETTINGS) as SettingKey[]) out[key] = `${envPrefix}_${SETTINGS[key].suffix}`;
  return out;
}

/** A security scheme as far as its variables go (the generated config's `SecurityScheme` fits). */
export type CredentialScheme =
  | { readonly kind: 'apiKey'; readonly name: string; readonly fromClient?: string; readonly env: { readonly apiKey: string } }
  | { readonly kind: 'bearer'; readonly name: string; readonly fromClient?: string; readonly env: { readonly token: string } }
  | { readonly kind: 'basic'; readonly name: string; readonly fromClient?: string; readonly env: { readonly username: string; readonly password: string } }
  | { readonly kind: 'oauth2ClientCredentials'; readonly name: string; readonly env: { readonly clientId: string; readonly clientSecret: string } };

/** The variables of a scheme, in a fixed order. */
export function schemeVariables(scheme: CredentialScheme): string[] {
  switch (scheme.kind) {
    case 'apiKey':
      return [scheme.env.apiKey];
    case 'bearer':
      return [scheme.env.token];
    case 'basic':
      return [scheme.env.username, scheme.env.password];
    case 'oauth2ClientCredentials':
      return [scheme.env.clientId, scheme.env.clientSecret];
  }
}

/** What each variable of a scheme holds, in the order of {@link schemeVariables}. */
function schemeVariableMeaning(scheme: CredentialScheme): string[] {
  switch (scheme.kind) {
    case 'apiKey':
      return ['API key'];
    case 'bearer':
      return ['Bearer token'];
    case 'basic':
      return ['User name', 'Password'];
    case 'oauth2ClientCredentials':
      return ['OAuth 2.0 client ID', 'OAuth 2.0 client secret'];
  }
}

/** An argument or body the server may fill from a variable (the generated tool table's entries fit). */
type Fillable = { readonly arg: string; readonly fixed?: { readonly env: string } | { readonly value: unknown } };
/** A body, with the hidden fields of an object body. */
type FillableBody = Fillable & {
  readonly fields?: ReadonlyArray<{ readonly name: string; readonly fixed: { readonly env: string } | { readonly value: unknown } }>;
};

/** A tool as far as variables go (the generated `OperationTool` fits). */
export type VariableTool = {
  readonly name: string;
  readonly http: { readonly params: readonly Fillable[]; readonly body?: FillableBody };
  readonly security?: readonly (readonly string[])[];
};

/** Variable ⇒ the arguments filled from it (`tool`, `arg`), in tool order; variables in order of first use. */
function argumentUses(tools: readonly VariableTool[]): Map<string, Array<{ tool: string; arg: string }>> {
  const out = new Map<string, Array<{ tool: string; arg: string }>>();
  for (const tool of tools) {
    const fillable = tool.http.body ? [...tool.http.params, tool.http.body] : tool.http.params;
    const fields = (tool.http.body?.fields ?? []).map((f) => ({ arg: `${tool.http.body!.arg}.${f.name}`, fixed: f.fixed }));
    for (const a of [...fillable, ...fields]) {
      if (a.fixed === undefined || !('env' in a.fixed)) continue;
      out.set(a.fixed.env, [...(out.get(a.fixed.env) ?? []), { tool: tool.name, arg: a.arg }]);
    }
  }
  return out;
}

/** Variable ⇒ the tools that fill a hidden argument from it, in tool order; variables in order of first use. */
export function argumentVariables(tools: readonly VariableTool[]): Map<string, string[]> {
  return new Map([...argumentUses(tools)].map(([name, uses]) => [name, [...new Set(uses.map((u) => u.tool))]]));
}

/** What {@link serverVariables} needs to know of a server. */
export type VariableSources = {
  /** The generated config (`ServerConfig` fits). */
  readonly config: {
    readonly envPrefix: string;
    readonly baseUrl?: string;
    readonly timeoutMs: number;
    readonly maxResponseBytes: number;
    readonly maxInFlightBytes?: number;
    readonly uploads?: { readonly root: string };
    readonly securitySchemes?: readonly CredentialScheme[];
    /** The manifest's `http.auth` (defaults of the OAuth settings). */
    readonly oauth?: { readonly issuer?: string; readonly audience?: string; readonly scopes?: readonly string[] };
    /** Code mode is on for the server or a preset (manifest `discovery: code`): its bounds are settings. */
    readonly codeMode?: boolean;
    /** Search or code mode is on for the server or a preset: `search_tools` reads {@link SEARCH_DEBUG_VARIABLE}. */
    readonly searchMode?: boolean;
    /** Some tool runs as an MCP task (tasks.ts): its bounds are settings. */
    readonly taskTools?: boolean;
  };
  readonly tools: readonly VariableTool[];
  /** The reflection gate's store directory, when the server has a gate. */
  readonly reflectionDir?: string;
  /** The policy's audit trail, when the server keeps one (`file`: the manifest's). */
  readonly audit?: { readonly file?: string };
};

/** Defaults of the serving settings (`<envPrefix>_TRANSPORT`, `_PORT`, …), used while a variable is unset or blank. */
export const SERVE_DEFAULTS = {
  transport: 'stdio',
  port: 3000,
  host: '127.0.0.1',
  client: 'local',
  hintTtlMs: 86_400_000,
  sessionIdleMs: 1_800_000,
  maxSessions: 100,
  maxSessionsPerClient: 10,
  drainMs: 10_000,
  redisLeaseMs: 30_000,
  redisTimeoutMs: 2_000,
} as const satisfies { transport: Transport } & Record<string, string | number>;

/** Bounds of the task table while `<envPrefix>_MAX_TASKS` and `_TASK_TTL_MS` are unset (tasks-tools.ts). */
export const TASK_DEFAULTS = {
  maxTasks: 1000,
  ttlMs: 900_000,
} as const;

/** Bounds of one code-mode `execute` while their `<envPrefix>_CODE_*` variables are unset (code-mode.ts). */
export const CODE_DEFAULTS = {
  timeoutMs: 30_000,
  memoryBytes: 67_108_864,
  maxCalls: 50,
  maxOutputBytes: 262_144,
  maxConsoleBytes: 16_384,
  maxRuns: 4,
} as const;

/**
 * The one variable with a fixed name rather than `<envPrefix>_…`: search mode's debug switch,
 * named the same in every generated server so that it can be set for any of them.
 */
export const SEARCH_DEBUG_VARIABLE = 'MCPGEN_SEARCH_DEBUG';

/** Least severe level logged when `<envPrefix>_LOG_LEVEL` is unset. */
export const DEFAULT_LOG_LEVEL = 'info';

/** Largest arguments of one tool call, in bytes of JSON, when `<envPrefix>_MAX_ARGUMENT_BYTES` is unset: 1 MiB. */
export const DEFAULT_MAX_ARGUMENT_BYTES = 1_048_576;

/** Bytes of response bodies all calls may hold at once when neither manifest nor `<envPrefix>_MAX_IN_FLIGHT_BYTES` says: 64 MiB. */
export const DEFAULT_MAX_IN_FLIGHT_BYTES = 67_108_864;

/**
 * Every variable the server reads, each once: its settings, then the credentials of each
 * security scheme (in config order), then the variables of hidden arguments (by name).
 */
export function serverVariables(sources: VariableSources): Variable[] {
  const { config, tools } = sources;
  const names = settingNames(config.envPrefix);
  const out = new Map<string, Variable>();
  const add = (declared: Variable) => {
    // scheme and argument names come from the API description: keep every description on one line
    const v = { ...declared, description: declared.description.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ') };
    const seen = out.get(v.name);
    if (!seen) return void out.set(v.name, v);
    const { transport: _t, ...merged } = { ...seen, required: seen.required || v.required, secret: seen.secret || v.secret };
    // read by both transports as soon as one use is not limited to one
    out.set(v.name, seen.transport !== undefined && seen.transport === v.transport ? { ...merged, transport: seen.transport } : merged);
  };
  const setting = (key: SettingKey, fallback: string | number | undefined, required = false) => {
    const d: SettingDeclaration = SETTINGS[key];
    add({
      name: names[key],
      kind: 'setting',
      type: d.type,
      description: d.description,
      secret: d.secret === true,
      required,
      ...(fallback !== undefined ? { default: String(fallback) } : {}),
      ...(d.transport !== undefined ? { transport: d.transport } : {}),
    });
  };
  const baseUrl = config.baseUrl?.trim() ? config.baseUrl.trim() : undefined;
  setting('baseUrl', baseUrl, baseUrl === undefined);
  setting('timeoutMs', String(config.timeoutMs));
  setting('maxResponseBytes', String(config.maxResponseBytes));
  setting('maxInFlightBytes', String(config.maxInFlightBytes ?? DEFAULT_MAX_IN_FLIGHT_BYTES));
  setting('maxArgumentBytes', String(DEFAULT_MAX_ARGUMENT_BYTES));
  setting('logLevel', DEFAULT_LOG_LEVEL);
  if (config.uploads) setting('uploadRoot', config.uploads.root);
  if (sources.reflectionDir !== undefined) setting('reflectionDir', sources.reflectionDir);
  setting('transport', SERVE_DEFAULTS.transport);
  setting('port', SERVE_DEFAULTS.port);
  setting('host', SERVE_DEFAULTS.host);
  setting('allowedHosts', undefined);
  setting('allowedOrigins', undefined);
  setting('allowAnonymous', 'false');
  setting('httpTokens', undefined);
  setting('httpTokensFile', undefined);
  setting('publicUrl', undefined);
  setting('oauthIssuer', config.oauth?.issuer);
  setting('oauthAudience', config.oauth?.audience);
  setting('oauthScopes', config.oauth?.scopes?.join(' '));
  setting('oauthJwksUrl', undefined);
  setting('oauthIntrospectionUrl', undefined);
  setting('oauthClientId', undefined);
  setting('oauthClientSecret', undefined);
  setting('client', SERVE_DEFAULTS.client);
  setting('stateKey', undefined);
  if (sources.reflectionDir !== undefined) setting('hintTtlMs', SERVE_DEFAULTS.hintTtlMs);
  if (sources.audit !== undefined) setting('auditFile', sources.audit.file);
  setting('sessionIdleMs', SERVE_DEFAULTS.sessionIdleMs);
  setting('maxSessions', SERVE_DEFAULTS.maxSessions);
  setting('maxSessionsPerClient', SERVE_DEFAULTS.maxSessionsPerClient);
  setting('drainMs', SERVE_DEFAULTS.drainMs);
  setting('redisUrl', undefined);
  setting('redisPrefix', undefined);
  setting('redisFailOpen', undefined);
  setting('redisLeaseMs', SERVE_DEFAULTS.redisLeaseMs);
  setting('redisTimeoutMs', SERVE_DEFAULTS.redisTimeoutMs);
  if (config.searchMode === true) {
    add({
      name: SEARCH_DEBUG_VARIABLE,
      kind: 'setting',
      type: 'string',
      description: 'Search mode: set to anything but 0 to write why each search_tools result scored what it did to stderr',
      secret: false,
      required: false,
    });
  }
  if (config.taskTools === true) {
    setting('maxTasks', TASK_DEFAULTS.maxTasks);
    setting('taskTtlMs', TASK_DEFAULTS.ttlMs);
  }
  if (config.codeMode === true) {
    setting('codeTimeoutMs', CODE_DEFAULTS.timeoutMs);
    setting('codeMemoryBytes', CODE_DEFAULTS.memoryBytes);
    setting('codeMaxCalls', CODE_DEFAULTS.maxCalls);
    setting('codeMaxOutputBytes', CODE_DEFAULTS.maxOutputBytes);
    setting('codeMaxConsoleBytes', CODE_DEFAULTS.maxConsoleBytes);
    setting('codeMaxRuns', CODE_DEFAULTS.maxRuns);
    setting('codeAuditText', undefined);
  }

  for (const scheme of config.securitySchemes ?? []) {
    // needed when some tool has no alternative without this scheme
    const required = tools.some((t) => (t.security ?? []).length > 0 && t.security!.every((alt) => alt.includes(scheme.name)));
    const meanings = schemeVariableMeaning(scheme);
    const fromClient = 'fromClient' in scheme ? scheme.fromClient : undefined;
    schemeVariables(scheme).forEach((name, i) => {
      const alternative = required ? '' : ' (optional: every tool that uses it accepts another credential, or none, instead)';
      // over HTTP the credential comes with each MCP request: the variable serves stdio only
      const over = fromClient !== undefined ? `; over HTTP each MCP client sends its own in the ${fromClient} header instead` : '';
      add({
        name,
        kind: 'credential',
        type: 'string',
        description: `${meanings[i]} of security scheme ${scheme.name}${alternative}${over}`,
        secret: true,
        required,
        ...(fromClient !== undefined ? { transport: 'stdio' as const } : {}),
      });
    });
  }

  const byName = [...argumentUses(tools)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, uses] of byName) {
    const filled = uses.map((u) => `${u.arg} of ${u.tool}`).join(', ');
    add({
      name,
      kind: 'argument',
      type: 'string',
      description: `Value of the hidden argument${uses.length > 1 ? 's' : ''} ${filled}`,
      secret: true,
      required: true,
    });
  }
  return [...out.values()];
}

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
};

/** The server's own settings, `<envPrefix>_<suffix>`. */
type SettingDeclaration = {
  readonly suffix: string;
  readonly type: VariableType;
  readonly description: string;
};

/** Every setting, in the order they are listed. */
export const SETTINGS = {
  baseUrl: { suffix: 'BASE_URL', type: 'url', description: 'Base URL of the API: an absolute http(s) URL, or unix:<socket path>[:<base path>] for a local socket' },
  timeoutMs: { suffix: 'TIMEOUT_MS', type: 'integer', description: 'Timeout of one API request, in milliseconds' },
  maxResponseBytes: { suffix: 'MAX_RESPONSE_BYTES', type: 'integer', description: 'Longer response bodies are truncated, with a note giving the original size' },
  maxInFlightBytes: { suffix: 'MAX_IN_FLIGHT_BYTES', type: 'integer', description: 'Most bytes of response bodies all calls together may hold at once; at least the response limit' },
  logLevel: { suffix: 'LOG_LEVEL', type: 'level', description: 'Least severe log level written to stderr: debug, info, warn or error' },
  uploadRoot: { suffix: 'UPLOAD_ROOT', type: 'path', description: 'Directory local file uploads may be read from (relative to the working directory)' },
  reflectionDir: { suffix: 'REFLECTION_DIR', type: 'path', description: 'Where the reflection gate stores justifications (relative to the working directory)' },
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
  | { readonly kind: 'apiKey'; readonly name: string; readonly env: { readonly apiKey: string } }
  | { readonly kind: 'bearer'; readonly name: string; readonly env: { readonly token: string } }
  | { readonly kind: 'basic'; readonly name: string; readonly env: { readonly username: string; readonly password: string } }
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

/** A tool as far as variables go (the generated `OperationTool` fits). */
export type VariableTool = {
  readonly name: string;
  readonly http: { readonly params: readonly Fillable[]; readonly body?: Fillable };
  readonly security?: readonly (readonly string[])[];
};

/** Variable ⇒ the arguments filled from it (`tool`, `arg`), in tool order; variables in order of first use. */
function argumentUses(tools: readonly VariableTool[]): Map<string, Array<{ tool: string; arg: string }>> {
  const out = new Map<string, Array<{ tool: string; arg: string }>>();
  for (const tool of tools) {
    const fillable = tool.http.body ? [...tool.http.params, tool.http.body] : tool.http.params;
    for (const a of fillable) {
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
  };
  readonly tools: readonly VariableTool[];
  /** The reflection gate's store directory, when the server has a gate. */
  readonly reflectionDir?: string;
};

/** Least severe level logged when `<envPrefix>_LOG_LEVEL` is unset. */
export const DEFAULT_LOG_LEVEL = 'info';

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
    out.set(v.name, seen ? { ...seen, required: seen.required || v.required, secret: seen.secret || v.secret } : v);
  };
  const setting = (key: SettingKey, fallback: string | undefined, required = false) => {
    const d = SETTINGS[key];
    add({ name: names[key], kind: 'setting', type: d.type, description: d.description, secret: false, required, ...(fallback !== undefined ? { default: fallback } : {}) });
  };
  const baseUrl = config.baseUrl?.trim() ? config.baseUrl.trim() : undefined;
  setting('baseUrl', baseUrl, baseUrl === undefined);
  setting('timeoutMs', String(config.timeoutMs));
  setting('maxResponseBytes', String(config.maxResponseBytes));
  setting('maxInFlightBytes', String(config.maxInFlightBytes ?? DEFAULT_MAX_IN_FLIGHT_BYTES));
  setting('logLevel', DEFAULT_LOG_LEVEL);
  if (config.uploads) setting('uploadRoot', config.uploads.root);
  if (sources.reflectionDir !== undefined) setting('reflectionDir', sources.reflectionDir);

  for (const scheme of config.securitySchemes ?? []) {
    // needed when some tool has no alternative without this scheme
    const required = tools.some((t) => (t.security ?? []).length > 0 && t.security!.every((alt) => alt.includes(scheme.name)));
    const meanings = schemeVariableMeaning(scheme);
    schemeVariables(scheme).forEach((name, i) => {
      const alternative = required ? '' : ' (only needed where no other scheme can be used)';
      add({ name, kind: 'credential', type: 'string', description: `${meanings[i]} of security scheme ${scheme.name}${alternative}`, secret: true, required });
    });
  }

  const byName = [...argumentUses(tools)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, uses] of byName) {
    const filled = uses.map((u) => `${u.arg} of ${u.tool}`).join(', ');
    add({ name, kind: 'argument', type: 'string', description: `Value of the hidden argument${uses.length > 1 ? 's' : ''} ${filled}`, secret: true, required: true });
  }
  return [...out.values()];
}

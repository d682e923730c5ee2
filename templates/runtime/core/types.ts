/**
 * Shapes shared by the generated tool table (`tools.gen.ts`) and the runtime.
 * This file is copied verbatim into every generated project.
 */
import type { ToolAnnotations } from '@modelcontextprotocol/server';

/** A JSON Schema object, published to clients as given. */
export type JsonSchema = { readonly [key: string]: unknown };

/** Where an operation parameter travels. */
export type ParamLocation = 'path' | 'query' | 'header' | 'cookie';

/** OpenAPI serialisation style of a parameter. */
export type ParamStyle = 'simple' | 'label' | 'matrix' | 'form' | 'spaceDelimited' | 'pipeDelimited' | 'deepObject';

/** One operation parameter: which tool argument carries it and how it goes on the wire. */
export type HttpParam = {
  /** Property name in the tool's arguments (for a hidden argument, the name the server fills it under). */
  readonly arg: string;
  /** Parameter name on the wire. */
  readonly name: string;
  /** Where the parameter goes. */
  readonly in: ParamLocation;
  /** Serialisation style (defaults: `simple` for path/header, `form` for query/cookie). */
  readonly style?: ParamStyle;
  /** Whether arrays/objects explode (defaults: true for `form`, false otherwise). */
  readonly explode?: boolean;
  /** Set when the argument is hidden from the model: what the server sends instead. */
  readonly fixed?: FixedArgument;
  /** Sent when the model leaves the argument out. */
  readonly default?: unknown;
};

/**
 * How the server fills an argument the model never sees: a constant, or the value of an
 * environment variable read at start-up (a secret, like a credential: only its NAME is here).
 */
export type FixedArgument = { readonly value: unknown } | { readonly env: string };

/** The request body of an operation. */
export type HttpBody = {
  /** Property name in the tool's arguments that carries the body. */
  readonly arg: string;
  /** Media type sent as `Content-Type`. */
  readonly contentType: string;
  /**
   * For `multipart/form-data`: body properties that are files (sent as file parts). Their
   * argument is base64 content, or `{ path }` of a local file when uploads are enabled.
   */
  readonly files?: readonly string[];
  /** The whole body is a file (`application/octet-stream` and other binary types). */
  readonly binary?: boolean;
  /** Set when the body is hidden from the model: what the server sends instead. */
  readonly fixed?: FixedArgument;
  /** Sent when the model leaves the body out. */
  readonly default?: unknown;
  /** Top-level fields of an object body hidden from the model: the server sets each; a body that has one is refused. */
  readonly fields?: ReadonlyArray<{ readonly name: string; readonly fixed: FixedArgument }>;
};

/** HTTP method, upper case. */
export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS' | 'HEAD' | 'PATCH' | 'TRACE';

/** How to turn a tool call into one HTTP request. */
export type HttpOperation = {
  readonly method: HttpMethod;
  /** Path template relative to the base URL, e.g. `/pets/{petId}`. */
  readonly path: string;
  readonly params: readonly HttpParam[];
  readonly body?: HttpBody;
};

/**
 * Security requirement alternatives of a tool (OpenAPI `security`): the tool may use any one
 * alternative (OR) and needs every scheme named in it (AND). An empty alternative means the
 * call may go without credentials.
 */
export type SecurityRequirements = readonly (readonly string[])[];

/** Where an apiKey scheme puts its key. */
export type ApiKeyLocation = 'header' | 'query' | 'cookie';

/**
 * A security scheme and the NAMES of the environment variables its secrets are read from at
 * run time. Generated files hold variable names only, never secret values.
 */
/** What an exchanged token is asked for (RFC 8693): the API's audience, and scopes. */
export type TokenExchangeSpec = { readonly audience: string; readonly scopes?: readonly string[] };

export type SecurityScheme =
  | {
      readonly kind: 'apiKey';
      /** Scheme name in the OpenAPI document. */
      readonly name: string;
      readonly in: ApiKeyLocation;
      /** Header, query parameter or cookie name the key is sent as. */
      readonly paramName: string;
      /** Over HTTP, the MCP request header the key is taken from instead of `env` (manifest `fromClient`). */
      readonly fromClient?: string;
      readonly env: { readonly apiKey: string };
    }
  | {
      readonly kind: 'bearer';
      readonly name: string;
      /** Over HTTP, the MCP request header the token is taken from instead of `env`; a leading `Bearer ` is dropped. */
      readonly fromClient?: string;
      /** OAuth token exchange (RFC 8693, manifest `auth.<scheme>.exchange`): over HTTP with an OAuth access token, the API gets a token exchanged for it with this audience, instead of `env`. */
      readonly exchange?: TokenExchangeSpec;
      readonly env: { readonly token: string };
    }
  | {
      readonly kind: 'basic';
      readonly name: string;
      /** Over HTTP, the MCP request header (`Basic <base64>` or `user:password`) the credentials are taken from instead of `env`. */
      readonly fromClient?: string;
      readonly env: { readonly username: string; readonly password: string };
    }
  | {
      readonly kind: 'oauth2ClientCredentials';
      readonly name: string;
      /** Token endpoint, absolute or relative to the API base URL. */
      readonly tokenUrl: string;
      /** Scopes requested with each token; none ⇒ no `scope` parameter. */
      readonly scopes?: readonly string[];
      readonly env: { readonly clientId: string; readonly clientSecret: string };
    };

/** A tool generated from an OpenAPI operation. `Args` is the tool's argument type. */
export type OperationTool<Args = unknown> = {
  readonly kind: 'operation';
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  /**
   * `wrapped`: `structuredContent` is `{status, data}` (results that are not always a JSON
   * object); absent: it is the JSON object the API returned.
   */
  readonly resultShape?: 'wrapped';
  /** `outputSchemas: strict`: a 2xx body that does not match `outputSchema` is an error. */
  readonly strictOutput?: true;
  readonly annotations?: ToolAnnotations;
  readonly http: HttpOperation;
  /** This tool's result settings where they differ from `ServerConfig.results` (manifest `overrides.<op>.results`). */
  readonly results?: Partial<ResultPolicy>;
  /** Bytes of compacted JSON per o200k token in this tool's results, calibrated at build time from the spec's examples; absent ⇒ {@link DEFAULT_BYTES_PER_TOKEN}. */
  readonly bytesPerToken?: number;
  /** Projection (manifest `results.projection`): the argument carrying a JMESPath expression applied to the response; never sent to the API. */
  readonly projection?: { readonly arg: string };
  /** Credentials the call needs; absent or empty ⇒ none. Names refer to `ServerConfig.securitySchemes`. */
  readonly security?: SecurityRequirements;
  /** OAuth scopes an MCP access token must carry to see and call the tool (its operation's `security` for the API description's oauth2/openIdConnect scheme); absent ⇒ none. */
  readonly scopes?: readonly string[];
  /**
   * A long-running operation (its spec answers `202` with `Location` / `Operation-Location` /
   * `Azure-AsyncOperation`, or says `x-ms-long-running-operation: true`): the call polls it until it
   * ends (tasks-poll.ts), and the tool runs as an MCP task when the client asks (tasks.ts).
   * `cancelPaths`: the spec's `DELETE` paths a status URL may match, to cancel the operation.
   */
  readonly longRunning?: { readonly cancelPaths?: readonly string[] };
  /** Type-level only: never set at run time. Carries `Args` so typed helpers can infer it. */
  readonly __args?: Args;
};

/** How tool results are made to fit the model's context (manifest `results`). */
export type ResultPolicy = {
  /** Largest result, in o200k tokens, each of its text and its `structuredContent`. */
  readonly maxTokens: number;
  /** Drop `null`s, empty arrays and objects and the `omit` keys; shorten strings over `maxStringChars`. */
  readonly compact: boolean;
  /** Keys compaction drops, at any depth: names, `*` matching any run of characters (`*_url`). */
  readonly omit: readonly string[];
  /** Longest string compaction keeps whole, in characters. */
  readonly maxStringChars: number;
};

/** Bytes of JSON per o200k token when a tool has no calibrated figure (the median of the corpus' examples is about 3.4). */
export const DEFAULT_BYTES_PER_TOKEN = 3;

/** Static settings of a generated server (from the manifest), overridable by environment variables. */
export type ServerConfig = {
  /** `serverInfo.name`. */
  readonly name: string;
  /** `serverInfo.version`. */
  readonly version: string;
  /** Sent as the initialize result's `instructions`. */
  readonly instructions?: string;
  /** Base URL the API is called at, unless `<envPrefix>_BASE_URL` is set. */
  readonly baseUrl?: string;
  /** Defaults of the OAuth resource server (manifest `http.auth`), unless `<envPrefix>_OAUTH_ISSUER`, `_OAUTH_AUDIENCE`, `_OAUTH_SCOPES` are set. */
  readonly oauth?: { readonly issuer?: string; readonly audience?: string; readonly scopes?: readonly string[] };
  /** Code mode is on for the server or a preset (manifest `discovery: code`): `--help` lists its `<PREFIX>_CODE_*` bounds. */
  readonly codeMode?: boolean;
  /** Some tool runs as an MCP task (an extra tool's `task`, a long-running operation): `--help` lists the `<PREFIX>_MAX_TASKS` / `_TASK_TTL_MS` bounds. */
  readonly taskTools?: boolean;
  /** Search or code mode is on for the server or a preset: `--help` lists `MCPGEN_SEARCH_DEBUG`. */
  readonly searchMode?: boolean;
  /** Prefix of the environment variables the server reads. */
  readonly envPrefix: string;
  /** Request timeout in ms, unless `<envPrefix>_TIMEOUT_MS` is set. */
  readonly timeoutMs: number;
  /** Largest response body passed back, unless `<envPrefix>_MAX_RESPONSE_BYTES` is set. */
  readonly maxResponseBytes: number;
  /**
   * Most bytes of response bodies all calls may hold at once, unless
   * `<envPrefix>_MAX_IN_FLIGHT_BYTES` is set (default 67,108,864).
   */
  readonly maxInFlightBytes?: number;
  /** The security schemes the tools use (names of their environment variables only). */
  readonly securitySchemes?: readonly SecurityScheme[];
  /**
   * Local file uploads, when the manifest allows them: file arguments may then be `{ path }`
   * of a file inside `root` (relative to the server's working directory, unless
   * `<envPrefix>_UPLOAD_ROOT` is set).
   */
  readonly uploads?: { readonly root: string };
  /** How results are made to fit (manifest `results`); absent ⇒ the runtime's defaults (results.ts `DEFAULT_RESULT_POLICY`). */
  readonly results?: ResultPolicy;
  /** Result settings per concern preset (manifest `results.presets`): applied over `results` for a request whose active preset is named here; a tool's own settings still win. */
  readonly resultPresets?: Readonly<Record<string, Partial<ResultPolicy>>>;
};

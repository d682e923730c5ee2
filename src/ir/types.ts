/**
 * The intermediate representation: everything the emitters need, fully resolved.
 *
 * Only `ir/build.ts` looks at both the manifest and the OpenAPI document; emitters read the IR
 * alone. The IR is data, never code: it holds no TypeScript source. Every name (tool names,
 * TS identifiers, file paths) is final here; emitters never invent or de-duplicate names.
 */
import type { PolicyConfig } from '../../templates/runtime/policy/policy-types.js';
import type { HttpMethod } from '../openapi/operations.js';

/** A JSON Schema object as published to clients. */
export type JsonSchema = Record<string, unknown>;

/** Where an IR node came from, for diagnostics. */
export type Origin = {
  /** File the node was read from (display path). */
  file: string;
  /** RFC 6901 pointer inside that file. */
  pointer: string;
};

/** Where an operation parameter travels. */
export type ParamLocation = 'path' | 'query' | 'header' | 'cookie';

/** OpenAPI serialisation style. */
export type ParamStyle = 'simple' | 'label' | 'matrix' | 'form' | 'spaceDelimited' | 'pipeDelimited' | 'deepObject';

/** One operation parameter mapped to a tool argument. */
export type IrParam = {
  kind: 'param';
  /** Tool argument (input schema property) name, after a manifest rename; unique within the tool (hidden ones included). */
  arg: string;
  /** Name on the wire. */
  name: string;
  in: ParamLocation;
  required: boolean;
  /** Serialisation style, when not the location's default. */
  style?: ParamStyle;
  /** Explode flag, when not the style's default. */
  explode?: boolean;
  /** Set when the argument is hidden from the model: what the server sends instead. */
  fixed?: IrFixedValue;
  /** Value the server sends when the model leaves the argument out (manifest `default`). */
  default?: unknown;
  origin: Origin;
};

/** How the server fills an argument the model never sees (manifest `hidden`). */
export type IrFixedValue =
  | {
      /** A constant, any JSON value. */
      value: unknown;
    }
  | {
      /** NAME of the environment variable the value is read from at start-up; the value is a secret. */
      env: string;
    };

/** The request body mapped to one tool argument. */
export type IrBody = {
  kind: 'body';
  /** Tool argument that carries the body. */
  arg: string;
  /** Media type sent as Content-Type. */
  contentType: string;
  required: boolean;
  /** Multipart: top-level body properties that are files (binary), sent as file parts. */
  files?: string[];
  /** The whole body is a file (octet-stream, image, …). */
  binary?: boolean;
  /** Set when the body is hidden from the model: what the server sends instead. */
  fixed?: IrFixedValue;
  /** Body the server sends when the model leaves the argument out (manifest `default`). */
  default?: unknown;
  /**
   * Top-level properties of an object body hidden from the model (an argument rule that hides an
   * argument of that name): the server sets each, and refuses a call whose body has one.
   */
  fields?: Array<{ name: string; fixed: IrFixedValue }>;
  origin: Origin;
};

/** HTTP method, upper case (defined where operations are read: openapi/operations.ts). */
export type { HttpMethod };

/** MCP tool annotations. */
export type ToolAnnotations = {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
};

/** A tool generated from one OpenAPI operation. */
export type IrOperationTool = {
  kind: 'operation-tool';
  /** Final MCP tool name (legal, unique, within the length limit). */
  name: string;
  /** TS identifier of the exported argument type, e.g. `GetPetByIdArgs`. */
  argsTypeName: string;
  /** TS identifier of the exported result type (used when there is an output schema), e.g. `GetPetByIdResult`. */
  resultTypeName: string;
  /** TS identifier of the exported tool constant, e.g. `getPetByIdTool`. */
  constName: string;
  title?: string;
  description?: string;
  /** Object-rooted JSON Schema 2020-12 for the arguments (with `$defs` when recursive). */
  inputSchema: JsonSchema;
  /**
   * Published output schema (manifest `outputSchemas`): lenient by default, the spec's own with
   * `strict`, none with `none` or when it was larger than `outputSchemaMaxBytes`.
   */
  outputSchema?: JsonSchema;
  /** How a 2xx body becomes `structuredContent`: the JSON object itself, or `{status, data}`. */
  resultShape: 'object' | 'wrapped';
  /** The manifest's `outputSchemas` for this tool. */
  outputMode: 'lenient' | 'strict' | 'none';
  annotations: ToolAnnotations;
  method: HttpMethod;
  /** Path template, e.g. `/pets/{petId}`. */
  path: string;
  params: IrParam[];
  body?: IrBody;
  operationId?: string;
  tags: string[];
  /**
   * Security requirement alternatives, from the operation's `security` or else the document's:
   * the tool may use any one alternative (OR), and needs every scheme of that alternative
   * (AND). `[]` means no authentication; an empty alternative (`[]` inside) means
   * authentication is optional. Every name is a scheme of {@link IrServer.securitySchemes}.
   */
  security: string[][];
  /** OAuth scopes an MCP access token must carry to see and call the tool (ir/tools/mcp-scopes.ts); absent ⇒ none. */
  scopes?: string[];
  /** TS type names of the input schema's `$defs`, when it has any. */
  inputDefTypes?: IrDefTypes;
  /** TS type names of the output schema's `$defs`, when it has any. */
  outputDefTypes?: IrDefTypes;
  /** This tool's result settings that differ from {@link IrServer.results} (manifest `overrides.<op>.results`). */
  results?: Partial<IrResultPolicy>;
  /** Bytes of compacted JSON per o200k token in this tool's results, calibrated on the spec's examples; absent without usable examples. */
  bytesPerToken?: number;
  /**
   * Projection (manifest `results.projection`), for a tool whose result can be JSON: the optional
   * argument (in `inputSchema`, after the others) carrying a JMESPath expression the server
   * applies to the response. It maps to no parameter, so it is never sent to the API.
   */
  projection?: { arg: string };
  /** A long-running operation (ir/tools/long-running.ts): the server polls its status URL until it ends, and the tool runs as an MCP task when the client asks. */
  longRunning?: IrLongRunning;
  origin: Origin;
};

/** How results are made to fit the model's context (manifest `results`; the runtime `ResultPolicy`). */
export type IrResultPolicy = {
  /** Largest result, in o200k tokens, each of its text and its `structuredContent`. */
  maxTokens: number;
  /** Compact JSON results (drop nulls, empty values and `omit` keys; shorten long strings). */
  compact: boolean;
  /** Key names or `*` patterns compaction drops, at any depth. */
  omit: string[];
  /** Longest string compaction keeps whole, in characters. */
  maxStringChars: number;
};

/** The tokens of one tool's largest documented JSON response example (`build --report`). */
export type IrResultExample = {
  /** The tool's final name. */
  tool: string;
  /** How many JSON response examples the spec documents for it. */
  examples: number;
  /** o200k tokens of the largest example's JSON as documented (no indentation). */
  rawTokens: number;
  /** o200k tokens of the same example compacted with the tool's settings (the server's and its override's). */
  tokens: number;
  /** The tool's `maxTokens`: a compacted example over it is a result the server will cut. */
  maxTokens: number;
};

/**
 * How the `$defs` of one tool schema are typed in the generated project (decided in
 * `ir/tools/def-types.ts`, never by an emitter).
 */
export type IrDefTypes = {
  /**
   * The definitions are stored once in the server's shared table of the schema's mode
   * ({@link IrServer.sharedDefs}) and attached to the schema at start-up; otherwise the schema
   * keeps its own `$defs`.
   */
  shared: boolean;
  /** Definition name ⇒ TS identifier of its exported type (valid, unique in the generated file). */
  names: Record<string, string>;
};

/** A schema definition stored once for every operation-tool schema that uses it. */
export type IrSharedDef = {
  /** Key in `$defs`. */
  name: string;
  /** TS identifier of its exported type. */
  typeName: string;
  schema: unknown;
};

/** The shared definition tables of the operation tools' input and output schemas, in first-use order. */
export type IrSharedDefs = { input: IrSharedDef[]; output: IrSharedDef[] };

/** Where an apiKey scheme puts its key. */
export type ApiKeyLocation = 'header' | 'query' | 'cookie';

/** Fields every security scheme has. */
type IrSchemeBase = {
  /** Scheme name, as in the spec's `securitySchemes` / `securityDefinitions`. */
  name: string;
  /**
   * Set when the spec's scheme cannot be applied as described (openIdConnect, mutualTLS,
   * oauth2 without a client-credentials flow, an unknown http scheme) and a static bearer token
   * is sent instead: the spec's type, e.g. `oauth2 (implicit)`.
   */
  fallbackFrom?: string;
  /** The scheme's definition in the spec. */
  origin: Origin;
};

/**
 * A security scheme the included tools use, resolved to how the server applies it. `env` holds
 * the NAMES of the environment variables the secrets are read from at run time, never values.
 */
export type IrSecurityScheme = IrSchemeBase &
  (
    | {
        /** An API key in a header, query parameter or cookie. */
        kind: 'apiKey';
        /** Where the key travels. */
        in: ApiKeyLocation;
        /** Header, query parameter or cookie name. */
        paramName: string;
        /** Variable holding the key. */
        env: { apiKey: string };
        /** Over HTTP, the MCP request header the key is taken from instead of `env` (manifest `auth.<scheme>.fromClient`). */
        fromClient?: string;
      }
    | {
        /** A token sent as `Authorization: Bearer` (http bearer, or a fallback, see `fallbackFrom`). */
        kind: 'bearer';
        /** Variable holding the token. */
        env: { token: string };
        /** Over HTTP, the MCP request header the token is taken from instead of `env` (a leading `Bearer ` dropped). */
        fromClient?: string;
        /** OAuth token exchange (manifest `auth.<scheme>.exchange`): over HTTP with an OAuth access token, the API gets a token exchanged for it (runtime/oauth/oauth-exchange.ts). */
        exchange?: { audience: string; scopes?: string[] };
      }
    | {
        /** HTTP basic authentication. */
        kind: 'basic';
        /** Variables holding the user name and the password. */
        env: { username: string; password: string };
        /** Over HTTP, the MCP request header (`Basic <base64>` or `user:password`) the credentials are taken from instead of `env`. */
        fromClient?: string;
      }
    | {
        /** OAuth 2.0 client credentials: a token fetched from `tokenUrl`, sent as a bearer token. */
        kind: 'oauth2ClientCredentials';
        /** Token endpoint (manifest override, else the spec's); may be relative to the API base URL. */
        tokenUrl: string;
        /** Scopes requested with each token (none ⇒ no `scope` parameter). */
        scopes: string[];
        /** Variables holding the client id and the client secret. */
        env: { clientId: string; clientSecret: string };
      }
  );

/** The whole generated server. */
export type IrServer = {
  kind: 'server';
  /** npm package / bin / serverInfo name. */
  name: string;
  version: string;
  description?: string;
  /** How the project is published (manifest `package`); absent ⇒ publishable, nothing else set. */
  package?: IrPackage;
  /** Manifest `entry: custom`: the package exports `createServer()` and `src/server.ts` runs the user's `src/main.ts` (code registration); absent ⇒ the generated entry. */
  entry?: 'custom';
  /** Manifest `deploy: compose`: the build writes compose.yaml (three replicas behind a reverse proxy, Redis); absent ⇒ none. */
  deploy?: 'compose';
  /** Prefix of the environment variables the server reads. */
  envPrefix: string;
  /** Default API base URL; absent when neither manifest nor spec gives an absolute one. */
  baseUrl?: string;
  /** Defaults of the OAuth resource server (manifest `http.auth`); the `<PREFIX>_OAUTH_*` settings win. */
  httpAuth?: { issuer?: string; audience?: string; scopes?: string[] };
  timeoutMs: number;
  maxResponseBytes: number;
  /** Most bytes of response bodies the server holds at once, over all calls. */
  maxInFlightBytes: number;
  /** Local file uploads, when the manifest enables them: the root relative to the server's cwd. */
  uploads?: { root: string };
  /** How results are made to fit, defaults applied (manifest `results`). */
  results: IrResultPolicy;
  /**
   * Concern preset ⇒ the result settings it changes, only the keys written, only presets that
   * change something (manifest `results.presets`): the server applies them over `results` for a
   * request whose active preset it is; a tool's own `results` still win.
   */
  resultPresets?: Record<string, Partial<IrResultPolicy>>;
  /**
   * `build --report` only: per operation tool with a JSON response example in the spec, in tool
   * order, the o200k tokens of its largest example as documented and compacted, and its budget.
   */
  resultExamples?: IrResultExample[];
  /** The manifest's argument rules that could be applied, in manifest order, with the tools each changed (`build --report`). */
  argumentRules?: IrArgumentRuleUse[];
  /**
   * Operations extra tools call through `ctx.api` that are not tools (include/exclude leave them
   * out), in spec order: emitted with the tools (`tools.gen.ts`), never listed. Absent when none.
   */
  apiOperations?: IrOperationTool[];
  /** Tools in spec order (paths in document order, methods in a fixed order). */
  tools: IrOperationTool[];
  /** Definitions shared by the tools' schemas (those with `inputDefTypes.shared` / `outputDefTypes.shared`). */
  sharedDefs: IrSharedDefs;
  /** The security schemes the tools use, sorted by name. */
  securitySchemes: IrSecurityScheme[];
  /** Tools implemented by user handlers (manifest `extraTools`), in manifest order. */
  extraTools: IrExtraTool[];
  /** Prompts, in manifest order. */
  prompts: IrPrompt[];
  /** Fixed-URI resources, in manifest order. */
  resources: IrResource[];
  /** Resource templates, in manifest order. */
  resourceTemplates: IrResourceTemplate[];
  /** Concern filtering, when the manifest declares concerns. */
  concerns?: IrConcerns;
  /** Preprocessors (manifest `preprocessors`), in manifest order (the server runs them in `after` order). */
  preprocessors: IrPreprocessor[];
  /** The reflection gate, when the manifest declares one. */
  reflection?: IrReflection;
  /** The published tool surface, measured once every tool is final. */
  surface?: IrSurface;
  /**
   * Manifest pointers of entries that name operations include/exclude leave out (concern
   * mappings, overrides, reflection gates, policy limits), in manifest order: warned about once
   * (MCPGEN_EXCLUDED_REFERENCES) and removed by `mcpgen fix`. Emitters ignore it.
   */
  excludedReferences?: string[];
  /** `search`: the server lists search_tools, describe_tool and call_tool instead of its tools (manifest `discovery`). */
  discovery?: 'search' | 'code';
  /**
   * Concern preset ⇒ its discovery mode, for the presets whose mode differs from `discovery`
   * (manifest `discovery.presets`; ir/features/discovery.ts): what `tools/list` lists for a client that
   * selected the preset.
   */
  presetDiscovery?: Record<string, 'list' | 'search' | 'code'>;
  /** The policy layer, when the manifest has `policy`: access rules resolved to exact primitives (ir/features/policy.ts). */
  policy?: IrPolicy;
};

/** The resolved policy (manifest `policy`): exactly what `src/policy.gen.ts` exports and the runtime reads. */
export type IrPolicy = PolicyConfig;

/** Publishing settings of the generated package and MCP Bundle (manifest `package`). */
export type IrPackage = {
  /** `"private": true` in package.json. */
  private: boolean;
  /** package.json `author`; the bundle's `author.name`. */
  author?: string;
  /** SPDX license expression. */
  license?: string;
  /** Source repository URL. */
  repository?: string;
  /** The manifest's `package.dependencies` (merged into the generated package.json). */
  dependencies?: Record<string, string>;
  /** The manifest's `package.devDependencies`. */
  devDependencies?: Record<string, string>;
};

/** What one argument rule (manifest `arguments`) did. */
export type IrArgumentRuleUse = {
  /** Its index in the manifest's `arguments`. */
  index: number;
  /** The argument it targets, as generated. */
  name: string;
  /** What it sets (`hidden` alone for a rule that hides). */
  sets: Array<'hidden' | 'default' | 'description' | 'as'>;
  /** A hidden argument's source: the variable, or `value` for a constant (never the constant itself). */
  fill?: { env: string } | 'value';
  /** The name the model sees, for a rule with `as`. */
  as?: string;
  /** The tools it changed, in tool order. */
  tools: string[];
};

/** The tool surface a client receives, computed with the generated server's own listing code. */
export type IrSurface = {
  /** The exact `tools/list` entries, unfiltered, in list order (operation tools, extra tools, `persist_justification`). */
  tools: Array<{ name: string; bytes: number; inputBytes: number; outputBytes: number; descriptionBytes: number }>;
  /** UTF-8 length of the JSON of the whole `tools` array. */
  listBytes: number;
  /** Tools that publish an output schema. */
  withOutputSchema: number;
  /** Operation tools whose 2xx body has a JSON schema in the spec. */
  describedResults: number;
  /** Operation tools whose 2xx has a JSON schema but whose output schema was dropped for size. */
  outputSchemasDropped: string[];
  /** Operation tools whose input schema was cut to fit `inputSchemaMaxBytes`. */
  inputSchemasCut: string[];
  /** Tokens (o200k) of the `tools` array, when counted (`--report`, or a token budget). */
  tokens?: { total: number; largest: Array<{ name: string; tokens: number }> };
  /** The surface a client that selected each concern preset lists, in manifest order. */
  presets: IrPresetSurface[];
  /** Search mode (no preset selected): what `tools/list` lists (the fields above measure the catalogue behind `search_tools`). */
  search?: { tools: string[]; listBytes: number; mode?: 'code'; tokens?: number };
  /** The search-mode entries, unfiltered (search_tools, describe_tool, call_tool, the gate's persist tool), when the server or any preset is in search mode. */
  front?: IrSurface['tools'];
};

/** What a client that selected one concern preset lists (the server's own matching rule). */
export type IrPresetSurface = {
  /** Preset name (a key of `concernPresets`). */
  name: string;
  /** Names of the tools listed, in list order (a search-mode preset: the search tools). */
  tools: string[];
  /** UTF-8 length of the JSON of the `tools` array listed with the preset selected. */
  listBytes: number;
  /** A preset in search mode: the catalogue behind `search_tools` with the preset selected (its tools and their `tools/list` bytes). */
  catalogue?: { tools: string[]; listBytes: number };
  /** Prompts, resources and resource templates listed with the preset selected. */
  prompts: number;
  resources: number;
  resourceTemplates: number;
  /** Tokens (o200k) of the preset's `tools` array and of its largest tools, when counted. */
  tokens?: { total: number; largest: Array<{ name: string; tokens: number }> };
};

/** A function of the generated project named by a manifest `handler: <file>#<export>`. */
export type IrHandlerRef = {
  /** Path relative to the project's `src/` folder, POSIX separators, e.g. `handlers/pets.ts`. */
  file: string;
  /** Name of the exported function. */
  exportName: string;
  /** Identifier generated files import the module as (`import * as <alias>`); one per file, unique. */
  moduleAlias: string;
  /** Module specifier of the file relative to `src/`, e.g. `./handlers/pets.js`. */
  importPath: string;
  /** The manifest's `handler` value. */
  origin: Origin;
};

/** A tool implemented by a user handler (manifest `extraTools`). */
export type IrExtraTool = {
  kind: 'extra-tool';
  /** Final MCP tool name (unique among all tools). */
  name: string;
  /** TS identifier of the exported argument type. */
  argsTypeName: string;
  /** TS identifier of the exported result type. */
  resultTypeName: string;
  /** TS identifier of the exported tool constant. */
  constName: string;
  title?: string;
  description?: string;
  /** Object-rooted JSON Schema of the arguments, as written in the manifest. */
  inputSchema: JsonSchema;
  /** Object-rooted JSON Schema of the structured result, when given. */
  outputSchema?: JsonSchema;
  /** TS type names of the input schema's `$defs` (never shared), when it has any. */
  inputDefTypes?: IrDefTypes;
  /** TS type names of the output schema's `$defs` (never shared), when it has any. */
  outputDefTypes?: IrDefTypes;
  annotations: ToolAnnotations;
  handler: IrHandlerRef;
  /** OAuth scopes an MCP access token must carry to see and call the tool (manifest `scopes`); absent ⇒ none. */
  scopes?: string[];
  /** The operations the handler calls through `ctx.api` (manifest `uses`), in manifest order; absent when none. */
  uses?: IrApiUse[];
  /** TS identifier of the exported `<Tool>Api` type (`ctx.api`'s), with `uses`. */
  apiTypeName?: string;
  /** TS identifier of the exported `<Tool>Context` type (the handler's context), with `uses`. */
  contextTypeName?: string;
  /** Runs as an MCP task (manifest `task`): `optional` when the client asks for one, `required` always, `deferred` from the handler's `ctx.runAsTask()` on. */
  task?: 'optional' | 'required' | 'deferred';
  origin: Origin;
};

/** One operation an extra tool calls through `ctx.api`: an operation tool, or one of {@link IrServer.apiOperations}. */
export type IrApiUse = {
  /** Its operationId: the method's name on `ctx.api`. */
  operationId: string;
  /** The operation's tool name (audit lines and limits name the nested call by it). */
  tool: string;
  /** TS identifiers of its constant and argument type in `tools.gen.ts`. */
  constName: string;
  argsTypeName: string;
  /** TS identifier of its result type, when it publishes an output schema. */
  resultTypeName?: string;
};

/** One declared prompt argument. */
export type IrPromptArgument = {
  name: string;
  description?: string;
  required: boolean;
  /** What `completion/complete` offers for it: the manifest's `complete` (values, or a handler that computes them), or the enum of the bound OpenAPI parameter (strings, in order). */
  complete?: string[] | IrHandlerRef;
};

/**
 * One message of a prompt (manifest `prompts[].messages[]`). `text`, a `resource`'s `uri` and
 * its `text` are Handlebars templates over the arguments (checked at build time); embedded files
 * are inlined (base64 for `data`/`blob`).
 */
export type IrPromptMessage =
  | { role: 'user' | 'assistant'; text: string }
  | { role: 'user' | 'assistant'; image: { data: string; mimeType: string } }
  | { role: 'user' | 'assistant'; audio: { data: string; mimeType: string } }
  | {
      role: 'user' | 'assistant';
      resource: { uri: string; mimeType?: string } & (
        | { text: string }
        | { blob: string }
        | { /** A declared resource, read when the prompt is got. */ read: true }
      );
    }
  | { role: 'user' | 'assistant'; resourceLink: { uri: string; name: string; title?: string; description?: string; mimeType?: string } };

/** A prompt whose messages are Handlebars templates and embedded content (checked at build time). */
export type IrPrompt = {
  kind: 'prompt';
  /** Prompt name, unique among prompts. */
  name: string;
  title?: string;
  description?: string;
  arguments: IrPromptArgument[];
  /** Messages in order. */
  messages: IrPromptMessage[];
  origin: Origin;
  /** OAuth scopes an MCP access token must carry to see and use it (manifest `scopes`, sorted); absent ⇒ none. */
  scopes?: string[];
};

/** Where a fixed-URI resource's content comes from. */
export type IrResourceContent =
  | { kind: 'text'; text: string }
  | { /** An embedded file that is not text (base64). */ kind: 'blob'; blob: string }
  | { kind: 'handler'; handler: IrHandlerRef };

/** A resource with a fixed URI. */
export type IrResource = {
  kind: 'resource';
  /** Unique among resources. */
  uri: string;
  name: string;
  title?: string;
  description?: string;
  /** Declared, or guessed from an embedded file's extension. */
  mimeType?: string;
  content: IrResourceContent;
  /** With a handler: poll it every this many ms while someone is subscribed, notifying on a change (manifest `refreshMs`). */
  refreshMs?: number;
  origin: Origin;
  /** OAuth scopes an MCP access token must carry to see and use it (manifest `scopes`, sorted); absent ⇒ none. */
  scopes?: string[];
};

/** A family of resources named by an RFC 6570 URI template. */
export type IrResourceTemplate = {
  kind: 'resource-template';
  /** Unique among templates. */
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Variable names of the template, in order of first appearance. */
  variables: string[];
  /** Completion values (or the handler computing them) by variable (manifest `variables`: `complete`, or the bound OpenAPI parameter's enum). */
  complete?: Record<string, string[] | IrHandlerRef>;
  handler: IrHandlerRef;
  origin: Origin;
  /** OAuth scopes an MCP access token must carry to see and use it (manifest `scopes`, sorted); absent ⇒ none. */
  scopes?: string[];
};

/** The kinds of primitive concern mappings apply to. */
export type IrPrimitiveKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** Concern declarations, mappings and options (manifest `concerns`, `concernMappings`, …). */
export type IrConcerns = {
  declarations: Array<{ name: string; description?: string; values: string[]; default?: string }>;
  /** Per kind: primitive id ⇒ concern ⇒ value(s); ids and concerns in manifest order. */
  mappings: Partial<Record<IrPrimitiveKind, Record<string, Record<string, string | string[]>>>>;
  /** Preset name ⇒ preferences. */
  presets: Record<string, Record<string, string>>;
  exposeInMeta: boolean;
  enforce: boolean;
};

/** A preprocessor (manifest `preprocessors`): a handler run on the user input, never a tool. */
export type IrPreprocessor = {
  kind: 'preprocessor';
  /** Unique among preprocessors, and not a tool name. */
  name: string;
  title?: string;
  description?: string;
  /** Preprocessors that run before this one (checked: they exist, no cycle). */
  after: string[];
  timeoutMs?: number;
  onError?: 'skip' | 'fail';
  handler: IrHandlerRef;
  origin: Origin;
};

/** One gate of a gated tool. */
export type IrGate = {
  domain: string;
  /** Name of the gate's prompt (served by `prompts/get`). */
  prompt: string;
  /** Handlebars template of the prompt, over the prompt arguments. */
  template: string;
  /** Prompt argument ⇒ Handlebars template over the tool's arguments. */
  promptArgs: Record<string, string>;
  scope?: 'domain' | 'tool';
  /** Overrides the reflection's `mode` for this gate. */
  mode?: 'auto' | 'sampling' | 'host' | 'elicit';
  description?: string;
  origin: Origin;
};

/** The reflection gate (manifest `reflection`). */
export type IrReflection = {
  storeDir: string;
  mode: 'auto' | 'sampling' | 'host' | 'elicit';
  scope: 'domain' | 'tool';
  /** Declared domains (or those the gates use), in manifest order. */
  domains: string[];
  justificationSchema?: JsonSchema;
  maxJustificationBytes?: number;
  sampling?: { maxTokens?: number; timeoutMs?: number };
  /** Gated tool name ⇒ its gates in order; tools in manifest order. */
  gates: Record<string, IrGate[]>;
  /** Gated tools that declare an output schema (their hint carries no `structuredContent`). */
  toolsWithOutputSchema: string[];
};

/** What the IR keeps of a long-running operation (the runtime `OperationTool.longRunning`). */
export type IrLongRunning = {
  /** Path templates the API declares a cancelling `DELETE` on (status monitors), sorted; absent when none. */
  cancelPaths?: string[];
};

/**
 * Diagnostics: every problem mcpgen reports, with a stable code, a location and a fix hint.
 *
 * Stages never throw for user errors; they push diagnostics into a {@link Diagnostics} bag and
 * the CLI decides, once every stage that can run has run, whether anything may be written.
 * The catalogue below is the documented list of codes (docs/diagnostics.md mirrors it).
 */

/** How bad a diagnostic is. Only `error` blocks output. */
export type Severity = 'error' | 'warning';

/** Where a diagnostic points. `file` is relative to the working directory when possible. */
export type Location = {
  /** File the problem is in (manifest, spec or a referenced file). */
  file: string;
  /** RFC 6901 JSON pointer inside that file, `''` for the whole document. */
  pointer: string;
  /** 1-based line, 0 when unknown. */
  line: number;
  /** 1-based column, 0 when unknown. */
  col: number;
};

/**
 * One reported problem. A warning's code is one of {@link WARNING_CODES}, so the type checker
 * keeps that list (and the test of every warning's help) complete.
 */
export type Diagnostic = DiagnosticFields & ({ severity: 'error'; code: DiagnosticCode } | { severity: 'warning'; code: WarningCode });

type DiagnosticFields = {
  /** Stable code from {@link CATALOG}. */
  code: DiagnosticCode;
  severity: Severity;
  /** What is wrong: one line, or a first line followed by an indented list. */
  message: string;
  /** How to fix it, usually one line. */
  help: string;
  location: Location;
};

/** Every diagnostic code mcpgen emits, with the cause it stands for. */
export const CATALOG = {
  MCPGEN_MANIFEST_NOT_FOUND: 'The manifest file does not exist or cannot be read.',
  MCPGEN_MANIFEST_SYNTAX: 'The manifest is not well-formed YAML.',
  MCPGEN_MANIFEST_UNKNOWN_KEY: 'The manifest has a key the schema does not define.',
  MCPGEN_MANIFEST_INVALID: 'A manifest value breaks the manifest schema (wrong type, pattern, missing key, …).',
  MCPGEN_SPEC_NOT_FOUND: 'The OpenAPI file named by `openapi` does not exist or cannot be read.',
  MCPGEN_SPEC_SYNTAX: 'The OpenAPI file is not well-formed YAML or JSON.',
  MCPGEN_SPEC_INVALID: 'The OpenAPI document breaks the OpenAPI/Swagger schema.',
  MCPGEN_SPEC_UNSUPPORTED_VERSION: 'The document is not Swagger 2.0, OpenAPI 3.0 or OpenAPI 3.1.',
  MCPGEN_SPEC_REF_UNRESOLVED: 'A `$ref` points at something that does not exist.',
  MCPGEN_SPEC_REMOTE_REF: 'A `$ref` points at a remote URL and remote references are not allowed.',
  MCPGEN_SPEC_REF_OUTSIDE: 'A `$ref` points at a local file outside the directory trees of the manifest and of the spec.',
  MCPGEN_SPEC_REF_CYCLE:
    'A `$ref` cycle with no content: schemas (or parameters, responses, …) that only refer to each other, directly or through allOf/anyOf/oneOf/not.',
  MCPGEN_SPEC_TOO_DEEP: 'The OpenAPI document nests deeper than mcpgen reads (2500 levels of JSON).',
  MCPGEN_DUPLICATE_OPERATION_ID: 'Two operations share one operationId.',
  MCPGEN_UNKNOWN_TAG: "An include/exclude selector (or an argument rule's `match`) names a tag no operation has.",
  MCPGEN_UNKNOWN_OPERATION: "An include/exclude selector, an argument rule's `match` or an override names an operation the spec does not have.",
  MCPGEN_UNMATCHED_PATH: "An include/exclude path glob (or one of an argument rule's `match`) matches no operation.",
  MCPGEN_NO_TOOLS: 'After include/exclude, no operation is left.',
  MCPGEN_DUPLICATE_TOOL_NAME: 'Two tools would have the same name.',
  MCPGEN_INVALID_TOOL_NAME: 'An explicit tool name is not a legal MCP tool name or is too long.',
  MCPGEN_UNKNOWN_ARGUMENT: "An override's `arguments` names an argument the operation's tool does not have.",
  MCPGEN_ARGUMENT_OVERRIDE_INVALID:
    'An argument override or argument rule is inconsistent: `hidden` without `value` or `env` (or with both, or with `default`/`description`/`name`/`as`), `value`/`env` without `hidden`, a rename that collides, an unusable variable name, or a rule that changes nothing.',
  MCPGEN_ARGUMENT_RULE_UNMATCHED:
    'An argument rule changes no tool: its `match` selects no tool, or none of the tools it selects has the argument it names (warning).',
  MCPGEN_ARGUMENT_RULE_CONFLICT:
    'Two argument rules set the same field of the same argument on one tool (a rule that hides an argument sets all of its fields).',
  MCPGEN_UNKNOWN_AUTH_SCHEME: 'An `auth` entry names a security scheme the spec does not define.',
  MCPGEN_AUTH_INVALID_FIELD:
    'An `auth` entry has a field that does not fit its scheme type, names a settings variable, or has a `fromClient` that is not a usable header name.',
  MCPGEN_AUTH_FROM_CLIENT_AUTHORIZATION:
    'A scheme takes its credential `fromClient` from the Authorization header, which carries the MCP client tokens when the server has some.',
  MCPGEN_AUTH_UNSUPPORTED_SCHEME:
    'A security scheme the server cannot perform (openIdConnect, mutualTLS, oauth2 without client credentials, …) is sent as a static bearer token.',
  MCPGEN_SPEC_UNDEFINED_SECURITY_SCHEME: 'A security requirement names a scheme the spec does not define; that alternative is ignored.',
  MCPGEN_SCOPE_MAP_UNKNOWN: "A `scopeMap` key is no scope of the API description's oauth2/openIdConnect scheme; the entry does nothing.",
  MCPGEN_NO_BASE_URL: 'Neither the manifest nor the spec gives an absolute base URL.',
  MCPGEN_OUTPUT_SCHEMA_DROPPED: 'Output schemas larger than `outputSchemaMaxBytes` were left out of the tool list.',
  MCPGEN_PATTERN_DROPPED:
    'A schema `pattern` (or `patternProperties` key) the generated server cannot enforce in linear time, or that is not valid ECMAScript, is left out of the input schema.',
  MCPGEN_INSECURE_TOKEN_URL: 'An OAuth `tokenUrl` is plain `http://` on a host other than localhost: the client secret would be sent in clear.',
  MCPGEN_SCHEMA_TOO_DEEP: 'A tool schema is nested deeper than 64 levels; the published schema is cut there to the type of each deeper value.',
  MCPGEN_OVER_BUDGET: 'The tool surface is over a `budget` limit (list bytes, tools or tokens).',
  MCPGEN_LARGE_SURFACE: 'The tool list is over a quarter of `budget.maxListBytes`.',
  MCPGEN_OUTPUT_UNSAFE:
    'The output directory is unsafe to write into (the filesystem root, a parent of the manifest, …), as written or after following symbolic links.',
  MCPGEN_OUTPUT_CONFLICT:
    "Something in the output folder is not mcpgen's to overwrite or remove (its content has neither the recorded hash nor the generated header), or a folder, FIFO or link is where a file goes.",
  MCPGEN_TOOL_SCHEMA_INVALID: "An extra tool's `inputSchema` or `outputSchema` is not a valid JSON Schema whose root is `type: object`.",
  MCPGEN_HANDLER_INVALID:
    'A `handler` names a file mcpgen generates (`server.ts`, `*.gen.ts`, `runtime/…`) or a declaration file, or its function name is a reserved word.',
  MCPGEN_HANDLER_MISSING:
    'A handler file (or the `entry: custom` registration file src/main.ts) does not exist yet: `mcpgen build` writes a typed stub there, once, for you to fill in (warning).',
  MCPGEN_HANDLER_RUNTIME_IMPORT:
    "A handler file imports a flat runtime path that no longer exists (`'../runtime/extra-tools.js'`, from before the runtime had folders): the project would not compile; `'../runtime/handlers.js'` replaces it (warning).",
  MCPGEN_HANDLER_EXPORT_MISSING: 'A handler file exists but does not export the named function (src/main.ts of `entry: custom`: `register`).',
  MCPGEN_DEPENDENCY_CONFLICT:
    '`package.dependencies` or `package.devDependencies` names a package the generated project declares itself, or both name the same package.',
  MCPGEN_DUPLICATE_PRIMITIVE:
    'Two prompts share a name, two resources a URI, two resource templates a URI template, two concerns a name, or a prompt declares an argument twice.',
  MCPGEN_PROMPT_TEMPLATE_INVALID: 'A prompt message is not a usable Handlebars template: a syntax error, a partial, or a helper that does not exist.',
  MCPGEN_PROMPT_UNKNOWN_VARIABLE: "A prompt template uses a variable that is not one of the prompt's arguments; it always renders empty (warning).",
  MCPGEN_RESOURCE_CONTENT: 'A resource gives none, or more than one, of `text`, `file` and `handler`.',
  MCPGEN_RESOURCE_FILE:
    "A `file` resource (or a file a prompt message embeds) is missing, unreadable, outside the manifest's folder, or (for a prompt) larger than 1 MiB.",
  MCPGEN_PROMPT_CONTENT:
    'A prompt message gives none, or more than one, of `text`, `image`, `audio`, `resource` and `resourceLink`; an embedded resource without content names no declared resource; an image or audio file has another MIME type; a resource link has no name.',
  MCPGEN_COMPLETION_SOURCE:
    "A `parameter` binding (completion source) names an operation or parameter the OpenAPI description does not have, or a parameter without `enum`; or a resource template's `variables` names a variable the template does not have.",
  MCPGEN_INVALID_URI_TEMPLATE: 'A resource template is not a valid RFC 6570 URI template.',
  MCPGEN_UNKNOWN_PRIMITIVE:
    'A concern mapping names a tool, prompt, resource or resource template the server does not have (or a gate prompt, which follows its tool), or a reflection gate names a tool it does not have.',
  MCPGEN_EXCLUDED_REFERENCES:
    'Concern mappings, overrides, reflection gates or `policy.limits.tools` keys name operations the spec has but `include`/`exclude` leave out, so they do nothing (one warning for all; `mcpgen fix` removes them).',
  MCPGEN_UNKNOWN_CONCERN: 'A concern mapping or preset names a concern `concerns` does not declare.',
  MCPGEN_UNKNOWN_CONCERN_VALUE: "A concern mapping, preset or `default` uses a value the concern's `values` do not list.",
  MCPGEN_UNMAPPED_TOOL: 'A tool maps no concern while concern presets filter on some: every preset lists it, whatever it does (warning).',
  MCPGEN_UNKNOWN_PRESET: '`budget.presets`, `discovery.presets` or `results.presets` names a preset `concernPresets` does not declare.',
  MCPGEN_UNKNOWN_PREPROCESSOR: "A preprocessor's `after` names a preprocessor that does not exist.",
  MCPGEN_PREPROCESSOR_CYCLE: 'Preprocessors wait for each other through `after` in a cycle (or one lists itself).',
  MCPGEN_REFLECTION_UNKNOWN_DOMAIN: 'A reflection gate uses a domain `reflection.domains` does not declare.',
  MCPGEN_REFLECTION_NO_GATES: '`reflection` declares no gates, so it gates nothing (warning).',
  MCPGEN_REFLECTION_PROMPT_ARGUMENT:
    "A gate prompt's template uses a variable no gate gives it in `promptArgs`, or a `promptArgs` template reads something that is not an argument of the gated tool.",
  MCPGEN_POLICY_AUDIT_NO_SINK: '`policy.audit` has neither a `file` nor `stderr: true`, so its events would go nowhere.',
  MCPGEN_POLICY_AUDIT_CHAIN_NO_FILE: '`policy.audit.chain: true` without a `file`: only the lines of a file can be chained.',
  MCPGEN_POLICY_INVALID_CLIENT:
    'A `policy.access` rule names a client identity that no token or `<ENV_PREFIX>_CLIENT` can carry (letters, digits and `._@-`, at most 128; or `*`).',
  MCPGEN_POLICY_UNKNOWN_CONCERN: 'A `policy.access` selector tests a concern `concerns` does not declare.',
  MCPGEN_POLICY_UNKNOWN_CONCERN_VALUE: "A `policy.access` selector tests a value the concern's `values` do not list.",
  MCPGEN_POLICY_UNKNOWN_ANNOTATION:
    'A `policy.access` selector tests an annotation that is not one of readOnlyHint, destructiveHint, idempotentHint, openWorldHint.',
  MCPGEN_POLICY_UNMATCHED_SELECTOR: 'A `policy.access` selector, or one of its `names` or `tags`, matches no primitive the server serves (warning).',
  MCPGEN_POLICY_UNMATCHED_LIMIT: 'A `policy.limits.tools` key matches no tool the server serves (warning).',
  MCPGEN_POLICY_NO_EFFECT: '`policy.access` has no rules and `default: allow`, or a rule has neither `allow` nor `deny`: it changes nothing (warning).',
  MCPGEN_DIAGNOSTIC_LEVEL_INVALID: 'A `diagnostics` entry names a code mcpgen does not have, or sets `off` or `warning` for a code that is always an error.',
} as const;

export type DiagnosticCode = keyof typeof CATALOG;

/**
 * The codes that can be warnings (some of them are errors in other cases): the ones the
 * manifest's `diagnostics` can turn `off` or make an `error`. Every other code is always an error.
 * `Diagnostics.warn` accepts only these; a new warning code goes here, and gets a row in
 * test/unit/warning-help.test.ts showing that following its help clears it.
 */
export const WARNING_CODES = [
  'MCPGEN_MANIFEST_SYNTAX',
  'MCPGEN_SPEC_SYNTAX',
  'MCPGEN_UNMATCHED_PATH',
  'MCPGEN_NO_TOOLS',
  'MCPGEN_AUTH_FROM_CLIENT_AUTHORIZATION',
  'MCPGEN_AUTH_UNSUPPORTED_SCHEME',
  'MCPGEN_SPEC_UNDEFINED_SECURITY_SCHEME',
  'MCPGEN_SCOPE_MAP_UNKNOWN',
  'MCPGEN_NO_BASE_URL',
  'MCPGEN_OUTPUT_SCHEMA_DROPPED',
  'MCPGEN_PATTERN_DROPPED',
  'MCPGEN_SCHEMA_TOO_DEEP',
  'MCPGEN_LARGE_SURFACE',
  'MCPGEN_HANDLER_MISSING',
  'MCPGEN_HANDLER_RUNTIME_IMPORT',
  'MCPGEN_PROMPT_UNKNOWN_VARIABLE',
  'MCPGEN_UNMAPPED_TOOL',
  'MCPGEN_EXCLUDED_REFERENCES',
  'MCPGEN_REFLECTION_NO_GATES',
  'MCPGEN_REFLECTION_PROMPT_ARGUMENT',
  'MCPGEN_POLICY_UNMATCHED_SELECTOR',
  'MCPGEN_POLICY_UNMATCHED_LIMIT',
  'MCPGEN_POLICY_NO_EFFECT',
  'MCPGEN_ARGUMENT_RULE_UNMATCHED',
] as const satisfies readonly DiagnosticCode[];

/** A code that can be a warning. */
export type WarningCode = (typeof WARNING_CODES)[number];

/** What the manifest's `diagnostics` sets for a code: drop its warnings, keep them (the default), or make them errors. */
export type DiagnosticLevel = 'off' | 'warning' | 'error';

/**
 * Collects diagnostics across stages. With {@link Diagnostics.setLevels} (the manifest's
 * `diagnostics`), a warning set `off` is dropped and one set to `error` is recorded as an error,
 * as it is added, so every stage that asks `hasErrors` (and so whether anything is written) sees
 * it as the user wants it. Errors are never lowered.
 */
export class Diagnostics {
  readonly items: Diagnostic[] = [];
  #levels: ReadonlyMap<string, DiagnosticLevel> = new Map();

  /** Records one diagnostic, at the level the manifest sets for a warning's code. */
  add(d: Diagnostic): void {
    const level = d.severity === 'warning' ? this.#levels.get(d.code) : undefined;
    if (level === 'off') return;
    this.items.push(level === 'error' ? promoted(d) : d);
  }

  /** Applies levels per code to the warnings recorded so far and to every one added later. */
  setLevels(levels: ReadonlyMap<string, DiagnosticLevel>): void {
    this.#levels = levels;
    const kept = this.items.splice(0);
    for (const d of kept) this.add(d);
  }

  /** Shorthand for an error. */
  error(code: DiagnosticCode, message: string, help: string, location: Location): void {
    this.add({ code, severity: 'error', message, help, location });
  }

  /** Shorthand for a warning. */
  warn(code: WarningCode, message: string, help: string, location: Location): void {
    this.add({ code, severity: 'warning', message, help, location });
  }

  /** True when at least one error was recorded. */
  get hasErrors(): boolean {
    return this.items.some((d) => d.severity === 'error');
  }

  /** Diagnostics in a stable order: file, line, column, code, message. */
  sorted(): Diagnostic[] {
    const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
    return [...this.items].sort(
      (a, b) =>
        cmp(a.location.file, b.location.file) ||
        cmp(a.location.line, b.location.line) ||
        cmp(a.location.col, b.location.col) ||
        cmp(a.code, b.code) ||
        cmp(a.message, b.message),
    );
  }
}

/** A warning made an error by the manifest's `diagnostics`; its help says where that was decided. */
function promoted(d: Diagnostic): Diagnostic {
  const why = `an error because the manifest's \`diagnostics\` sets ${d.code}: error`;
  return { ...d, severity: 'error', help: d.help === '' ? why : `${d.help} (${why})` };
}

/** Escapes one JSON pointer token (RFC 6901). */
export function escapePointerToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Builds a JSON pointer from tokens: `pointer(['paths', '/pets', 'get'])` → `/paths/~1pets/get`. */
export function pointer(tokens: ReadonlyArray<string | number>): string {
  return tokens.map((t) => '/' + escapePointerToken(t)).join('');
}

/** Splits a JSON pointer into unescaped tokens. Accepts a leading `#`. */
export function parsePointer(ptr: string): string[] {
  const p = ptr.startsWith('#') ? ptr.slice(1) : ptr;
  if (p === '') return [];
  return p
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

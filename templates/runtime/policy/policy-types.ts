/**
 * The policy layer's configuration, as the compiler emits it (`src/policy.gen.ts`) and the
 * runtime reads it: audit trail, access control and per-tool limits (manifest `policy`).
 *
 * The compiler resolves everything it can: an access rule arrives as the exact sets of primitive
 * names it matches (by name, glob, tag, concern value or annotation — decided at build time,
 * where tags, concern mappings and annotations are known), so the runtime only does set logic
 * per client identity. Limits arrive as a default and ordered per-tool entries (first match
 * wins, tool names already resolved).
 *
 * Pure types, no imports: copied verbatim into every generated project that has a `policy`.
 */

/** Every audit event name. `session.*` are legacy-era only (the modern era has no sessions). */
export type AuditEventName =
  | 'session.opened'
  | 'session.closed'
  | 'tool.invoked'
  | 'tool.completed'
  | 'tool.failed'
  | 'tool.denied'
  | 'tool.limited'
  | 'preprocessor.run'
  | 'justification.persisted'
  | 'prompt.get'
  | 'resource.read'
  | 'trail.repaired';

/** `policy.audit`. */
export type AuditConfig = {
  /** JSON Lines file the events are appended to (relative to the working directory); `<PREFIX>_AUDIT_FILE` overrides. */
  readonly file?: string;
  /** Also (or only) write each event as one line to stderr. */
  readonly stderr?: boolean;
  /** Field names whose values are replaced by `"[redacted]"` at any depth of the arguments (case-insensitive); secrets always are. */
  readonly redact?: readonly string[];
  /** `fail` (default): a call whose `tool.invoked` event cannot be written is refused (-32603) before it runs; `continue`: it goes on, the failure is logged. A terminal event that cannot be written is logged, never an error for a call that ran. */
  readonly onWriteError?: 'fail' | 'continue';
  /** Each line carries the SHA-256 of the previous line (`prev`), so an edit breaks the chain (`verify-audit` finds it). */
  readonly chain?: boolean;
};

/** One access rule, resolved: the primitives it matches, by kind. */
export type AccessRule = {
  /** Client identities the rule applies to; `*` matches every identity. */
  readonly clients: readonly string[];
  /** OAuth scopes the request's access token must all carry for the rule to apply; absent ⇒ any request of the clients. */
  readonly scopes?: readonly string[];
  /** Claims the request's access token must have with these values (a list claim: holding the value); absent ⇒ any request of the clients. */
  readonly claims?: Readonly<Record<string, string | number | boolean>>;
  readonly effect: 'allow' | 'deny';
  /** Tool names matched. */
  readonly tools: readonly string[];
  /** Prompt names matched. */
  readonly prompts: readonly string[];
  /** Resource URIs matched. */
  readonly resources: readonly string[];
  /** Resource URI templates matched. */
  readonly resourceTemplates: readonly string[];
  /** Where the rule is in the manifest (`policy.access.rules[2]`), for messages and audit events. */
  readonly source: string;
  /** `entry: custom`: the selector as written, for the primitives registered at run time (runtime/policy/registered-policy.ts); absent when it tests tags (which they have none of). */
  readonly atRunTime?: RuntimeSelector;
};

/** An access selector the server matches against primitives registered at run time. */
export type RuntimeSelector = {
  readonly kinds?: readonly ('tools' | 'prompts' | 'resources' | 'resourceTemplates')[];
  /** Exact names or globs: `*` does not cross `/`, `**` does, `?` is one character; braces are literal. */
  readonly names?: readonly string[];
  readonly concerns?: Readonly<Record<string, readonly string[]>>;
  readonly annotations?: Readonly<Record<string, boolean>>;
};

/** `policy.access`. A primitive is allowed for a client when an allow rule matches it and no deny rule does; `default` decides when no rule matches. */
export type AccessConfig = {
  readonly default: 'allow' | 'deny';
  readonly rules: readonly AccessRule[];
};

/** Limits of one tool (all optional). */
export type ToolLimits = {
  /** Bound on the whole logical call (gate, sampling rounds and the upstream request included), ms. */
  readonly timeoutMs?: number;
  /** Most calls of the tool running at once (over all clients of this instance). */
  readonly maxConcurrent?: number;
  /** Most calls started per minute, per client identity and over all clients (sliding 60 s window). */
  readonly perMinute?: { readonly perClient?: number; readonly overall?: number };
  /** Largest response body passed back for this tool (bytes); the lower of this and the server's setting wins. */
  readonly maxResponseBytes?: number;
};

/** `policy.limits`, resolved: per-tool entries first (first match wins), then the default. */
export type LimitsConfig = {
  readonly default?: ToolLimits;
  readonly tools: readonly {
    readonly tools: readonly string[];
    readonly limits: ToolLimits;
    readonly source: string /** `entry: custom`: the key as written, matched against tools registered at run time. */;
    readonly pattern?: string;
  }[];
};

/** `policy`. */
export type PolicyConfig = {
  readonly audit?: AuditConfig;
  readonly access?: AccessConfig;
  readonly limits?: LimitsConfig;
};

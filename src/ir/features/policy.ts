/**
 * The policy layer (manifest `policy`) → IR: the audit settings as given, access rules
 * resolved to the exact primitives they match, and limits resolved to tool names.
 *
 * Matching runs here, at build time, over the primitives the server really serves: operation
 * tools by final name (after include/exclude and renames), extra tools, `persist_justification`
 * when the reflection gate has a host flow, prompts (the manifest's, the gate prompts,
 * `with_context`), resources by URI and resource templates by URI template. The runtime then only
 * does set logic per client identity (templates/runtime/policy/policy-types.ts is the contract).
 *
 * A selector's conditions are ANDed; a list inside one condition is ORed:
 * - `names`: exact names or picomatch globs (URIs for resources and templates; braces literal);
 * - `tags`: OpenAPI tags of operation tools (nothing else has tags);
 * - `concerns`: the primitive's `concernMappings` entry for the concern lists one of the values.
 *   Unlike concern filtering, a primitive with no mapping for the concern does NOT match: access
 *   control fails closed. Gate prompts follow their gated tools' mappings;
 * - `annotations`: the tool's hint equals the boolean; an absent hint takes its MCP default
 *   (see {@link effectiveAnnotations}); prompts and resources never match;
 * - `kinds`: restricts the selector to those kinds.
 */
import picomatch from 'picomatch';
import { PERSIST_TOOL } from '../../../templates/runtime/core/surface.js';
import type { AccessConfig, AccessRule, LimitsConfig, ToolLimits } from '../../../templates/runtime/policy/policy-types.js';
import { type Diagnostics, escapePointerToken, type Location } from '../../core/diagnostics.js';
import { suggest } from '../../core/suggest.js';
import type { ToolLimits as ManifestToolLimits, Policy, PolicySelector } from '../../manifest/types.gen.js';
import { type ExcludedReferences, entryLabel } from '../tools/excluded.js';
import type { IrPolicy, IrPrimitiveKind, IrServer, ToolAnnotations } from '../types.js';
import { WITH_CONTEXT_PROMPT } from './preprocessors.js';
import { PERSIST_TOOL_NAME } from './reflection.js';

/** The kinds of primitive access rules match, in the order of {@link AccessRule}'s fields. */
export const POLICY_KINDS: readonly IrPrimitiveKind[] = ['tools', 'prompts', 'resources', 'resourceTemplates'];

/** The boolean tool annotations an access rule may test. */
export const POLICY_ANNOTATIONS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
type HintName = (typeof POLICY_ANNOTATIONS)[number];

/** A client identity: what `name=token` and `<PREFIX>_CLIENT` accept (templates/runtime/process/settings.ts), or `*`. */
const IDENTITY = /^[A-Za-z0-9._@-]{1,128}$/;

/** One primitive the server serves, as access rules see it. */
export type PolicyPrimitive = {
  kind: IrPrimitiveKind;
  /** Tool or prompt name, resource URI, resource template URI template. */
  id: string;
  /** OpenAPI tags (operation tools only). */
  tags: readonly string[];
  /** Tool annotations (tools only). */
  annotations?: ToolAnnotations;
  /** Concern ⇒ values the primitive is mapped to (absent concern: no mapping). */
  concerns: Readonly<Record<string, readonly string[]>>;
};

/** Inputs of {@link buildPolicy}. */
export type PolicyInput = {
  /** `policy` as written. */
  policy: Policy;
  /** The server as built so far: its primitives and concerns. */
  server: Pick<
    IrServer,
    'tools' | 'apiOperations' | 'extraTools' | 'prompts' | 'resources' | 'resourceTemplates' | 'concerns' | 'reflection' | 'preprocessors' | 'entry'
  >;
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
  /** Collects `policy.limits.tools` keys that are the exact name of a left-out operation's tool (not warned about one by one). */
  excluded?: ExcludedReferences;
};

/**
 * The MCP meaning of a tool's hints with the absent ones filled in: `readOnlyHint` false,
 * `openWorldHint` true; `destructiveHint` true and `idempotentHint` false for a tool that is not
 * read-only (the spec's defaults), false and true for a read-only one (they only mean something
 * for tools that modify their environment, and a read-only tool neither destroys nor repeats).
 */
export function effectiveAnnotations(a: ToolAnnotations): Record<HintName, boolean> {
  const readOnly = a.readOnlyHint ?? false;
  return {
    readOnlyHint: readOnly,
    destructiveHint: a.destructiveHint ?? !readOnly,
    idempotentHint: a.idempotentHint ?? readOnly,
    openWorldHint: a.openWorldHint ?? true,
  };
}

/** Every primitive the server serves, per kind, in list order. */
export function policyPrimitives(server: PolicyInput['server']): PolicyPrimitive[] {
  const mappings = server.concerns?.mappings ?? {};
  const mapped = (kind: IrPrimitiveKind, id: string): Record<string, string[]> => {
    const entry = mappings[kind]?.[id] ?? {};
    return Object.fromEntries(Object.entries(entry).map(([c, v]) => [c, Array.isArray(v) ? [...v] : [v]]));
  };
  const out: PolicyPrimitive[] = [];
  for (const t of server.tools) out.push({ kind: 'tools', id: t.name, tags: t.tags, annotations: t.annotations, concerns: mapped('tools', t.name) });
  for (const t of server.extraTools) out.push({ kind: 'tools', id: t.name, tags: [], annotations: t.annotations, concerns: mapped('tools', t.name) });
  const r = server.reflection;
  if (r !== undefined && r.mode !== 'sampling')
    out.push({ kind: 'tools', id: PERSIST_TOOL_NAME, tags: [], annotations: { ...PERSIST_TOOL.annotations }, concerns: mapped('tools', PERSIST_TOOL_NAME) });
  for (const p of server.prompts) out.push({ kind: 'prompts', id: p.name, tags: [], concerns: mapped('prompts', p.name) });
  // gate prompts follow their gated tools: the union of those tools' mappings
  const gatePrompts = new Map<string, string[]>();
  for (const [tool, gates] of Object.entries(r?.gates ?? {})) for (const g of gates) gatePrompts.set(g.prompt, [...(gatePrompts.get(g.prompt) ?? []), tool]);
  for (const [prompt, tools] of gatePrompts) {
    if (server.prompts.some((p) => p.name === prompt)) continue;
    const concerns: Record<string, string[]> = {};
    for (const tool of tools) for (const [c, values] of Object.entries(mapped('tools', tool))) concerns[c] = [...new Set([...(concerns[c] ?? []), ...values])];
    out.push({ kind: 'prompts', id: prompt, tags: [], concerns });
  }
  if (server.preprocessors.length > 0) out.push({ kind: 'prompts', id: WITH_CONTEXT_PROMPT, tags: [], concerns: mapped('prompts', WITH_CONTEXT_PROMPT) });
  for (const res of server.resources) out.push({ kind: 'resources', id: res.uri, tags: [], concerns: mapped('resources', res.uri) });
  for (const t of server.resourceTemplates)
    out.push({ kind: 'resourceTemplates', id: t.uriTemplate, tags: [], concerns: mapped('resourceTemplates', t.uriTemplate) });
  return out;
}

/** A name glob: an exact name, or a picomatch glob (braces literal, as in URI templates). */
function nameMatcher(glob: string): (id: string) => boolean {
  const m = picomatch(glob, { nobrace: true, dot: true });
  return (id) => id === glob || m(id);
}

const list = (v: string | string[] | undefined): string[] | undefined => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);
const sortedUnique = (values: Iterable<string>): string[] => [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const KIND_LABEL: Record<IrPrimitiveKind, string> = { tools: 'tool', prompts: 'prompt', resources: 'resource', resourceTemplates: 'resource template' };

/** Resolves `policy`; problems go to `diagnostics` (the resolved policy is still returned). */
export function buildPolicy(input: PolicyInput): IrPolicy {
  const { policy, diagnostics, locateManifest } = input;
  const out: { -readonly [K in keyof IrPolicy]: IrPolicy[K] } = {};
  if (policy.audit !== undefined) {
    const a = policy.audit;
    if (a.file === undefined && a.stderr !== true) {
      diagnostics.error(
        'MCPGEN_POLICY_AUDIT_NO_SINK',
        '`policy.audit` writes events nowhere: it has no `file` and `stderr` is not true',
        'set `file: audit/mcp.jsonl` (a JSON Lines file), `stderr: true`, or both',
        locateManifest('/policy/audit'),
      );
    }
    if (a.chain === true && a.file === undefined) {
      diagnostics.error(
        'MCPGEN_POLICY_AUDIT_CHAIN_NO_FILE',
        '`policy.audit.chain` links the lines of the audit file, but `policy.audit` has no `file`',
        'set `file` (a JSON Lines file), or drop `chain`',
        locateManifest('/policy/audit/chain'),
      );
    }
    out.audit = { ...a, ...(a.redact !== undefined ? { redact: [...a.redact] } : {}) };
  }
  const primitives = policyPrimitives(input.server);
  if (policy.access !== undefined) out.access = buildAccess(policy.access, primitives, input);
  if (policy.limits !== undefined) out.limits = buildLimits(policy.limits, primitives, input);
  return out;
}

function buildAccess(access: NonNullable<Policy['access']>, primitives: readonly PolicyPrimitive[], input: PolicyInput): AccessConfig {
  const { diagnostics, locateManifest } = input;
  const dflt = access.default ?? 'allow';
  const rules = access.rules ?? [];
  if (rules.length === 0 && dflt === 'allow') {
    diagnostics.warn(
      'MCPGEN_POLICY_NO_EFFECT',
      '`policy.access` has no rules and `default: allow`: every client may use everything, as without it',
      'add `rules`, set `default: deny`, or remove `policy.access`',
      locateManifest('/policy/access'),
    );
  }
  const resolved: AccessRule[] = [];
  rules.forEach((rule, i) => {
    const at = `/policy/access/rules/${i}`;
    const clients = rule.clients ?? [];
    clients.forEach((c, j) => {
      if (c === '*' || IDENTITY.test(c)) return;
      diagnostics.error(
        'MCPGEN_POLICY_INVALID_CLIENT',
        `client identity ${JSON.stringify(c)} of policy.access.rules[${i}] is not a valid identity`,
        "an identity is 1–128 letters, digits and . _ @ - (as in the HTTP tokens' name=token and <ENV_PREFIX>_CLIENT), or `*` for every client",
        locateManifest(`${at}/clients/${j}`),
      );
    });
    if (rule.allow === undefined && rule.deny === undefined) {
      diagnostics.warn(
        'MCPGEN_POLICY_NO_EFFECT',
        `policy.access.rules[${i}] has neither \`allow\` nor \`deny\`, so it does nothing`,
        'add `allow: {…}` and/or `deny: {…}` to the rule, or remove it',
        locateManifest(at),
      );
      return;
    }
    for (const effect of ['allow', 'deny'] as const) {
      const selector = rule[effect];
      if (selector === undefined) continue;
      const source = `policy.access.rules[${i}].${effect}`;
      const matched = resolveSelector(selector, primitives, { at: `${at}/${effect}`, source, input });
      resolved.push({
        clients: sortedUnique(clients),
        ...(rule.scopes !== undefined ? { scopes: sortedUnique(rule.scopes) } : {}),
        ...(rule.claims !== undefined ? { claims: rule.claims } : {}),
        effect,
        ...matched,
        source,
        ...(input.server.entry === 'custom' ? atRunTime(selector) : {}),
      });
    }
  });
  return { default: dflt, rules: resolved };
}

type Matched = Pick<AccessRule, 'tools' | 'prompts' | 'resources' | 'resourceTemplates'>;

/** `entry: custom`: what of a selector the server tests on primitives registered at run time (nothing when it tests tags: they have none). */
function atRunTime(s: PolicySelector): Pick<AccessRule, 'atRunTime'> {
  if (list(s.tags) !== undefined) return {};
  const names = list(s.names);
  const concerns = Object.entries(s.concerns ?? {}).map(([c, v]): [string, string[]] => [c, typeof v === 'string' ? [v] : [...v]]);
  const annotations = Object.entries(s.annotations ?? {}).filter((e): e is [string, boolean] => typeof e[1] === 'boolean');
  return {
    atRunTime: {
      ...(s.kinds !== undefined ? { kinds: [...s.kinds] } : {}),
      ...(names !== undefined ? { names } : {}),
      ...(concerns.length > 0 ? { concerns: Object.fromEntries(concerns) } : {}),
      ...(annotations.length > 0 ? { annotations: Object.fromEntries(annotations) } : {}),
    },
  };
}

function resolveSelector(s: PolicySelector, primitives: readonly PolicyPrimitive[], ctx: { at: string; source: string; input: PolicyInput }): Matched {
  const { at, source } = ctx;
  const { diagnostics, locateManifest } = ctx.input;
  const kinds = new Set<IrPrimitiveKind>(s.kinds ?? POLICY_KINDS);
  const inScope = primitives.filter((p) => kinds.has(p.kind));
  let warned = false;
  const kindsLabel = s.kinds === undefined ? 'tool, prompt or resource' : [...kinds].map((k) => KIND_LABEL[k]).join(' or ');

  // names: each entry must match something in scope
  const names = list(s.names);
  const nameMatchers = names?.map(nameMatcher);
  names?.forEach((n, j) => {
    if (inScope.some((p) => nameMatchers![j]!(p.id))) return;
    warned = true;
    const near = suggest(
      n,
      inScope.map((p) => p.id),
    );
    diagnostics.warn(
      'MCPGEN_POLICY_UNMATCHED_SELECTOR',
      `${source}: names entry ${JSON.stringify(n)} matches no ${kindsLabel}`,
      near ? `did you mean "${near}"?` : 'names are final tool and prompt names, resource URIs and URI templates; `*` does not cross `/`, `**` does',
      locateManifest(Array.isArray(s.names) ? `${at}/names/${j}` : `${at}/names`),
    );
  });

  // tags: operation tools only
  const tags = list(s.tags);
  const tagged = inScope.filter((p) => p.kind === 'tools');
  const knownTags = sortedUnique(tagged.flatMap((p) => p.tags));
  tags?.forEach((t, j) => {
    if (knownTags.includes(t)) return;
    warned = true;
    const near = suggest(t, knownTags);
    diagnostics.warn(
      'MCPGEN_POLICY_UNMATCHED_SELECTOR',
      `${source}: tag ${JSON.stringify(t)} is on no ${kinds.has('tools') ? 'tool the server serves' : 'primitive of the selected kinds (only operation tools have tags)'}`,
      near ? `did you mean "${near}"?` : `tags of the served tools: ${knownTags.join(', ') || '(none)'}`,
      locateManifest(Array.isArray(s.tags) ? `${at}/tags/${j}` : `${at}/tags`),
    );
  });

  // concerns: declared concerns and values only
  const declarations = new Map((ctx.input.server.concerns?.declarations ?? []).map((d) => [d.name, d.values]));
  const concernConds: Array<[string, string[]]> = [];
  let badCondition = false;
  for (const [concern, raw] of Object.entries(s.concerns ?? {})) {
    const cAt = `${at}/concerns/${escapePointerToken(concern)}`;
    const values = declarations.get(concern);
    if (values === undefined) {
      badCondition = true;
      const declared = [...declarations.keys()];
      const near = suggest(concern, declared);
      diagnostics.error(
        'MCPGEN_POLICY_UNKNOWN_CONCERN',
        `${source}: concern ${JSON.stringify(concern)} is not declared`,
        near
          ? `did you mean "${near}"?`
          : declared.length > 0
            ? `declared concerns: ${declared.join(', ')}`
            : 'declare it under `concerns` and map primitives to it in `concernMappings`',
        locateManifest(cAt, { key: true }),
      );
      continue;
    }
    const wanted = list(raw) ?? [];
    wanted.forEach((v, k) => {
      if (values.includes(v)) return;
      badCondition = true;
      const near = suggest(v, values);
      diagnostics.error(
        'MCPGEN_POLICY_UNKNOWN_CONCERN_VALUE',
        `${source}: ${JSON.stringify(v)} is not a value of concern ${JSON.stringify(concern)}`,
        near ? `did you mean "${near}"?` : `allowed values: ${values.join(', ')}`,
        locateManifest(Array.isArray(raw) ? `${cAt}/${k}` : cAt),
      );
    });
    concernConds.push([concern, wanted]);
  }

  // annotations: the boolean hints only
  const hintConds: Array<[HintName, boolean]> = [];
  for (const [key, value] of Object.entries(s.annotations ?? {})) {
    if ((POLICY_ANNOTATIONS as readonly string[]).includes(key)) {
      hintConds.push([key as HintName, value]);
      continue;
    }
    badCondition = true;
    const near = suggest(key, POLICY_ANNOTATIONS);
    diagnostics.error(
      'MCPGEN_POLICY_UNKNOWN_ANNOTATION',
      `${source}: ${JSON.stringify(key)} is not a tool annotation a rule can test`,
      near ? `did you mean "${near}"?` : `test one of ${POLICY_ANNOTATIONS.join(', ')}`,
      locateManifest(`${at}/annotations/${escapePointerToken(key)}`, { key: true }),
    );
  }

  const matches = (p: PolicyPrimitive): boolean => {
    if (nameMatchers && !nameMatchers.some((m) => m(p.id))) return false;
    if (tags && !(p.kind === 'tools' && p.tags.some((t) => tags.includes(t)))) return false;
    // fail closed: no mapping for the concern ⇒ no match
    for (const [concern, wanted] of concernConds) if (!(p.concerns[concern] ?? []).some((v) => wanted.includes(v))) return false;
    if (hintConds.length > 0) {
      if (p.annotations === undefined) return false;
      const eff = effectiveAnnotations(p.annotations);
      for (const [hint, value] of hintConds) if (eff[hint] !== value) return false;
    }
    return true;
  };
  const hits = inScope.filter(matches);
  if (hits.length === 0 && !warned && !badCondition) {
    diagnostics.warn(
      'MCPGEN_POLICY_UNMATCHED_SELECTOR',
      `${source} matches no ${kindsLabel}: its conditions together hold for none`,
      'loosen the selector; `concerns` only match primitives mapped to that concern in `concernMappings`, and only tools have tags and annotations',
      locateManifest(at),
    );
  }
  const of = (kind: IrPrimitiveKind) => sortedUnique(hits.filter((p) => p.kind === kind).map((p) => p.id));
  return { tools: of('tools'), prompts: of('prompts'), resources: of('resources'), resourceTemplates: of('resourceTemplates') };
}

function toolLimits(l: ManifestToolLimits): ToolLimits {
  const out: { -readonly [K in keyof ToolLimits]: ToolLimits[K] } = {};
  if (l.timeoutMs !== undefined) out.timeoutMs = l.timeoutMs;
  if (l.maxConcurrent !== undefined) out.maxConcurrent = l.maxConcurrent;
  if (l.perMinute !== undefined) {
    const pm: { perClient?: number; overall?: number } = {};
    if (l.perMinute.client !== undefined) pm.perClient = l.perMinute.client;
    if (l.perMinute.overall !== undefined) pm.overall = l.perMinute.overall;
    if (Object.keys(pm).length > 0) out.perMinute = pm;
  }
  if (l.maxResponseBytes !== undefined) out.maxResponseBytes = l.maxResponseBytes;
  return out;
}

/** `entry` over `base`: fields the entry leaves out (per-minute ones included) come from the default. */
function mergeLimits(base: ToolLimits | undefined, entry: ToolLimits): ToolLimits {
  if (base === undefined) return entry;
  const perMinute = base.perMinute !== undefined || entry.perMinute !== undefined ? { ...base.perMinute, ...entry.perMinute } : undefined;
  return { ...base, ...entry, ...(perMinute !== undefined ? { perMinute } : {}) };
}

function buildLimits(limits: NonNullable<Policy['limits']>, primitives: readonly PolicyPrimitive[], input: PolicyInput): LimitsConfig {
  const { diagnostics, locateManifest } = input;
  // the operations extra tools call through ctx.api without being tools are limited too (their nested calls)
  const toolNames = [...primitives.filter((p) => p.kind === 'tools').map((p) => p.id), ...(input.server.apiOperations ?? []).map((t) => t.name)];
  const dflt = limits.default !== undefined ? toolLimits(limits.default) : undefined;
  const entries: Array<LimitsConfig['tools'][number]> = [];
  for (const [key, value] of Object.entries(limits.tools ?? {})) {
    const at = `/policy/limits/tools/${escapePointerToken(key)}`;
    const m = nameMatcher(key);
    const tools = sortedUnique(toolNames.filter(m));
    if (tools.length === 0 && input.excluded?.toolNames.has(key)) {
      input.excluded.add(at, entryLabel('policy.limits.tools', key));
      continue;
    }
    // entry: custom ⇒ the key is matched again against the tools registered at run time
    const pattern = input.server.entry === 'custom' ? { pattern: key } : {};
    if (tools.length === 0 && input.server.entry === 'custom') {
      entries.push({ tools, limits: mergeLimits(dflt, toolLimits(value)), source: `policy.limits.tools[${JSON.stringify(key)}]`, ...pattern });
      continue;
    }
    if (tools.length === 0) {
      const near = suggest(key, toolNames);
      diagnostics.warn(
        'MCPGEN_POLICY_UNMATCHED_LIMIT',
        `policy.limits.tools ${JSON.stringify(key)} matches no tool`,
        near ? `did you mean "${near}"?` : 'key limits by final tool name or a glob over tool names, e.g. `delete*`',
        locateManifest(at, { key: true }),
      );
      continue;
    }
    entries.push({ tools, limits: mergeLimits(dflt, toolLimits(value)), source: `policy.limits.tools[${JSON.stringify(key)}]`, ...pattern });
  }
  return { ...(dflt !== undefined ? { default: dflt } : {}), tools: entries };
}

/**
 * The policy of a server with primitives registered at run time (`entry: custom`): the compiler
 * resolved each access rule and limit to the names it matched at build time, which registered
 * primitives cannot be among; it also kept each rule's selector as written (`atRunTime`) and each
 * limit's key (`pattern`), which {@link withRegistered} matches here against what was registered,
 * adding the matches to the rule's (limit's) names. Rules and limits then work as for the
 * manifest's primitives: a tag never matches (registered tools have none), concerns fail closed,
 * absent annotations take their MCP defaults.
 *
 * This file is copied verbatim into every generated project whose manifest says `entry: custom` and declares a policy.
 */

import type { PrimitiveKind } from '../core/primitive-gate.js';
import type { AccessRule, PolicyConfig, RuntimeSelector } from './policy-types.js';

/** A primitive registered at run time, as rules see it. */
export type RegisteredPrimitive = {
  readonly kind: PrimitiveKind;
  /** Tool or prompt name, resource URI, resource template URI template. */
  readonly id: string;
  readonly concerns?: Readonly<Record<string, string | readonly string[]>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
};

/** A name glob as the compiler reads it: `**` any run of characters, `*` any run without `/`, `?` one character other than `/`; the rest literal. */
export function globMatcher(glob: string): (name: string) => boolean {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  const compiled = new RegExp(`^${re}$`, 's');
  return (name) => compiled.test(name);
}

/** A tool's hints as clients read them (the compiler's `effectiveAnnotations`). */
function effective(a: Readonly<Record<string, unknown>>): Record<string, boolean> {
  const readOnly = a.readOnlyHint === true;
  const hint = (key: string, dflt: boolean): boolean => (typeof a[key] === 'boolean' ? (a[key] as boolean) : dflt);
  return {
    readOnlyHint: readOnly,
    destructiveHint: hint('destructiveHint', !readOnly),
    idempotentHint: hint('idempotentHint', readOnly),
    openWorldHint: hint('openWorldHint', true),
  };
}

/** Whether `selector` matches `p`: every condition it gives holds. */
export function selects(selector: RuntimeSelector, p: RegisteredPrimitive): boolean {
  if (selector.kinds !== undefined && !selector.kinds.includes(p.kind)) return false;
  if (selector.names !== undefined && !selector.names.some((n) => globMatcher(n)(p.id))) return false;
  for (const [concern, wanted] of Object.entries(selector.concerns ?? {})) {
    const mapped = p.concerns?.[concern];
    const values = mapped === undefined ? [] : typeof mapped === 'string' ? [mapped] : mapped;
    if (!values.some((v) => wanted.includes(v))) return false;
  }
  const annotations = Object.entries(selector.annotations ?? {});
  if (annotations.length > 0) {
    if (p.kind !== 'tools') return false;
    const eff = effective(p.annotations ?? {});
    if (annotations.some(([k, v]) => eff[k] !== v)) return false;
  }
  return true;
}

/** `config` with the registered primitives added to the rules and limits that select them. */
export function withRegistered(config: PolicyConfig, registered: readonly RegisteredPrimitive[]): PolicyConfig {
  if (registered.length === 0) return config;
  const add = (rule: AccessRule): AccessRule => {
    const selector = rule.atRunTime;
    if (selector === undefined) return rule;
    const out = { ...rule, tools: [...rule.tools], prompts: [...rule.prompts], resources: [...rule.resources], resourceTemplates: [...rule.resourceTemplates] };
    for (const p of registered) if (selects(selector, p)) out[p.kind].push(p.id);
    return out;
  };
  const tools = registered.filter((p) => p.kind === 'tools').map((p) => p.id);
  return {
    ...config,
    ...(config.access !== undefined ? { access: { ...config.access, rules: config.access.rules.map(add) } } : {}),
    ...(config.limits !== undefined
      ? {
          limits: {
            ...config.limits,
            tools: config.limits.tools.map((e) => (e.pattern === undefined ? e : { ...e, tools: [...e.tools, ...tools.filter(globMatcher(e.pattern))] })),
          },
        }
      : {}),
  };
}

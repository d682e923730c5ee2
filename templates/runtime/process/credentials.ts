/**
 * The start-up check of credentials, as the OpenAPI document means its security requirements:
 * a tool's alternatives are "one of" (`security: [{a: []}, {b: []}]` — a OR b), the schemes of
 * one alternative are all needed (`[{a: [], b: []}]` — a AND b). A tool lacks credentials only
 * when NONE of its alternatives has all its variables set; a tool with an empty alternative
 * (authentication optional) never does. This is the rule `Authenticator.select` applies to each
 * call, so the warning at start names exactly the tools that would be refused.
 *
 * Over HTTP a scheme with `fromClient` takes its credential from each MCP request: it is never
 * missing at start. Only variable NAMES appear here, never values.
 */
import type { SecurityRequirements, SecurityScheme } from '../core/types.js';
import { schemeVariables } from './variables.js';

/** One alternative that cannot be used: its schemes and the variables of theirs that are not set. */
export type UnmetAlternative = {
  readonly schemes: readonly string[];
  /** Variables to set; empty when a scheme is not configured in this server (nothing can satisfy it). */
  readonly variables: readonly string[];
};

/** Tools that share the same requirements, none of whose alternatives is satisfied. */
export type UnmetRequirement = {
  readonly alternatives: readonly UnmetAlternative[];
  /** Names of the tools, in the order given. */
  readonly tools: readonly string[];
};

/** A tool as far as credentials go. */
export type RequiringTool = { readonly name: string; readonly security?: SecurityRequirements };

/** Whether a variable is set (blank counts as unset, as when a call reads it). */
function isSet(env: NodeJS.ProcessEnv, name: string): boolean {
  const v = env[name];
  return v !== undefined && v.trim() !== '';
}

/**
 * The tools whose credentials are not set, grouped by their requirements (in order of first
 * appearance), each group with what every alternative misses. Empty when every tool can call.
 */
export function unmetRequirements(
  tools: readonly RequiringTool[],
  schemes: readonly SecurityScheme[],
  env: NodeJS.ProcessEnv,
  options: { transport?: 'stdio' | 'http' } = {},
): UnmetRequirement[] {
  const byName = new Map(schemes.map((s) => [s.name, s]));
  const groups = new Map<string, { alternatives: UnmetAlternative[]; tools: string[] }>();
  for (const tool of tools) {
    const requirements = tool.security ?? [];
    if (requirements.length === 0 || requirements.some((a) => a.length === 0)) continue;
    const key = JSON.stringify(requirements);
    const known = groups.get(key);
    if (known) {
      known.tools.push(tool.name);
      continue;
    }
    const alternatives: UnmetAlternative[] = [];
    let satisfied = false;
    for (const alternative of requirements) {
      const variables: string[] = [];
      let configured = true;
      for (const name of alternative) {
        const scheme = byName.get(name);
        if (scheme === undefined) configured = false;
        else if (options.transport === 'http' && scheme.kind !== 'oauth2ClientCredentials' && scheme.fromClient !== undefined) continue;
        else for (const v of schemeVariables(scheme)) if (!isSet(env, v) && !variables.includes(v)) variables.push(v);
      }
      if (configured && variables.length === 0) {
        satisfied = true;
        break;
      }
      alternatives.push({ schemes: alternative, variables: configured ? variables : [] });
    }
    // a satisfied group is remembered too, so that its other tools are not checked again
    groups.set(key, { alternatives: satisfied ? [] : alternatives, tools: [tool.name] });
  }
  return [...groups.values()].filter((g) => g.alternatives.length > 0);
}

/** Up to `max` names, then how many more: `a, b, c and 12 more`. */
function someOf(names: readonly string[], max = 3): string {
  if (names.length <= max) return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}` : (names[0] ?? '');
  return `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

/** The start-up warning for one group: what to set (any one alternative), and which tools fail until then. */
export function describeUnmet(u: UnmetRequirement): string {
  const one = (a: UnmetAlternative) => {
    const which = `${a.schemes.length > 1 ? 'schemes' : 'scheme'} ${a.schemes.map((n) => JSON.stringify(n)).join(' + ')}`;
    return a.variables.length > 0 ? `${a.variables.join(' and ')} (${which})` : `${which.replace(/^schemes/, 'scheme')} (not configured in this server)`;
  };
  const tools = `${u.tools.length === 1 ? 'tool' : `${u.tools.length} tools`} ${someOf(u.tools)}`;
  if (u.alternatives.length === 1)
    return `credentials are not set: set ${one(u.alternatives[0]!)}; ${tools} will fail until ${u.alternatives[0]!.variables.length > 1 ? 'they are' : 'it is'}`;
  return `credentials are not set: set one of ${u.alternatives.map(one).join(', or ')}; ${tools} will fail until one of them is`;
}

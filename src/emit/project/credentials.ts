/**
 * Which credentials the generated project asks for, as the spec means its security
 * requirements: a tool's alternatives (`security: [{a: []}, {b: []}]`) are "one of", the schemes
 * of one alternative (`[{a: [], b: []}]`) are all needed.
 *
 * The rule (documented in docs/generated-server.md): for each group of tools with the same
 * alternatives, the ASKED alternative is one already asked for another group if there is one,
 * else the first the spec lists that the server performs itself (no static-token fallback for a
 * flow it cannot perform), else the first. Client snippets and the MCP Bundle ask for the
 * variables of the asked alternatives only; `.env.example` leaves them active and comments out
 * the others, and the README names every alternative. A tool with an empty alternative
 * (authentication optional) still counts: its non-empty alternatives are offered the same way.
 */

import { schemeVariables } from '../../../templates/runtime/process/variables.js';
import type { IrSecurityScheme, IrServer } from '../../ir/types.js';

/** One way to satisfy a group: its schemes and their variables. */
export type CredentialAlternative = { schemes: string[]; variables: string[] };

/** Tools with the same security alternatives, and which of them is asked for. */
export type CredentialChoice = {
  tools: string[];
  alternatives: CredentialAlternative[];
  /** Index in `alternatives` of the one asked for. */
  asked: number;
  /** Whether the tools also run without credentials. */
  optional: boolean;
};

/** What {@link credentialPlan} decides. */
export type CredentialPlan = {
  /** Groups with more than one alternative, in order of first tool. */
  choices: CredentialChoice[];
  /** Credential variables asked for (every credential variable not only in an alternative that is not asked). */
  asked: Set<string>;
  /** Credential variables that are an alternative to asked ones: documented, not asked. */
  alternativeOnly: Set<string>;
};

/** Decides which credentials a project asks for; see the module comment for the rule. */
export function credentialPlan(ir: IrServer): CredentialPlan {
  const schemes = new Map<string, IrSecurityScheme>(ir.securitySchemes.map((s) => [s.name, s]));
  const vars = (names: readonly string[]) => [...new Set(names.flatMap((n) => (schemes.has(n) ? schemeVariables(schemes.get(n)!) : [])))];
  const groups = new Map<string, { tools: string[]; alternatives: string[][]; optional: boolean }>();
  for (const t of ir.tools) {
    const alternatives = t.security.filter((a) => a.length > 0);
    if (alternatives.length === 0) continue;
    const key = JSON.stringify(alternatives);
    const g = groups.get(key);
    if (g) g.tools.push(t.name);
    else groups.set(key, { tools: [t.name], alternatives, optional: t.security.some((a) => a.length === 0) });
  }
  const askedSchemes = new Set<string>();
  const choices: CredentialChoice[] = [];
  const all = [...groups.values()];
  // single-alternative groups first: their schemes are needed anyway, and may satisfy a choice
  for (const g of all) if (g.alternatives.length === 1) for (const n of g.alternatives[0]!) askedSchemes.add(n);
  for (const g of all) {
    if (g.alternatives.length === 1) continue;
    const covered = g.alternatives.findIndex((a) => a.every((n) => askedSchemes.has(n)));
    const native = g.alternatives.findIndex((a) => a.every((n) => schemes.get(n)?.fallbackFrom === undefined));
    const asked = covered !== -1 ? covered : native !== -1 ? native : 0;
    for (const n of g.alternatives[asked]!) askedSchemes.add(n);
    choices.push({ tools: g.tools, alternatives: g.alternatives.map((a) => ({ schemes: a, variables: vars(a) })), asked, optional: g.optional });
  }
  const asked = new Set(vars([...askedSchemes]));
  const alternativeOnly = new Set(vars(ir.securitySchemes.map((s) => s.name)).filter((v) => !asked.has(v)));
  return { choices, asked, alternativeOnly };
}

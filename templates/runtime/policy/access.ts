/**
 * Access control (manifest `policy.access`): which client identities may list and use which
 * tools, prompts, resources and resource templates.
 *
 * The compiler resolves every rule to the exact names it matches (by name, glob, tag, concern
 * value or annotation, failing closed where a primitive has no mapping), so this module does set
 * logic only: the rules whose `clients` name the identity (or `*`) apply — a rule with `scopes` or
 * `claims` only to requests whose OAuth access token carries them; a primitive any applicable
 * deny rule matches is denied (deny wins); else one an applicable allow rule matches is allowed;
 * else `default` decides.
 *
 * A denied primitive is absent from the client's lists ({@link accessGate}) and calling, getting or
 * reading it is a JSON-RPC invalid-params error (-32602), the same code as an unknown name: for that
 * client the primitive does not exist. The message says that the server's access policy decided.
 *
 * This file is copied verbatim into every generated project with `policy.access`.
 */

import type { AuthInfo, ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { PrimitiveGate, PrimitiveKind } from '../core/primitive-gate.js';
import type { Step } from '../pipeline/pipeline.js';
import { refuse } from '../pipeline/pipeline.js';
import type { AccessConfig, AccessRule } from './policy-types.js';

/** One rule with its name sets ready for lookups. */
type CompiledRule = {
  readonly rule: AccessRule;
  /** Whether the rule also asks for token scopes or claims (then it applies to OAuth access tokens only). */
  readonly conditional: boolean;
  readonly everyone: boolean;
  readonly clients: ReadonlySet<string>;
  readonly names: Readonly<Record<PrimitiveKind, ReadonlySet<string>>>;
};

/** The outcome of a lookup: allowed or not, and what decided. */
export type AccessDecision = {
  readonly allowed: boolean;
  /** The rule that decided, or `undefined` when `default` did. */
  readonly rule?: AccessRule;
};

/** Label of a primitive kind at the start of a message. */
const LABEL: Record<PrimitiveKind, string> = { tools: 'Tool', prompts: 'Prompt', resources: 'Resource', resourceTemplates: 'Resource template' };

/** Decides, per client identity, which primitives it may see and use. */
export class AccessControl {
  readonly #default: 'allow' | 'deny';
  readonly #rules: readonly CompiledRule[];
  /** The rules applying to each identity seen so far (identities are few: one per HTTP token). */
  readonly #applicable = new Map<string, readonly CompiledRule[]>();

  constructor(config: AccessConfig) {
    this.#default = config.default;
    this.#rules = config.rules.map((rule) => ({
      rule,
      conditional: rule.scopes !== undefined || rule.claims !== undefined,
      everyone: rule.clients.includes('*'),
      clients: new Set(rule.clients),
      names: {
        tools: new Set(rule.tools),
        prompts: new Set(rule.prompts),
        resources: new Set(rule.resources),
        resourceTemplates: new Set(rule.resourceTemplates),
      },
    }));
  }

  /** The rules that apply to `identity`, in manifest order. */
  #rulesOf(identity: string): readonly CompiledRule[] {
    let rules = this.#applicable.get(identity);
    if (rules === undefined) {
      rules = this.#rules.filter((r) => r.everyone || r.clients.has(identity));
      // identities come from configured tokens, but never let an unbounded stream of names grow the cache
      if (this.#applicable.size >= 1024) this.#applicable.clear();
      this.#applicable.set(identity, rules);
    }
    return rules;
  }

  /** Whether `identity` (with the request's OAuth `token`, if any) may use the primitive, and which rule (or the default) decided. */
  decide(identity: string, kind: PrimitiveKind, id: string, token?: TokenFacts): AccessDecision {
    const rules = this.#rulesOf(identity).filter((r) => !r.conditional || tokenMatches(r.rule, token));
    const deny = rules.find((r) => r.rule.effect === 'deny' && r.names[kind].has(id));
    if (deny) return { allowed: false, rule: deny.rule };
    const allow = rules.find((r) => r.rule.effect === 'allow' && r.names[kind].has(id));
    if (allow) return { allowed: true, rule: allow.rule };
    return { allowed: this.#default === 'allow' };
  }

  /** Whether `identity` may see and use the primitive `id` of `kind`. */
  allows(identity: string, kind: PrimitiveKind, id: string, token?: TokenFacts): boolean {
    return this.decide(identity, kind, id, token).allowed;
  }

  /** What decided, for messages and audit events: `policy.access.rules[2] (deny)` or `policy.access.default (deny)`. */
  why(identity: string, kind: PrimitiveKind, id: string, token?: TokenFacts): string {
    const { allowed, rule } = this.decide(identity, kind, id, token);
    // the compiler's sources already end with the effect (`policy.access.rules[2].deny`)
    if (rule) return rule.source.endsWith(`.${rule.effect}`) ? rule.source : `${rule.source} (${rule.effect})`;
    return `policy.access.default (${allowed ? 'allow' : 'deny'})`;
  }

  /** The message refusing `identity` the primitive: names it, the client, and the deciding rule. */
  refusal(identity: string, kind: PrimitiveKind, id: string, token?: TokenFacts): string {
    // the deciding rule or default, without repeating "deny" (`(policy.access.default)`, `(policy.access.rules[2].deny)`)
    return `${LABEL[kind]} ${id} is not available to client ${JSON.stringify(identity)}: the server's access policy denies it (${this.why(identity, kind, id, token).replace(/ \(deny\)$/, '')})`;
  }
}

/** The refusal of a denied primitive: -32602, like an unknown name. */
function denied(access: AccessControl, identity: string, kind: PrimitiveKind, id: string, token?: TokenFacts): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, access.refusal(identity, kind, id, token), {
    kind,
    id,
    client: identity,
    policy: access.why(identity, kind, id, token),
  });
}

/**
 * Access control as a pipeline step: a tool the call's identity may not use is refused with
 * -32602, the error marked as the refusal ({@link refuse}) for the audit step around it. Checked every round.
 */
export function accessStep(access: AccessControl): Step {
  return (call, next) => {
    // a nested call (an operation a handler calls through ctx.api) is part of the handler's call, which was allowed;
    // one made by code mode's code is checked itself (the code is the model's, not the operator's)
    const token = tokenOf(call.ctx);
    if ((call.parent !== undefined && call.parent.code !== true) || access.allows(call.identity, 'tools', call.name, token)) return next();
    return Promise.reject(
      refuse(denied(access, call.identity, 'tools', call.name, token), { kind: 'denied', reason: access.why(call.identity, 'tools', call.name, token) }),
    );
  };
}

/** What access rules may ask of a request's OAuth access token (oauth-resource.ts sets `extra.iss` and `extra.claims`). */
export type TokenFacts = { readonly scopes: readonly string[]; readonly claims: Readonly<Record<string, unknown>> };

/** The OAuth access token facts of a request; `undefined` for static client tokens and stdio. */
function tokenOf(extra: ServerContext | undefined): TokenFacts | undefined {
  const auth: AuthInfo | undefined = extra?.http?.authInfo;
  if (auth === undefined || typeof auth.extra?.iss !== 'string') return undefined;
  const claims = auth.extra.claims;
  return { scopes: auth.scopes, claims: typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : {} };
}

/** Whether `token` has every scope and claim `rule` asks for (a list claim: holding the value); no token matches nothing. */
function tokenMatches(rule: AccessRule, token: TokenFacts | undefined): boolean {
  if (token === undefined) return false;
  if (rule.scopes !== undefined && !rule.scopes.every((s) => token.scopes.includes(s))) return false;
  for (const [name, value] of Object.entries(rule.claims ?? {})) {
    const claim = Object.hasOwn(token.claims, name) ? token.claims[name] : undefined;
    if (!(claim === value || (Array.isArray(claim) && claim.includes(value)))) return false;
  }
  return true;
}

/** The identity of a request: its HTTP token's client, else `defaultIdentity` (the instance's). */
function identityOf(extra: ServerContext | undefined, defaultIdentity: string): string {
  return extra?.http?.authInfo?.clientId ?? defaultIdentity;
}

/**
 * Access control as a primitive gate: lists show only what the request's identity may use, and
 * getting or reading anything else (prompts/get, resources/read) is -32602.
 */
export function accessGate(access: AccessControl, defaultIdentity: string): PrimitiveGate {
  return {
    visible: (kind, id, extra) => access.allows(identityOf(extra, defaultIdentity), kind, id, tokenOf(extra)),
    assertAllowed: (kind, id, extra) => {
      const identity = identityOf(extra, defaultIdentity);
      if (!access.allows(identity, kind, id, tokenOf(extra))) throw denied(access, identity, kind, id, tokenOf(extra));
    },
    decorate: (_kind, _id, item) => item,
  };
}

export { composeGates } from '../core/primitive-gate.js';

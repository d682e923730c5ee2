import type { ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { PrimitiveGate } from '../../../templates/runtime/core/primitive-gate.js';
import { OPEN_GATE } from '../../../templates/runtime/core/primitive-gate.js';
import type { Outcome, ToolCall } from '../../../templates/runtime/pipeline/pipeline.js';
import { refusalOf, runPipeline } from '../../../templates/runtime/pipeline/pipeline.js';
import { AccessControl, accessGate, accessStep, composeGates } from '../../../templates/runtime/policy/access.js';
import type { AccessConfig, AccessRule } from '../../../templates/runtime/policy/policy-types.js';

/** A rule matching tools only (other kinds empty) unless given. */
function rule(source: string, effect: 'allow' | 'deny', clients: string[], tools: string[], more: Partial<AccessRule> = {}): AccessRule {
  return { source, effect, clients, tools, prompts: [], resources: [], resourceTemplates: [], ...more };
}

const config: AccessConfig = {
  default: 'deny',
  rules: [
    rule('policy.access.rules[0]', 'allow', ['*'], ['list_pets', 'get_pet'], { prompts: ['summarise'], resources: ['pets://all'] }),
    rule('policy.access.rules[1]', 'allow', ['admin'], ['list_pets', 'get_pet', 'delete_pet', 'add_pet'], { resourceTemplates: ['pets://{id}'] }),
    rule('policy.access.rules[2]', 'deny', ['guest'], ['get_pet'], { prompts: ['summarise'] }),
    rule('policy.access.rules[3]', 'deny', ['admin'], ['delete_pet']),
  ],
};

/** A call of `name` by `identity`, enough for the access step. */
function call(name: string, identity: string): ToolCall {
  return {
    name,
    identity,
    args: {},
    era: 'modern',
    callId: 'c1',
    firstRound: true,
    state: {},
    signal: new AbortController().signal,
    gate: OPEN_GATE,
  } as unknown as ToolCall;
}
const ok = async (): Promise<Outcome> => ({ result: { content: [{ type: 'text', text: 'ran' }] } });
/** A request context carrying an HTTP token's client id. */
const as = (clientId: string): ServerContext => ({ http: { authInfo: { clientId, token: 't', scopes: [] } } }) as unknown as ServerContext;

describe('AccessControl', () => {
  const access = new AccessControl(config);

  it('allows by an applicable allow rule, `*` applying to every client', () => {
    expect(access.allows('alice', 'tools', 'list_pets')).toBe(true);
    expect(access.why('alice', 'tools', 'list_pets')).toBe('policy.access.rules[0] (allow)');
    expect(access.allows('admin', 'tools', 'add_pet')).toBe(true);
    expect(access.why('admin', 'tools', 'add_pet')).toBe('policy.access.rules[1] (allow)');
  });

  it('falls back to the default when no applicable rule names the primitive', () => {
    expect(access.allows('alice', 'tools', 'add_pet')).toBe(false);
    expect(access.why('alice', 'tools', 'add_pet')).toBe('policy.access.default (deny)');
    const open = new AccessControl({ default: 'allow', rules: config.rules });
    expect(open.allows('alice', 'tools', 'add_pet')).toBe(true);
    expect(open.why('alice', 'tools', 'add_pet')).toBe('policy.access.default (allow)');
    expect(open.allows('guest', 'tools', 'get_pet')).toBe(false);
  });

  it('lets a deny rule win over an allow rule, whatever their order', () => {
    expect(access.allows('guest', 'tools', 'get_pet')).toBe(false);
    expect(access.why('guest', 'tools', 'get_pet')).toBe('policy.access.rules[2] (deny)');
    expect(access.allows('admin', 'tools', 'delete_pet')).toBe(false);
    expect(access.why('admin', 'tools', 'delete_pet')).toBe('policy.access.rules[3] (deny)');
  });

  it('ignores rules of other clients, and keeps the kinds apart', () => {
    expect(access.allows('alice', 'tools', 'delete_pet')).toBe(false);
    expect(access.allows('alice', 'tools', 'get_pet')).toBe(true);
    expect(access.allows('alice', 'prompts', 'summarise')).toBe(true);
    expect(access.allows('guest', 'prompts', 'summarise')).toBe(false);
    expect(access.allows('alice', 'prompts', 'list_pets')).toBe(false);
    expect(access.allows('admin', 'resourceTemplates', 'pets://{id}')).toBe(true);
    expect(access.allows('alice', 'resourceTemplates', 'pets://{id}')).toBe(false);
    expect(access.allows('alice', 'resources', 'pets://all')).toBe(true);
  });

  it('applies a deny rule for `*` to everyone', () => {
    const a = new AccessControl({ default: 'allow', rules: [rule('r0', 'allow', ['admin'], ['wipe']), rule('r1', 'deny', ['*'], ['wipe'])] });
    expect(a.allows('admin', 'tools', 'wipe')).toBe(false);
    expect(a.allows('anyone', 'tools', 'wipe')).toBe(false);
    expect(a.allows('anyone', 'tools', 'other')).toBe(true);
  });
});

describe('accessStep', () => {
  const step = accessStep(new AccessControl(config));

  it('passes an allowed call on', async () => {
    const c = call('list_pets', 'alice');
    const outcome = await runPipeline([step], ok, c);
    expect(outcome).toEqual({ result: { content: [{ type: 'text', text: 'ran' }] } });
    expect(outcome.refusal).toBeUndefined();
  });

  it('refuses a denied call with -32602 naming the tool, the client and the policy, and reports the refusal', async () => {
    const c = call('delete_pet', 'alice');
    let dispatched = false;
    const err = await runPipeline([step], async () => ((dispatched = true), { result: { content: [] } }), c).catch((e: unknown) => e);
    expect(dispatched).toBe(false);
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as ProtocolError).code).toBe(ProtocolErrorCode.InvalidParams);
    expect((err as ProtocolError).message).toContain(
      `Tool delete_pet is not available to client "alice": the server's access policy denies it (policy.access.default)`,
    );
    expect(refusalOf(err)).toEqual({ kind: 'denied', reason: 'policy.access.default (deny)' });
  });

  it('names the deny rule that won', async () => {
    const c = call('get_pet', 'guest');
    const err = await runPipeline([step], ok, c).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/Tool get_pet is not available to client "guest".*policy\.access\.rules\[2\]\)$/);
    expect(refusalOf(err)).toMatchObject({ kind: 'denied' });
  });
});

describe('accessGate', () => {
  const gate = accessGate(new AccessControl(config), 'local');
  const tools = ['list_pets', 'get_pet', 'delete_pet', 'add_pet'];

  it('filters lists per identity, from the HTTP token or the default identity', () => {
    expect(tools.filter((t) => gate.visible('tools', t, as('admin')))).toEqual(['list_pets', 'get_pet', 'add_pet']);
    expect(tools.filter((t) => gate.visible('tools', t, as('guest')))).toEqual(['list_pets']);
    expect(tools.filter((t) => gate.visible('tools', t, undefined))).toEqual(['list_pets', 'get_pet']);
    const adminByDefault = accessGate(new AccessControl(config), 'admin');
    expect(tools.filter((t) => adminByDefault.visible('tools', t))).toEqual(['list_pets', 'get_pet', 'add_pet']);
  });

  it('refuses prompts/get and resources/read of a denied primitive with -32602', () => {
    expect(() => gate.assertAllowed('prompts', 'summarise', as('alice'))).not.toThrow();
    const err = (() => {
      try {
        gate.assertAllowed('prompts', 'summarise', as('guest'));
      } catch (e) {
        return e as ProtocolError;
      }
      return undefined;
    })();
    expect(err?.code).toBe(ProtocolErrorCode.InvalidParams);
    expect(err?.message).toContain(`Prompt summarise is not available to client "guest": the server's access policy denies it (policy.access.rules[2])`);
    expect(() => gate.assertAllowed('resourceTemplates', 'pets://{id}', as('alice'))).toThrow(
      /Resource template pets:\/\/\{id\} is not available to client "alice"/,
    );
    expect(() => gate.assertAllowed('resources', 'pets://all', as('alice'))).not.toThrow();
  });

  it('leaves list entries unchanged', () => {
    const item = { name: 'list_pets' };
    expect(gate.decorate('tools', 'list_pets', item)).toBe(item);
  });
});

describe('composeGates', () => {
  const tagged = (tag: string, hides: string): PrimitiveGate => ({
    visible: (_k, id) => id !== hides,
    assertAllowed: (_k, id) => {
      if (id === hides) throw new Error(`${tag} refuses ${id}`);
    },
    decorate: (_k, _id, item) => ({ ...item, tags: [...((item as { tags?: string[] }).tags ?? []), tag] }),
  });
  const gate = composeGates(tagged('a', 'x'), tagged('b', 'y'));

  it('shows what every gate shows', () => {
    expect(['x', 'y', 'z'].filter((id) => gate.visible('tools', id))).toEqual(['z']);
  });

  it('asks every gate, throwing the first refusal', () => {
    expect(() => gate.assertAllowed('tools', 'x')).toThrow('a refuses x');
    expect(() => gate.assertAllowed('tools', 'y')).toThrow('b refuses y');
    expect(() => gate.assertAllowed('tools', 'z')).not.toThrow();
  });

  it('decorates in order', () => {
    expect(gate.decorate('tools', 'z', { name: 'z' })).toEqual({ name: 'z', tags: ['a', 'b'] });
  });

  it('is the gate itself when there is one', () => {
    expect(composeGates(OPEN_GATE)).toBe(OPEN_GATE);
  });
});

describe('rule sources as the compiler writes them', () => {
  it('names the rule once: a source that ends with its effect gets no second one', () => {
    const access = new AccessControl({
      default: 'allow',
      rules: [{ clients: ['*'], effect: 'deny', tools: ['drop'], prompts: [], resources: [], resourceTemplates: [], source: 'policy.access.rules[0].deny' }],
    });
    expect(access.why('anyone', 'tools', 'drop')).toBe('policy.access.rules[0].deny');
  });
});

describe('rules on OAuth scopes and claims', () => {
  // "only tokens with org=acme may use destructive tools", and a scope that unlocks a tool
  const byToken = new AccessControl({
    default: 'deny',
    rules: [
      rule('policy.access.rules[0].allow', 'allow', ['*'], ['list_pets']),
      rule('policy.access.rules[1].allow', 'allow', ['*'], ['delete_pet'], { claims: { org: 'acme' } }),
      rule('policy.access.rules[2].allow', 'allow', ['*'], ['add_pet'], { scopes: ['pets:write'] }),
      rule('policy.access.rules[3].deny', 'deny', ['*'], ['list_pets'], { claims: { groups: 'suspended' } }),
    ],
  });
  /** A request with an OAuth access token (oauth-resource.ts marks it with extra.iss). */
  const oauth = (clientId: string, scopes: string[], claims: Record<string, unknown>): ServerContext =>
    ({
      http: { authInfo: { clientId, token: 't', scopes, expiresAt: 1, extra: { iss: 'https://as.example.com', sub: clientId, claims } } },
    }) as unknown as ServerContext;
  const gate = accessGate(byToken, 'anonymous');

  it('applies a claims rule to the tokens with that claim value, a list claim when it holds the value', () => {
    expect(gate.visible('tools', 'delete_pet', oauth('u1', [], { org: 'acme' }))).toBe(true);
    expect(gate.visible('tools', 'delete_pet', oauth('u2', [], { org: 'other' }))).toBe(false);
    expect(gate.visible('tools', 'delete_pet', oauth('u3', [], {}))).toBe(false);
    expect(gate.visible('tools', 'list_pets', oauth('u4', [], { groups: ['staff', 'suspended'] }))).toBe(false);
    expect(gate.visible('tools', 'list_pets', oauth('u4', [], { groups: ['staff'] }))).toBe(true);
    expect(() => gate.assertAllowed('tools', 'delete_pet', oauth('u2', [], { org: 'other' }))).toThrow(/policy\.access\.default/);
  });

  it('applies a scopes rule to tokens carrying every scope', () => {
    expect(gate.visible('tools', 'add_pet', oauth('u1', ['pets:read', 'pets:write'], {}))).toBe(true);
    expect(gate.visible('tools', 'add_pet', oauth('u1', ['pets:read'], {}))).toBe(false);
  });

  it('never applies to static client tokens or stdio, whatever their identity', () => {
    expect(gate.visible('tools', 'delete_pet', as('acme'))).toBe(false);
    expect(gate.visible('tools', 'add_pet', undefined)).toBe(false);
    expect(byToken.allows('anyone', 'tools', 'delete_pet')).toBe(false);
  });

  it("the access step decides with the call's token", async () => {
    const step = accessStep(byToken);
    const withToken = (ctx: ServerContext) => ({ ...call('delete_pet', 'u1'), ctx }) as ToolCall;
    await expect(runPipeline([step], ok, withToken(oauth('u1', [], { org: 'acme' })))).resolves.toMatchObject({ result: { content: [{ text: 'ran' }] } });
    await expect(runPipeline([step], ok, withToken(oauth('u1', [], { org: 'evil' })))).rejects.toThrow('Tool delete_pet is not available to client "u1"');
  });
});

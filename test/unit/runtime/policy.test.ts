import type { ServerContext } from '@modelcontextprotocol/server';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { PrimitiveGate } from '../../../templates/runtime/core/primitive-gate.js';
import { OPEN_GATE } from '../../../templates/runtime/core/primitive-gate.js';
import type { ToolCall, ToolResult } from '../../../templates/runtime/pipeline/pipeline.js';
import { runPipeline } from '../../../templates/runtime/pipeline/pipeline.js';
import { composeGates } from '../../../templates/runtime/policy/access.js';
import type { AuditSink } from '../../../templates/runtime/policy/audit-sinks.js';
import { MemoryCounters } from '../../../templates/runtime/policy/counters.js';
import { createPolicy } from '../../../templates/runtime/policy/policy.js';
import type { PolicyConfig } from '../../../templates/runtime/policy/policy-types.js';

/** An audit sink keeping its lines. */
function memorySink(): AuditSink & { events: () => Array<Record<string, unknown>> } {
  const lines: string[] = [];
  return {
    append: async (line) => void lines.push(line),
    close: async () => undefined,
    events: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** A first-round call of `name` by `identity`. */
function call(name: string, identity = 'alice', over: Partial<ToolCall> = {}): ToolCall {
  return {
    name,
    identity,
    args: { q: 'x' },
    era: 'modern',
    ctx: {},
    callId: `c-${Math.random()}`,
    firstRound: true,
    state: {},
    signal: new AbortController().signal,
    gate: OPEN_GATE,
    ...over,
  } as unknown as ToolCall;
}
const nextRound = (c: ToolCall): ToolCall => ({ ...c, firstRound: false });
const ran: ToolResult = { content: [{ type: 'text', text: 'ran' }] };
const ok = async (): Promise<ToolResult> => ran;
const asking = { resultType: 'input_required', inputRequests: {} } as unknown as ToolResult;
const text = (r: ToolResult): string => (r as { content: Array<{ text: string }> }).content[0]?.text ?? '';
const as = (clientId: string): ServerContext => ({ http: { authInfo: { clientId, token: 't', scopes: [] } } }) as unknown as ServerContext;
const rule = (source: string, effect: 'allow' | 'deny', clients: string[], tools: string[]) => ({
  source,
  effect,
  clients,
  tools,
  prompts: [],
  resources: [],
  resourceTemplates: [],
});

const config: PolicyConfig = {
  audit: { chain: true },
  access: {
    default: 'deny',
    rules: [
      rule('policy.access.rules[0]', 'allow', ['*'], ['search', 'read', 'slow']),
      rule('policy.access.rules[1]', 'allow', ['admin'], ['wipe', 'read']),
      rule('policy.access.rules[2]', 'deny', ['guest'], ['read']),
    ],
  },
  limits: {
    default: { perMinute: { perClient: 2, overall: 3 } },
    tools: [{ tools: ['slow'], limits: { maxConcurrent: 1, timeoutMs: 60, maxResponseBytes: 4096 }, source: 'policy.limits.tools[0]' }],
  },
};

function setup(over: Partial<Parameters<typeof createPolicy>[1]> = {}) {
  let t = 5_000_000;
  const sink = memorySink();
  const policy = createPolicy(config, { serverName: 'pets', envPrefix: 'PETS', env: {}, auditSinks: [sink], now: () => t, ...over });
  return { policy, sink, advance: (ms: number) => void (t += ms) };
}

/** Runs `c` through the policy's steps and `dispatch`; resolves with the result, a thrown error is returned. */
async function run(
  steps: ReturnType<typeof setup>['policy']['steps'],
  c: ToolCall,
  dispatch: (c: ToolCall) => Promise<ToolResult> = ok,
): Promise<ToolResult | { code: number; message: string }> {
  return runPipeline(steps, async (inner) => ({ result: await dispatch(inner) }), c).then(
    (outcome) => outcome.result,
    (e: unknown) => e as { code: number; message: string },
  );
}

describe('createPolicy', () => {
  it('puts telemetry, audit, access and limits in that order, and only what is configured', () => {
    expect(setup().policy.steps).toHaveLength(4);
    const bare = createPolicy({}, { serverName: 's', envPrefix: 'S', env: {} });
    expect(bare.steps).toHaveLength(1);
    expect(bare.gate('local')).toBeUndefined();
    expect(bare.audit).toBeUndefined();
    expect(createPolicy({ limits: { tools: [] } }, { serverName: 's', envPrefix: 'S', env: {} }).steps).toHaveLength(2);
  });

  it('records nothing without an audit, and closes', async () => {
    const bare = createPolicy({ access: { default: 'allow', rules: [] } }, { serverName: 's', envPrefix: 'S', env: {} });
    await expect(bare.record({ name: 'prompt.get', client: 'local', era: 'modern', primitive: 'p' })).resolves.toBeUndefined();
    await expect(bare.close()).resolves.toBeUndefined();
  });

  it('records other events through the audit trail', async () => {
    const { policy, sink } = setup();
    await policy.record({ name: 'prompt.get', session: null, client: 'alice', era: 'modern', primitive: 'summarise', outcome: 'ok' });
    expect(sink.events()).toMatchObject([{ event: 'prompt.get', client: 'alice', primitive: 'summarise' }]);
    await policy.close();
  });

  it('serves prompts/get, resources/read and preprocessors/run through the events a tool call is written as: ok with the duration, error with why (hidden), nothing for an input round', async () => {
    const sink = memorySink();
    const options = { serverName: 'pets', envPrefix: 'PETS', env: {}, auditSinks: [sink], secrets: () => ['sk-live-77'] };
    const policy = createPolicy({ audit: { redact: ['pin'] } }, options);
    const prompt = {
      method: 'prompts/get' as const,
      primitive: 'summarise',
      session: 'sess-2',
      client: 'alice',
      era: 'legacy' as const,
      arguments: { topic: 'pets', pin: '4321' },
    };
    const answer = { messages: [] };
    expect(await policy.observe(prompt, async () => answer)).toBe(answer);
    const failure = new Error('no summary of pin 4321 with sk-live-77');
    await expect(policy.observe(prompt, () => Promise.reject(failure))).rejects.toBe(failure);
    const round = { resultType: 'input_required', inputRequests: {} };
    expect(await policy.observe(prompt, async () => round)).toBe(round);
    const resource = { method: 'resources/read' as const, primitive: 'pets://all', session: null, client: 'bob', era: 'modern' as const };
    await policy.observe(resource, async () => ({ contents: [] }));
    await policy.observe({ method: 'preprocessors/run', primitive: 'preprocessors', session: null, client: 'bob', era: 'modern' }, async () => ({}));
    const events = sink.events();
    expect(events.map((e) => e.event)).toEqual(['prompt.get', 'prompt.get', 'resource.read', 'preprocessor.run']);
    expect(events[0]).toMatchObject({
      session: 'sess-2',
      client: 'alice',
      era: 'legacy',
      primitive: 'summarise',
      arguments: { topic: 'pets', pin: '[redacted]' },
      outcome: 'ok',
    });
    expect(typeof events[0]!.durationMs).toBe('number');
    expect(events[0]).not.toHaveProperty('callId');
    expect(events[1]).toMatchObject({ outcome: 'error', detail: 'no summary of pin [redacted] with [redacted]' });
    expect(events[2]).toMatchObject({ session: null, client: 'bob', primitive: 'pets://all', outcome: 'ok' });
    expect(events[2]).not.toHaveProperty('arguments');
    expect(events[3]).toMatchObject({ primitive: 'preprocessors', outcome: 'ok' });
    expect(JSON.stringify(events)).not.toMatch(/4321|sk-live-77/);
    // an event that cannot be written fails the request; a request that failed keeps its own error
    const failing = createPolicy(
      { audit: {} },
      { ...options, auditSinks: [{ append: () => Promise.reject(new Error('disk full')), close: async () => undefined }] },
    );
    await expect(failing.observe(resource, async () => ({ contents: [] }))).rejects.toThrow('disk full');
    await expect(failing.observe(resource, () => Promise.reject(failure))).rejects.toBe(failure);
    // without an audit trail it only serves
    expect(await createPolicy({}, options).observe(resource, async () => answer)).toBe(answer);
  });
});

describe('the policy steps, composed', () => {
  it('refuses a tool denied by name, audited as tool.denied, without dispatching', async () => {
    const { policy, sink } = setup();
    let dispatched = false;
    const err = await run(policy.steps, call('read', 'guest'), async () => ((dispatched = true), ran));
    expect(dispatched).toBe(false);
    expect(err).toMatchObject({ code: ProtocolErrorCode.InvalidParams });
    expect((err as { message: string }).message).toContain(
      `Tool read is not available to client "guest": the server's access policy denies it (policy.access.rules[2])`,
    );
    expect(sink.events().map((e) => e.event)).toEqual(['tool.invoked', 'tool.denied']);
    expect(sink.events()[1]).toMatchObject({ client: 'guest', primitive: 'read', outcome: 'denied', detail: 'policy.access.rules[2] (deny)' });
  });

  it('refuses by the default deny, lets deny win over allow, and applies `*` rules to every client', async () => {
    const { policy } = setup();
    expect(await run(policy.steps, call('wipe', 'alice'))).toMatchObject({
      code: ProtocolErrorCode.InvalidParams,
      message: expect.stringContaining('denies it (policy.access.default)'),
    });
    expect(await run(policy.steps, call('wipe', 'admin'))).toBe(ran);
    // admin and * allow read; guest's deny wins over *'s allow
    expect(await run(policy.steps, call('read', 'admin'))).toBe(ran);
    expect(await run(policy.steps, call('read', 'anyone'))).toBe(ran);
    expect(await run(policy.steps, call('read', 'guest'))).toMatchObject({ code: ProtocolErrorCode.InvalidParams });
  });

  it('filters lists per identity through the gate, composed with another gate', () => {
    const { policy } = setup();
    const concerns: PrimitiveGate = { ...OPEN_GATE, visible: (_k, id) => id !== 'search' };
    const gate = composeGates(concerns, policy.gate('guest')!);
    const tools = ['search', 'read', 'slow', 'wipe'];
    expect(tools.filter((t) => gate.visible('tools', t))).toEqual(['slow']);
    expect(tools.filter((t) => gate.visible('tools', t, as('admin')))).toEqual(['read', 'slow', 'wipe']);
    expect(() => gate.assertAllowed('tools', 'wipe', as('alice'))).toThrow(/not available to client "alice"/);
  });

  it('limits calls per client and overall per minute, audited as tool.limited, with the time to retry', async () => {
    const { policy, sink, advance } = setup();
    expect(await run(policy.steps, call('search'))).toBe(ran);
    advance(20_000);
    expect(await run(policy.steps, call('search'))).toBe(ran);
    const refused = (await run(policy.steps, call('search'))) as ToolResult;
    expect(refused).toMatchObject({ isError: true });
    expect(text(refused)).toBe(
      'Tool search is over its limit of 2 calls per minute for client "alice" (policy.limits.default.perMinute.perClient); retry in 40 s.',
    );
    expect(await run(policy.steps, call('search', 'bob'))).toBe(ran);
    const overall = (await run(policy.steps, call('search', 'carol'))) as ToolResult;
    expect(text(overall)).toBe(
      'Tool search is over its limit of 3 calls per minute over all clients (policy.limits.default.perMinute.overall); retry in 40 s.',
    );
    const events = sink.events();
    expect(events.filter((e) => e.event === 'tool.limited')).toHaveLength(2);
    expect(events.filter((e) => e.event === 'tool.limited')[0]).toMatchObject({ outcome: 'limited', detail: 'perMinute.perClient 2 (policy.limits.default)' });
    // a denied call takes nothing from the rates
    expect(await run(policy.steps, call('wipe', 'dave'))).toMatchObject({ code: ProtocolErrorCode.InvalidParams });
    advance(40_000);
    expect(await run(policy.steps, call('search', 'dave'))).toBe(ran);
  });

  it('counts a logical call once across its input rounds, and audits it once', async () => {
    const { policy, sink } = setup({ counters: new MemoryCounters() });
    const first = call('search');
    expect(await run(policy.steps, first, async () => asking)).toBe(asking);
    expect(await run(policy.steps, nextRound(first), async () => asking)).toBe(asking);
    expect(await run(policy.steps, nextRound(first))).toBe(ran);
    // one of alice's two calls per minute used: one more goes, the next does not
    expect(await run(policy.steps, call('search'))).toBe(ran);
    expect(await run(policy.steps, call('search'))).toMatchObject({ isError: true });
    expect(
      sink
        .events()
        .filter((e) => e.callId === first.callId)
        .map((e) => e.event),
    ).toEqual(['tool.invoked', 'tool.completed']);
  });

  it('refuses a call over maxConcurrent while another runs', async () => {
    const { policy } = setup();
    let open!: () => void;
    const a = run(policy.steps, call('slow', 'bob'), () => new Promise((resolve) => (open = () => resolve(ran))));
    await new Promise((r) => setTimeout(r, 5));
    const refused = (await run(policy.steps, call('slow'))) as ToolResult;
    expect(text(refused)).toBe('Tool slow already has 1 call running, its limit of calls at once (policy.limits.tools[0].maxConcurrent); retry shortly.');
    open();
    expect(await a).toBe(ran);
  });

  it('aborts the dispatch at the timeout and answers limited, audited', async () => {
    const { policy, sink } = setup();
    let signal: AbortSignal | undefined;
    const hanging = (c: ToolCall): Promise<ToolResult> => {
      signal = c.signal;
      return new Promise((_res, reject) => c.signal.addEventListener('abort', () => reject(c.signal.reason)));
    };
    const c = call('slow');
    const result = (await run(policy.steps, c, hanging)) as ToolResult;
    expect(signal?.aborted).toBe(true);
    expect(text(result)).toContain('Tool slow did not finish within 60 ms, its time limit (policy.limits.tools[0].timeoutMs)');
    expect(sink.events().at(-1)).toMatchObject({ event: 'tool.limited', callId: c.callId, detail: 'timeoutMs 60 (policy.limits.tools[0])' });
  });

  it('passes the response-size and time bounds on to the dispatch', async () => {
    const { policy } = setup();
    let bounds: ToolCall['bounds'];
    expect(await run(policy.steps, call('slow'), async (c) => ((bounds = c.bounds), ran))).toBe(ran);
    expect(bounds?.maxResponseBytes).toBe(4096);
    expect(bounds?.timeoutMs).toBeGreaterThan(0);
    expect(bounds?.timeoutMs).toBeLessThanOrEqual(60);
  });
});

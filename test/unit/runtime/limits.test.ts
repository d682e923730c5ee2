import { describe, expect, it } from 'vitest';
import { OPEN_GATE } from '../../../templates/runtime/core/primitive-gate.js';
import type { Outcome, Step, ToolCall, ToolResult } from '../../../templates/runtime/pipeline/pipeline.js';
import { refusalOf, runPipeline } from '../../../templates/runtime/pipeline/pipeline.js';
import { MemoryCounters } from '../../../templates/runtime/policy/counters.js';
import { DEADLINE_STATE_KEY, Limits, limitsStep } from '../../../templates/runtime/policy/limits.js';
import type { LimitsConfig } from '../../../templates/runtime/policy/policy-types.js';

/** A first-round call of `name` by `identity`. */
function call(name: string, identity = 'alice', over: Partial<ToolCall> = {}): ToolCall {
  return {
    name,
    identity,
    args: {},
    era: 'modern',
    callId: `c${Math.random()}`,
    firstRound: true,
    state: {},
    signal: new AbortController().signal,
    gate: OPEN_GATE,
    ...over,
  } as unknown as ToolCall;
}
/** The next round of the same logical call (same id and state). */
const nextRound = (c: ToolCall): ToolCall => ({ ...c, firstRound: false });
/** The outcome of each call {@link run} ran. */
const outcomes = new WeakMap<ToolCall, Outcome>();
/** Runs `c` through `steps` and a dispatch answering with a result; resolves with the result (the outcome is kept: {@link refusal}). */
async function run(steps: Step[], dispatch: (c: ToolCall) => Promise<ToolResult>, c: ToolCall): Promise<ToolResult> {
  const outcome = await runPipeline(steps, async (inner) => ({ result: await dispatch(inner) }), c);
  outcomes.set(c, outcome);
  return outcome.result;
}
/** The refusal the steps returned for `c`. */
const refusal = (c: ToolCall) => outcomes.get(c)?.refusal;
const ran: ToolResult = { content: [{ type: 'text', text: 'ran' }] };
const ok = async (): Promise<ToolResult> => ran;
const text = (r: ToolResult): string => (r as { content: Array<{ text: string }> }).content[0]?.text ?? '';
/** A fake clock. */
function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe('Limits.for', () => {
  const config: LimitsConfig = {
    default: { timeoutMs: 30_000, perMinute: { perClient: 60, overall: 600 }, maxResponseBytes: 1_000_000 },
    tools: [
      { tools: ['search'], limits: { perMinute: { perClient: 5 }, maxConcurrent: 2 }, source: 'policy.limits.tools[0]' },
      { tools: ['search', 'upload'], limits: { timeoutMs: 120_000 }, source: 'policy.limits.tools[1]' },
    ],
  };
  const limits = new Limits(config);

  it('takes the first entry naming the tool, its fields over the default ones (perMinute field by field)', () => {
    expect(limits.for('search')).toEqual({ timeoutMs: 30_000, perMinute: { perClient: 5, overall: 600 }, maxResponseBytes: 1_000_000, maxConcurrent: 2 });
    expect(limits.for('upload')).toEqual({ timeoutMs: 120_000, perMinute: { perClient: 60, overall: 600 }, maxResponseBytes: 1_000_000 });
    expect(limits.resolve('search')?.from).toMatchObject({
      'perMinute.perClient': 'policy.limits.tools[0]',
      'perMinute.overall': 'policy.limits.default',
      timeoutMs: 'policy.limits.default',
    });
  });

  it('is the default for other tools, and undefined without one', () => {
    expect(limits.for('other')).toEqual(config.default);
    const none = new Limits({ tools: [{ tools: ['a'], limits: { maxConcurrent: 1 }, source: 's' }] });
    expect(none.for('b')).toBeUndefined();
    expect(none.for('a')).toEqual({ maxConcurrent: 1 });
  });
});

describe('limitsStep: rates', () => {
  const config: LimitsConfig = { tools: [{ tools: ['search'], limits: { perMinute: { perClient: 2, overall: 3 } }, source: 'policy.limits.tools[0]' }] };

  it('refuses a client over its rate per minute, saying when to retry, while others go on', async () => {
    const t = clock();
    const step = limitsStep(new Limits(config), t.now);
    expect(await run([step], ok, call('search'))).toBe(ran);
    t.advance(10_000);
    expect(await run([step], ok, call('search'))).toBe(ran);
    t.advance(5_000);
    const c = call('search');
    const refused = await run([step], ok, c);
    expect(refused).toMatchObject({ isError: true });
    // the oldest call leaves the window 60 s after it was made: 45 s from now
    expect(text(refused)).toBe(
      'Tool search is over its limit of 2 calls per minute for client "alice" (policy.limits.tools[0].perMinute.perClient); retry in 45 s.',
    );
    expect(refusal(c)).toEqual({ kind: 'limited', reason: 'perMinute.perClient 2 (policy.limits.tools[0])' });
    expect(await run([step], ok, call('search', 'bob'))).toBe(ran);
    // once the window slides past the first call, alice may call again
    t.advance(45_000);
    expect(await run([step], ok, call('search'))).toBe(ran);
  });

  it('refuses every client over the overall rate', async () => {
    const t = clock();
    const step = limitsStep(new Limits(config), t.now);
    for (const who of ['a', 'b', 'c']) expect(await run([step], ok, call('search', who))).toBe(ran);
    t.advance(1_500);
    const refused = await run([step], ok, call('search', 'd'));
    expect(text(refused)).toBe(
      'Tool search is over its limit of 3 calls per minute over all clients (policy.limits.tools[0].perMinute.overall); retry in 59 s.',
    );
    // a tool without limits is not affected
    expect(await run([step], ok, call('other', 'd'))).toBe(ran);
  });

  it('counts a logical call once, however many rounds it takes', async () => {
    const t = clock();
    const step = limitsStep(new Limits({ tools: [{ tools: ['search'], limits: { perMinute: { perClient: 1 } }, source: 's' }] }), t.now);
    const asking: ToolResult = { resultType: 'input_required', inputRequests: {} } as unknown as ToolResult;
    const first = call('search');
    expect(await run([step], async () => asking, first)).toBe(asking);
    // the later rounds of the same call are not counted again
    expect(await run([step], ok, nextRound(first))).toBe(ran);
    expect(await run([step], ok, nextRound(first))).toBe(ran);
    // a new logical call is
    expect(await run([step], ok, call('search'))).toMatchObject({ isError: true });
  });
});

describe('limitsStep: concurrency', () => {
  const config: LimitsConfig = { default: { maxConcurrent: 2 }, tools: [] };

  it('refuses a call when every slot is taken, and frees the slot when a call ends', async () => {
    const step = limitsStep(new Limits(config));
    const gates: Array<() => void> = [];
    const waiting = async (): Promise<ToolResult> => {
      await new Promise<void>((resolve) => gates.push(resolve));
      return ran;
    };
    const a = run([step], waiting, call('slow'));
    const b = run([step], waiting, call('slow', 'bob'));
    const c = call('slow', 'carol');
    const refused = await run([step], waiting, c);
    expect(text(refused)).toBe('Tool slow already has 2 calls running, its limit of calls at once (policy.limits.default.maxConcurrent); retry shortly.');
    expect(refusal(c)).toEqual({ kind: 'limited', reason: 'maxConcurrent 2 (policy.limits.default)' });
    // slots are per tool
    expect(await run([step], ok, call('fast'))).toBe(ran);
    gates.shift()!();
    expect(await a).toBe(ran);
    expect(await run([step], ok, call('slow', 'carol'))).toBe(ran);
    gates.shift()!();
    expect(await b).toBe(ran);
  });

  it('frees the slot when the rest of the pipeline throws', async () => {
    const step = limitsStep(new Limits({ default: { maxConcurrent: 1 }, tools: [] }));
    await expect(run([step], async () => Promise.reject(new Error('boom')), call('t'))).rejects.toThrow('boom');
    expect(await run([step], ok, call('t'))).toBe(ran);
  });

  it('takes nothing from the rate when refused for concurrency', async () => {
    const counters = new MemoryCounters();
    const step = limitsStep(new Limits({ default: { maxConcurrent: 1, perMinute: { perClient: 1 } }, tools: [] }, counters));
    let open!: () => void;
    const a = run([step], () => new Promise<ToolResult>((resolve) => (open = () => resolve(ran))), call('t', 'bob'));
    expect(await run([step], ok, call('t'))).toMatchObject({ isError: true });
    open();
    await a;
    expect(await run([step], ok, call('t'))).toBe(ran);
  });
});

describe('limitsStep: timeout and response size', () => {
  it('aborts the rest of the call at the deadline and answers limited', async () => {
    const step = limitsStep(new Limits({ default: { timeoutMs: 50 }, tools: [] }));
    let seen: ToolCall | undefined;
    const hanging = (c: ToolCall): Promise<ToolResult> => {
      seen = c;
      return new Promise((_resolve, reject) => c.signal.addEventListener('abort', () => reject(c.signal.reason)));
    };
    const c = call('slow');
    const result = await run([step], hanging, c);
    expect(seen!.signal.aborted).toBe(true);
    expect((seen!.signal.reason as Error).name).toBe('TimeoutError');
    expect(seen!.bounds?.timeoutMs).toBeLessThanOrEqual(50);
    expect(text(result)).toBe(
      'Tool slow did not finish within 50 ms, its time limit (policy.limits.default.timeoutMs): the call was cancelled. Retry later, or with a smaller request.',
    );
    expect(refusal(c)).toEqual({ kind: 'limited', reason: 'timeoutMs 50 (policy.limits.default)' });
  });

  it('keeps the upstream status heard before the deadline: the limited outcome carries it (audit line, span)', async () => {
    const step = limitsStep(new Limits({ default: { timeoutMs: 30 }, tools: [] }));
    const told: number[] = [];
    // an outer step listening too: the limits' listener calls the one it replaces
    const outer: Step = (c, next) => next({ ...c, onHttpStatus: (s) => void told.push(s) });
    // the headers arrive (201), the body never does
    const headersOnly = (c: ToolCall): Promise<Outcome> => {
      c.onHttpStatus?.(201);
      return new Promise((_resolve, reject) => c.signal.addEventListener('abort', () => reject(c.signal.reason)));
    };
    const outcome = await runPipeline([outer, step], headersOnly, call('slow'));
    expect(outcome).toMatchObject({ status: 201, refusal: { kind: 'limited', reason: 'timeoutMs 30 (policy.limits.default)' }, result: { isError: true } });
    expect(told).toEqual([201]);
    // no status heard: none in the outcome
    const silent = await runPipeline(
      [step],
      (c) => new Promise((_resolve, reject) => c.signal.addEventListener('abort', () => reject(c.signal.reason))),
      call('slow'),
    );
    expect(silent).not.toHaveProperty('status');
    expect(silent.refusal).toMatchObject({ kind: 'limited' });
  });

  it('answers at the deadline even when the rest ignores the signal, holding the slot until it ends', async () => {
    const step = limitsStep(new Limits({ default: { timeoutMs: 30, maxConcurrent: 1 }, tools: [] }));
    let finish!: () => void;
    const result = await run([step], () => new Promise<ToolResult>((resolve) => (finish = () => resolve(ran))), call('stuck'));
    expect(result).toMatchObject({ isError: true });
    expect(text(result)).toContain('did not finish within 30 ms');
    expect(text(await run([step], ok, call('stuck')))).toContain('already has 1 call running');
    finish();
    await new Promise((r) => setTimeout(r, 0));
    expect(await run([step], ok, call('stuck'))).toBe(ran);
  });

  it('bounds the whole logical call: the deadline set on the first round holds on later ones', async () => {
    const t = clock();
    const step = limitsStep(new Limits({ default: { timeoutMs: 10_000 }, tools: [] }), t.now);
    const asking: ToolResult = { resultType: 'input_required', inputRequests: {} } as unknown as ToolResult;
    const first = call('gated');
    expect(await run([step], async () => asking, first)).toBe(asking);
    expect(first.state[DEADLINE_STATE_KEY]).toBe(t.now() + 10_000);
    // the client answers 4 s later: 6 s remain for this round
    t.advance(4_000);
    let bounds: ToolCall['bounds'];
    expect(await run([step], async (c) => ((bounds = c.bounds), ran), nextRound(first))).toBe(ran);
    expect(bounds).toEqual({ timeoutMs: 6_000 });
    // past the deadline, a later round is refused without running
    t.advance(6_000);
    let dispatched = false;
    const late = nextRound(first);
    const result = await run([step], async () => ((dispatched = true), ran), late);
    expect(dispatched).toBe(false);
    expect(text(result)).toContain('Tool gated did not finish within 10000 ms');
    expect(refusal(late)).toMatchObject({ kind: 'limited' });
  });

  it('passes the client cancelling through as it is', async () => {
    const step = limitsStep(new Limits({ default: { timeoutMs: 10_000 }, tools: [] }));
    const client = new AbortController();
    const c = call('t', 'alice', { signal: client.signal });
    const p = run([step], (inner) => new Promise((_res, reject) => inner.signal.addEventListener('abort', () => reject(new Error('cancelled')))), c);
    client.abort();
    const err = await p.catch((e: unknown) => e);
    expect((err as Error).message).toBe('cancelled');
    expect(refusalOf(err)).toBeUndefined();
  });

  it('passes maxResponseBytes (and the lower of two bounds) on', async () => {
    const step = limitsStep(new Limits({ default: { maxResponseBytes: 2_000 }, tools: [] }));
    const seen: Array<ToolCall['bounds']> = [];
    const dispatch = async (c: ToolCall): Promise<ToolResult> => (seen.push(c.bounds), ran);
    await run([step], dispatch, call('t'));
    await run([step], dispatch, call('t', 'alice', { bounds: { maxResponseBytes: 500, timeoutMs: 99 } }));
    await run([step], dispatch, call('t', 'alice', { bounds: { maxResponseBytes: 5_000 } }));
    expect(seen).toEqual([{ maxResponseBytes: 2_000 }, { maxResponseBytes: 500, timeoutMs: 99 }, { maxResponseBytes: 2_000 }]);
  });
});

describe('MemoryCounters', () => {
  it('counts in a sliding window and prunes old timestamps', () => {
    const counters = new MemoryCounters();
    expect(counters.hit('k', 2, 1_000, 0)).toEqual({ ok: true });
    expect(counters.hit('k', 2, 1_000, 400)).toEqual({ ok: true });
    expect(counters.hit('k', 2, 1_000, 900)).toEqual({ ok: false, retryAfterMs: 100 });
    expect(counters.hit('k', 2, 1_000, 1_000)).toEqual({ ok: true });
    expect(counters.hit('k', 2, 1_000, 1_100)).toEqual({ ok: false, retryAfterMs: 300 });
  });

  it('drops keys whose window is empty and caps the number of keys', () => {
    const counters = new MemoryCounters({ maxKeys: 3 });
    counters.hit('a', 5, 1_000, 0);
    counters.hit('b', 5, 1_000, 0);
    counters.hit('c', 5, 1_000, 500);
    expect(counters.size.rateKeys).toBe(3);
    // a and b have left the window: adding d prunes them
    counters.hit('d', 5, 1_000, 1_200);
    expect(counters.size.rateKeys).toBe(2);
    // all in the window: the least recently hit key goes
    counters.hit('c', 5, 1_000, 1_300);
    counters.hit('e', 5, 1_000, 1_300);
    counters.hit('f', 5, 1_000, 1_300);
    expect(counters.size.rateKeys).toBe(3);
    // d was least recently hit: forgotten, it starts over
    expect(counters.hit('d', 1, 1_000, 1_400)).toEqual({ ok: true });
    for (let i = 0; i < 10_000; i++) counters.hit(`k${i}`, 1, 60_000, 2_000);
    expect(counters.size.rateKeys).toBe(3);
  });

  it('holds slots until released, once per release', () => {
    const counters = new MemoryCounters();
    const r1 = counters.acquire('k', 2)!;
    const r2 = counters.acquire('k', 2)!;
    expect(counters.acquire('k', 2)).toBeUndefined();
    r1();
    r1();
    expect(counters.size.slotKeys).toBe(1);
    const r3 = counters.acquire('k', 2)!;
    expect(counters.acquire('k', 2)).toBeUndefined();
    r2();
    r3();
    expect(counters.size.slotKeys).toBe(0);
  });
});

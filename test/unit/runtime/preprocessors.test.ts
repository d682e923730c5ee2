import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogLevel } from '../../../templates/runtime/core/log.js';
import { getLogLevel, setLogLevel, setLogSink } from '../../../templates/runtime/core/log.js';
import type { PreprocessorDefinition } from '../../../templates/runtime/preprocessors/preprocessors.js';
import { orderPreprocessors, preprocessorNames, runPreprocessors } from '../../../templates/runtime/preprocessors/preprocessors.js';

const logs: string[] = [];
let level: LogLevel;
beforeAll(() => {
  setLogSink((line) => logs.push(line));
  level = getLogLevel();
  setLogLevel('debug');
});
afterAll(() => setLogLevel(level));

const def = (name: string, rest: Partial<PreprocessorDefinition> = {}): PreprocessorDefinition => ({ name, handler: () => name, ...rest });
const names = (defs: readonly PreprocessorDefinition[]): string[] => defs.map((d) => d.name);

describe('orderPreprocessors', () => {
  it('orders by after, ties by declaration order', () => {
    expect(names(orderPreprocessors([def('c', { after: ['a'] }), def('b'), def('a'), def('d', { after: ['c', 'b'] })]))).toEqual(['b', 'a', 'c', 'd']);
    expect(names(orderPreprocessors([def('x'), def('y'), def('z')]))).toEqual(['x', 'y', 'z']);
  });

  it('throws on cycles, unknown names and duplicates', () => {
    expect(() => orderPreprocessors([def('a', { after: ['b'] }), def('b', { after: ['a'] }), def('c')])).toThrow(/cycle through "after": a, b/);
    expect(() => orderPreprocessors([def('a', { after: ['a'] })])).toThrow(/cycle/);
    expect(() => orderPreprocessors([def('a', { after: ['ghost'] })])).toThrow(/unknown preprocessor "ghost"/);
    expect(() => orderPreprocessors([def('a'), def('a')])).toThrow(/Duplicate/);
  });

  it('exposes the names for the tool dispatcher', () => {
    expect(preprocessorNames([def('a'), def('b')])).toEqual(new Set(['a', 'b']));
  });
});

describe('runPreprocessors', () => {
  it('runs sequentially in order and converts outputs to text', async () => {
    const seen: string[] = [];
    const defs = [
      def('json', { after: ['text'], handler: ({ input }) => (seen.push('json'), { echo: input }) }),
      def('text', { handler: async ({ input }) => (seen.push('text'), `memories about ${input}`) }),
      def('none', { handler: () => undefined }),
      def('result', {
        handler: () => ({
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        }),
      }),
      def('failedResult', { handler: () => ({ isError: true, content: [{ type: 'text', text: 'api down' }] }) }),
    ];
    const run = await runPreprocessors(defs, 'cats');
    expect(seen).toEqual(['text', 'json']);
    expect(run.ok).toBe(true);
    expect(run.blocks.map(({ durationMs: _d, ...b }) => b)).toEqual([
      { name: 'text', status: 'ok', content: 'memories about cats' },
      { name: 'json', status: 'ok', content: '{"echo":"cats"}' },
      { name: 'none', status: 'ok' },
      { name: 'result', status: 'ok', content: 'a\nb' },
      { name: 'failedResult', status: 'error', error: 'api down' },
    ]);
    for (const b of run.blocks) expect(b.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('cuts off a handler that never resolves at its timeout, aborting its signal', async () => {
    let aborted: unknown;
    const defs = [
      def('stuck', { timeoutMs: 50, handler: (_i, ctx) => new Promise(() => ctx.signal.addEventListener('abort', () => (aborted = ctx.signal.reason))) }),
      def('after', { after: ['stuck'] }),
    ];
    // the handler never resolves: only its 50 ms timeout can end the run (no timed assertion)
    const run = await runPreprocessors(defs, 'x');
    expect(run.ok).toBe(true);
    expect(run.blocks[0]).toMatchObject({ name: 'stuck', status: 'timeout', error: 'timed out after 50 ms' });
    expect(run.blocks[0]?.durationMs).toBeGreaterThanOrEqual(45);
    expect(aborted).toBeInstanceOf(Error);
    // a dependency that failed does not prevent the dependent one from running
    expect(run.blocks[1]).toMatchObject({ name: 'after', status: 'ok', content: 'after' });
  });

  it('onError skip records the failure and goes on; fail stops the run', async () => {
    const boom = (): never => {
      throw new Error('boom');
    };
    const skip = await runPreprocessors([def('a', { handler: boom }), def('b')], 'x');
    expect(skip.ok).toBe(true);
    expect(skip.blocks.map((b) => [b.name, b.status, b.error])).toEqual([
      ['a', 'error', 'boom'],
      ['b', 'ok', undefined],
    ]);
    const fail = await runPreprocessors([def('z'), def('a', { handler: boom, onError: 'fail' }), def('b')], 'x');
    expect(fail.ok).toBe(false);
    expect(fail.blocks.map((b) => b.name)).toEqual(['z', 'a']);
    const failTimeout = await runPreprocessors(
      [def('slow', { onError: 'fail', timeoutMs: 20, handler: () => new Promise((r) => setTimeout(r, 5000)) }), def('b')],
      'x',
    );
    expect(failTimeout).toMatchObject({ ok: false, blocks: [{ name: 'slow', status: 'timeout' }] });
  });

  it('stops a cancelled run and marks the current preprocessor skipped', async () => {
    const controller = new AbortController();
    const defs = [def('long', { handler: () => new Promise(() => controller.abort()) }), def('next')];
    const run = await runPreprocessors(defs, 'x', { signal: controller.signal });
    expect(run).toMatchObject({ ok: false, blocks: [{ name: 'long', status: 'skipped', error: 'the run was cancelled' }] });
  });

  it('logs every preprocessor run at debug level and notifies', async () => {
    logs.length = 0;
    const notes: unknown[] = [];
    await runPreprocessors([def('a'), def('b', { handler: () => Promise.reject(new Error('nope')) })], 'x', { notify: (p) => void notes.push(p) });
    expect(logs.filter((l) => l.includes('DEBUG preprocessor a: ok in'))).toHaveLength(1);
    expect(logs.filter((l) => l.includes('DEBUG preprocessor b: error in') && l.includes('"error":"nope"'))).toHaveLength(1);
    expect(notes).toEqual([
      { level: 'debug', logger: 'preprocessors', data: expect.objectContaining({ preprocessor: 'a', status: 'ok' }) },
      { level: 'debug', logger: 'preprocessors', data: expect.objectContaining({ preprocessor: 'b', status: 'error', error: 'nope' }) },
    ]);
  });

  it('gives handlers a prefixed logger', async () => {
    logs.length = 0;
    await runPreprocessors([def('a', { handler: (_i, ctx) => ctx.log('info', 'hello') })], 'x');
    expect(logs.some((l) => l.includes('INFO preprocessor a: hello'))).toBe(true);
  });
});

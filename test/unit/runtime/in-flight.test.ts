/**
 * Memory bounds of a generated server (issue 10, item 5): results bounded once encoded, the
 * in-flight budget of response bodies (and results not yet sent), one result made per
 * event-loop turn, compressed bodies never read past the limit.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { ServerConfig } from '../../../templates/runtime/core/types.js';
import { DRAIN_BYTES, readBounded } from '../../../templates/runtime/operation/body.js';
import { InFlightBudget, InFlightLimitError, InFlightShare } from '../../../templates/runtime/operation/in-flight.js';
import { boundResult, cutToEncoded, jsonStringBytes, resultLimit } from '../../../templates/runtime/operation/result-size.js';
import { resolveSettings, SettingsError } from '../../../templates/runtime/process/settings.js';

const wire = (r: unknown) => Buffer.byteLength(JSON.stringify(r));

describe('encoded sizes', () => {
  it.each([['plain ascii'], ['\u0000\u0001\u001f'], ['"quotes" and \\ backslashes\n\t'], ['é€😀 and a lone \ud800 surrogate'], ['']])(
    'jsonStringBytes(%j) is what JSON.stringify writes',
    (text) => {
      expect(jsonStringBytes(text)).toBe(Buffer.byteLength(JSON.stringify(text)) - 2);
    },
  );

  it('cutToEncoded keeps the longest start that fits, never half a surrogate pair', () => {
    expect(cutToEncoded('\u0000'.repeat(10), 13)).toBe('\u0000\u0000');
    expect(cutToEncoded('ab😀c', 5)).toBe('ab');
    expect(cutToEncoded('ab😀c', 6)).toBe('ab😀');
    expect(cutToEncoded('abc', 100)).toBe('abc');
  });
});

describe('boundResult', () => {
  const limit = 1024;

  it('returns a result that fits as it is', () => {
    const r: CallToolResult = { content: [{ type: 'text', text: 'x'.repeat(1500) }], structuredContent: { a: 1 } };
    expect(boundResult(r, limit, { kind: 'minimal', wrapped: false })).toBe(r);
  });

  it('cuts a text of NUL characters to fit once encoded, with a note', () => {
    const r: CallToolResult = { content: [{ type: 'text', text: '\u0000'.repeat(limit) }] };
    const out = boundResult(r, limit, { kind: 'minimal', wrapped: false });
    expect(wire(out)).toBeLessThanOrEqual(resultLimit(limit));
    expect((out.content[0] as { text: string }).text).toMatch(
      /\n\[truncated: the text takes 6144 bytes once encoded as JSON, more than the limit; showing the first \d+ of 1024 characters\]$/,
    );
  });

  it('leaves out structured content larger than the limit: {} or {status} stays valid for lenient schemas', () => {
    const big = { a: Array.from({ length: 2000 }, () => 1e21) };
    const object = boundResult({ content: [{ type: 'text', text: JSON.stringify(big) }], structuredContent: big }, limit, { kind: 'minimal', wrapped: false });
    expect(object.structuredContent).toEqual({});
    expect(object.isError).toBeUndefined();
    expect(JSON.stringify(object.content)).toMatch(/structuredContent left out: it takes \d+ bytes once encoded, more than the limit of 1024/);
    const wrapped = boundResult({ content: [{ type: 'text', text: 'ok' }], structuredContent: { status: 200, data: big } }, limit, {
      kind: 'minimal',
      wrapped: true,
    });
    expect(wrapped.structuredContent).toEqual({ status: 200 });
    const strict = boundResult({ content: [{ type: 'text', text: 'ok' }], structuredContent: big }, limit, { kind: 'strict' });
    expect(strict.structuredContent).toBeUndefined();
    expect(strict.isError).toBe(true);
    for (const r of [object, wrapped, strict]) expect(wire(r)).toBeLessThanOrEqual(resultLimit(limit));
  });

  it('turns binary content that cannot fit into an error saying so', () => {
    const out = boundResult({ content: [{ type: 'image', data: 'A'.repeat(7000), mimeType: 'image/png' }] }, limit, { kind: 'minimal', wrapped: false });
    expect(out.isError).toBe(true);
    expect(JSON.stringify(out)).toMatch(/more than the limit of 6144/);
  });
});

describe('the in-flight budget', () => {
  it('takes what fits, counts what waits to be sent, and gives back', () => {
    let queued = 0;
    const budget = new InFlightBudget(100, { bytes: () => queued, drained: async () => undefined });
    const a = new InFlightShare(budget);
    expect(a.take(60)).toBe(true);
    expect(budget.fits(40)).toBe(true);
    queued = 10;
    expect(budget.fits(40)).toBe(false);
    expect(new InFlightShare(budget).take(31)).toBe(false);
    expect(budget.held).toBe(70);
    a.release();
    a.release();
    expect(budget.held).toBe(10);
  });

  it('makes one result per event-loop turn, in order, and lets other work run in between', async () => {
    const budget = new InFlightBudget(100);
    const order: string[] = [];
    const results = Promise.all([1, 2, 3].map((i) => budget.turn(() => order.push(`work ${i}`))));
    setImmediate(() => order.push('other'));
    await results;
    expect(order.indexOf('other')).toBeLessThan(order.indexOf('work 3'));
    expect(order.filter((o) => o.startsWith('work'))).toEqual(['work 1', 'work 2', 'work 3']);
  });

  it('waits while more than half the budget is queued for sending', async () => {
    let queued = 80;
    let waits = 0;
    const budget = new InFlightBudget(100, {
      bytes: () => queued,
      drained: async () => {
        waits++;
        queued -= 20;
      },
    });
    await budget.turn(() => undefined);
    expect(waits).toBe(2);
    expect(queued).toBe(40);
  });
});

describe('reading bodies', () => {
  const stream = (chunks: number, size: number, counter: { pulled: number }) =>
    new ReadableStream<Uint8Array>({
      pull(c) {
        if (counter.pulled++ >= chunks) c.close();
        else c.enqueue(new Uint8Array(size));
      },
    });

  it('stops at the limit for a compressed body (no draining: it would inflate a bomb)', async () => {
    const counter = { pulled: 0 };
    const body = await readBounded(new Response(stream(1000, 1024, counter), { headers: { 'content-encoding': 'gzip' } }), 4096);
    expect(body.truncated).toBe(true);
    expect(counter.pulled).toBeLessThan(10);
  });

  it('drains at most DRAIN_BYTES past the limit of a plain body without Content-Length', async () => {
    const counter = { pulled: 0 };
    const body = await readBounded(new Response(stream(10_000, 1024, counter)), 4096);
    expect(body.seenBytes).toBeLessThanOrEqual(4096 + DRAIN_BYTES + 1024);
    expect(body.seenBytes).toBeGreaterThanOrEqual(4096 + DRAIN_BYTES);
  });

  it('keeps exactly the bytes read, as a plain Uint8Array of its own, from one chunk or several, cut at the limit', async () => {
    const chunks = (...parts: number[][]) =>
      new ReadableStream<Uint8Array>({
        start(c) {
          for (const p of parts) c.enqueue(Uint8Array.from(p));
          c.close();
        },
      });
    const one = await readBounded(new Response(chunks([1, 2, 3])), 100);
    expect([...one.bytes]).toEqual([1, 2, 3]);
    expect(one).toMatchObject({ truncated: false, totalBytes: 3, seenBytes: 3 });
    const several = await readBounded(new Response(chunks([1, 2], [3], [4, 5, 6])), 100);
    expect([...several.bytes]).toEqual([1, 2, 3, 4, 5, 6]);
    const cut = await readBounded(new Response(chunks([1, 2, 3, 4, 5, 6]), { headers: { 'content-length': '6' } }), 4);
    expect([...cut.bytes]).toEqual([1, 2, 3, 4]);
    expect(cut).toMatchObject({ truncated: true, totalBytes: 6 });
    for (const body of [one, several, cut]) {
      expect(Buffer.isBuffer(body.bytes)).toBe(false);
      // its own memory: a body cut at the limit holds no more than what it kept
      expect(body.bytes.buffer.byteLength).toBe(body.bytes.byteLength);
    }
    // a Buffer chunk (node streams hand those over) comes back as a plain Uint8Array too
    const buffered = await readBounded(new Response(new ReadableStream({ start: (c) => (c.enqueue(Buffer.from('abc')), c.close()) })), 100);
    expect(Buffer.isBuffer(buffered.bytes)).toBe(false);
    expect(Buffer.from(buffered.bytes).toString()).toBe('abc');
  });

  it('never shares memory with a chunk: a stream that reuses the buffer it handed over does not change a body already read', async () => {
    const chunk = Uint8Array.from([65, 65, 65]); // a chunk that is its whole buffer
    const body = await readBounded(new Response(new ReadableStream({ start: (c) => (c.enqueue(chunk), c.close()) })), 100);
    chunk.fill(66); // the producer reuses its buffer for the next response
    expect(Buffer.from(body.bytes).toString()).toBe('AAA');
  });

  it('throws InFlightLimitError when the budget has no room for the next chunk', async () => {
    const budget = new InFlightBudget(3000);
    const share = new InFlightShare(budget);
    const err = await readBounded(new Response(stream(10, 1024, { pulled: 0 })), 8192, share).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InFlightLimitError);
    expect(budget.held).toBe(2048);
    share.release();
    expect(budget.held).toBe(0);
  });
});

describe('settings', () => {
  const config: ServerConfig = { name: 'x', version: '1', envPrefix: 'X', timeoutMs: 1000, maxResponseBytes: 2048 };
  it('defaults to 64 MiB, takes the manifest value, and the variable over both', () => {
    expect(resolveSettings(config, {}).maxInFlightBytes).toBe(67_108_864);
    expect(resolveSettings({ ...config, maxInFlightBytes: 4096 }, {}).maxInFlightBytes).toBe(4096);
    expect(resolveSettings({ ...config, maxInFlightBytes: 4096 }, { X_MAX_IN_FLIGHT_BYTES: '8192' }).maxInFlightBytes).toBe(8192);
  });
  it('refuses a value below the response limit, naming the variable', () => {
    expect(() => resolveSettings(config, { X_MAX_IN_FLIGHT_BYTES: '1000' })).toThrow(SettingsError);
    expect(() => resolveSettings(config, { X_MAX_IN_FLIGHT_BYTES: '1000' })).toThrow(/X_MAX_IN_FLIGHT_BYTES must be at least the response limit of 2048 bytes/);
    expect(() => resolveSettings(config, { X_MAX_IN_FLIGHT_BYTES: 'lots' })).toThrow(/X_MAX_IN_FLIGHT_BYTES must be a positive whole number/);
  });
});

import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { ToolCall } from '../../../templates/runtime/pipeline/pipeline.js';
import { checkArguments } from '../../../templates/runtime/pipeline/pipeline.js';
import { callArguments } from '../../../templates/runtime/server/instance.js';
import type { AnyExtraTool, ExtraTool } from '../../../templates/runtime/tools/extra-tools.js';
import { callExtraTool, defineTool, toToolResult } from '../../../templates/runtime/tools/extra-tools.js';

type AddArgs = { a: number; b: number };

let calls = 0;
const add = defineTool<AddArgs, { sum: number }>({
  kind: 'extra',
  name: 'extra_add',
  description: 'Adds',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false },
  outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  handler: (args) => {
    calls += 1;
    return { sum: args.a + args.b };
  },
});

const open = { type: 'object' } as const;
const make = <R>(
  name: string,
  handler: ExtraTool<Record<string, unknown>, R>['handler'],
  outputSchema?: ExtraTool['outputSchema'],
): ExtraTool<Record<string, unknown>, R> =>
  outputSchema === undefined ? { kind: 'extra', name, inputSchema: open, handler } : { kind: 'extra', name, inputSchema: open, outputSchema, handler };

const logs: string[] = [];
beforeAll(() => {
  setLogSink((line) => logs.push(line));
});
afterEach(() => {
  logs.length = 0;
  calls = 0;
});
const signal = new AbortController().signal;

/** A call as the server makes it: the envelope read (instance.ts), the arguments checked once by the pipeline's step, then the handler. */
function viaPipeline(t: AnyExtraTool, raw: unknown) {
  const args = callArguments(t.name, raw);
  return checkArguments({ target: { kind: 'extra', tool: t }, args } as unknown as ToolCall, async () => ({
    result: await callExtraTool(t, args, signal),
  })).then((outcome) => outcome.result);
}

describe('callExtraTool', () => {
  it('has its arguments validated before the handler is called', async () => {
    const result = (await viaPipeline(add, { a: 'one', c: 1 })) as { isError?: boolean; content: unknown };
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      { type: 'text', text: 'Invalid arguments for tool extra_add:\n- b: is required\n- c: is not an accepted argument\n- a: must be number' },
    ]);
    expect(calls).toBe(0);
    expect(() =>
      viaPipeline(
        make('t_arr', () => 'x'),
        [1],
      ),
    ).toThrow(/arguments must be an object/);
  });

  it('returns an object result as JSON text plus structuredContent when an output schema exists', async () => {
    expect(await callExtraTool(add, { a: 2, b: 3 }, signal)).toEqual({ content: [{ type: 'text', text: '{"sum":5}' }], structuredContent: { sum: 5 } });
    expect(calls).toBe(1);
  });

  it('reports output that does not match the schema as isError with the data', async () => {
    const bad = make('t_bad_out', () => ({ sum: 'five' }), { type: 'object', properties: { sum: { type: 'number' } } });
    const result = await callExtraTool(bad, {}, signal);
    expect(result.isError).toBe(true);
    const text = (result.content[0] as { text: string }).text;
    expect(text).toContain('{"sum":"five"}');
    expect(text).toContain("does not match the tool's output schema:\n- sum: must be number");
    expect(result.structuredContent).toBeUndefined();
    const notObject = await callExtraTool(
      make('t_str_out', () => 'plain', { type: 'object' }),
      {},
      signal,
    );
    expect(notObject.isError).toBe(true);
    expect((notObject.content[0] as { text: string }).text).toContain('returned a string, not an object');
  });

  it('converts plain values to text without structuredContent when there is no output schema', async () => {
    expect(
      await callExtraTool(
        make('t_s', () => 'hello'),
        {},
        signal,
      ),
    ).toEqual({ content: [{ type: 'text', text: 'hello' }] });
    expect(
      await callExtraTool(
        make('t_n', async () => 42),
        {},
        signal,
      ),
    ).toEqual({ content: [{ type: 'text', text: '42' }] });
    expect(
      await callExtraTool(
        make('t_o', () => ({ a: [1] })),
        {},
        signal,
      ),
    ).toEqual({ content: [{ type: 'text', text: '{"a":[1]}' }] });
    expect(
      await callExtraTool(
        make('t_u', () => undefined),
        {},
        signal,
      ),
    ).toEqual({ content: [] });
  });

  it('returns a CallToolResult-shaped value as is', async () => {
    const raw = { content: [{ type: 'image' as const, data: 'AA==', mimeType: 'image/png' }], isError: false };
    expect(
      await callExtraTool(
        make('t_raw', () => raw),
        {},
        signal,
      ),
    ).toBe(raw);
  });

  it('turns a thrown error into isError and logs the stack', async () => {
    const result = await callExtraTool(
      make('t_throw', () => {
        throw new Error('kaput');
      }),
      {},
      signal,
    );
    expect(result).toEqual({ isError: true, content: [{ type: 'text', text: 'Tool t_throw failed: kaput' }] });
    expect(logs.join('')).toMatch(/ERROR tool t_throw failed .*kaput/);
    expect(logs.join('')).toContain('stack');
  });

  it('passes the signal and a prefixed logger to the handler', async () => {
    const controller = new AbortController();
    const tool = make('t_ctx', (_args, ctx) => {
      ctx.log('warn', 'hello');
      return ctx.signal === controller.signal ? 'same' : 'other';
    });
    expect(await callExtraTool(tool, {}, controller.signal)).toEqual({ content: [{ type: 'text', text: 'same' }] });
    expect(logs.join('')).toContain('WARN t_ctx: hello');
  });

  it('reports an unserialisable value', () => {
    expect(toToolResult({ name: 't_big', inputSchema: open }, { n: 1n }).isError).toBe(true);
  });

  it('keeps typed tools usable in a heterogeneous table', () => {
    const table: AnyExtraTool[] = [add, make('x', () => 1)];
    expect(table.map((t) => t.name)).toEqual(['extra_add', 'x']);
  });
});

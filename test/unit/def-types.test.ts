/** `$defs` type names decided in the IR (src/ir/tools/def-types.ts): valid, unique, order-independent. */
import { describe, expect, it } from 'vitest';
import { allocate, assignDefTypes } from '../../src/ir/tools/def-types.js';
import type { IrExtraTool, IrOperationTool, JsonSchema } from '../../src/ir/types.js';

const op = (id: string, inputSchema: JsonSchema, outputSchema?: JsonSchema) =>
  ({
    kind: 'operation-tool',
    argsTypeName: `${id}Args`,
    resultTypeName: `${id}Result`,
    constName: `${id.toLowerCase()}Tool`,
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
  }) as IrOperationTool;
const extra = (id: string, inputSchema: JsonSchema) =>
  ({ kind: 'extra-tool', argsTypeName: `${id}Args`, resultTypeName: `${id}Result`, constName: `${id.toLowerCase()}Tool`, inputSchema }) as IrExtraTool;

describe('allocate', () => {
  it('keeps names that are identifiers and numbers the others in code-unit order', () => {
    const used = new Set<string>();
    expect([...allocate('X', ['a-b', 'a_b', 'a.b', 'a_b_2', 'c d', '1'], used)]).toStrictEqual([
      ['a-b', 'X$a_b_3'],
      ['a_b', 'X$a_b'],
      ['a.b', 'X$a_b_4'],
      ['a_b_2', 'X$a_b_2'],
      ['c d', 'X$c_d'],
      ['1', 'X$1'],
    ]);
    expect(used.size).toBe(6);
  });

  it('does not depend on the order of the names', () => {
    const names = ['a-b', 'a_b', 'a.b', 'a b', 'ä'];
    const forward = allocate('X', names, new Set());
    const backward = allocate('X', [...names].reverse(), new Set());
    expect(Object.fromEntries(backward)).toStrictEqual(Object.fromEntries(forward));
  });

  it('never hands out a name that is already used', () => {
    expect(allocate('X', ['a'], new Set(['X$a', 'X$a_2']))).toStrictEqual(new Map([['a', 'X$a_3']]));
  });
});

describe('assignDefTypes', () => {
  const node = { type: 'object', properties: { next: { $ref: '#/$defs/node' } } };
  it('shares equal definitions across operation tools and keeps clashing ones per tool', () => {
    const a = op('A', { type: 'object', $defs: { node, 'x-y': { type: 'string' } } });
    const b = op('B', { type: 'object', $defs: { node } }, { type: 'object', $defs: { node } });
    const c = op('C', { type: 'object', $defs: { node: { type: 'integer' }, x_y: { type: 'number' }, 'x-y': { type: 'boolean' } } });
    const e = extra('E', { type: 'object', $defs: { node } });
    const shared = assignDefTypes({ tools: [a, b, c], extraTools: [e] });
    expect(shared).toStrictEqual({
      input: [
        { name: 'node', typeName: 'InputDef$node', schema: node },
        { name: 'x-y', typeName: 'InputDef$x_y', schema: { type: 'string' } },
      ],
      output: [{ name: 'node', typeName: 'OutputDef$node', schema: node }],
    });
    expect(a.inputDefTypes).toStrictEqual({ shared: true, names: { node: 'InputDef$node', 'x-y': 'InputDef$x_y' } });
    expect(b.inputDefTypes).toStrictEqual({ shared: true, names: { node: 'InputDef$node' } });
    expect(b.outputDefTypes).toStrictEqual({ shared: true, names: { node: 'OutputDef$node' } });
    expect(c.inputDefTypes).toStrictEqual({ shared: false, names: { node: 'CArgs$node', x_y: 'CArgs$x_y', 'x-y': 'CArgs$x_y_2' } });
    expect(e.inputDefTypes).toStrictEqual({ shared: false, names: { node: 'EArgs$node' } });
    expect(a.outputDefTypes).toBeUndefined();
  });

  it('gives schemas without $defs no type names', () => {
    const a = op('A', { type: 'object', $defs: {} });
    expect(assignDefTypes({ tools: [a], extraTools: [] })).toStrictEqual({ input: [], output: [] });
    expect(a.inputDefTypes).toBeUndefined();
  });
});

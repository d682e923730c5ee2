/**
 * Validation under hostile schemas and values (issue 10): patterns run in linear time, decimal
 * `multipleOf` steps accept what people write, `__proto__` is an ordinary property name, and a
 * pattern the engine cannot run is reported by the same check the compiler uses.
 */
import { describe, expect, it } from 'vitest';
import { linearRegExp, patternProblem } from '../../../templates/runtime/core/pattern.js';
import type { JsonSchema, OperationTool } from '../../../templates/runtime/core/types.js';
import { conformOutput, validateArguments } from '../../../templates/runtime/validation/validate.js';

let n = 0;
function tool(inputSchema: JsonSchema, outputSchema?: JsonSchema): OperationTool {
  const t: OperationTool = { kind: 'operation', name: `t${n++}`, inputSchema, http: { method: 'GET', path: '/', params: [] } };
  return outputSchema ? { ...t, outputSchema } : t;
}

describe('patterns', () => {
  it('a catastrophic-backtracking pattern is matched in linear time', () => {
    const t = tool({
      type: 'object',
      properties: { word: { type: 'string', pattern: '^(a+)+$' }, keys: { type: 'object', patternProperties: { '^(x+)+y$': { type: 'integer' } } } },
    });
    const started = performance.now();
    expect(validateArguments(t, { word: 'a'.repeat(5000) + '!' })).toEqual(['word: must match pattern "^(a+)+$"']);
    expect(validateArguments(t, { keys: { [`${'x'.repeat(5000)}y`]: 'no' } })).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(validateArguments(t, { word: 'aaaa', keys: { xxy: 1 } })).toEqual([]);
  });

  it('keeps ECMAScript meaning for the usual syntax (named groups, \\u escapes, classes)', () => {
    const t = tool({ type: 'object', properties: { a: { type: 'string', pattern: '^(?<y>\\d{4})-\\u00e9[\\w.-]*$' } } });
    expect(validateArguments(t, { a: '2024-éab_c.d' })).toEqual([]);
    expect(validateArguments(t, { a: '24-é' })).toHaveLength(1);
  });

  it('compiles every distinct pattern on its own (Ajv de-duplicates by toString)', () => {
    expect(String(linearRegExp('^a$', 'u'))).not.toBe(String(linearRegExp('^b$', 'u')));
    const t = tool({ type: 'object', properties: { a: { type: 'string', pattern: '^a$' }, b: { type: 'string', pattern: '^b$' } } });
    expect(validateArguments(t, { a: 'a', b: 'b' })).toEqual([]);
    expect(validateArguments(t, { a: 'b', b: 'a' })).toHaveLength(2);
  });

  it.each([
    ['^(?!x)\\w+$', /linear time.*lookaround/],
    ['(?<=a)b', /linear time/],
    ['^(a)\\1$', /linear time/],
    ['[', /not a valid ECMAScript/],
    ['^\\-$', /not a valid ECMAScript/],
  ])('patternProblem(%s) explains why it cannot be enforced', (pattern, why) => {
    expect(patternProblem(pattern)).toMatch(why);
  });

  it.each(['^[A-Za-z]+$', '^\\d{3}-\\d{4}$', '^\\p{L}+$', '^[^\\s]+$', '\\bword\\b', '^(?:abc)*$'])('patternProblem(%s) is undefined', (pattern) => {
    expect(patternProblem(pattern)).toBeUndefined();
  });
});

describe('multipleOf', () => {
  const t = tool({
    type: 'object',
    properties: { x: { type: 'number', multipleOf: 0.1 }, c: { type: 'number', multipleOf: 0.01 }, i: { type: 'integer', multipleOf: 3 } },
  });
  it.each([0.3, 0.7, 1.1, 2.3, 12.9, -0.3, 0])('%s is a multiple of 0.1', (x) => expect(validateArguments(t, { x })).toEqual([]));
  it.each([0.07, 0.29, 19.99])('%s is a multiple of 0.01', (c) => expect(validateArguments(t, { c })).toEqual([]));
  it('0.35 is not a multiple of 0.1, 4 not of 3', () => {
    expect(validateArguments(t, { x: 0.35, i: 4 })).toEqual(['x: must be multiple of 0.1', 'i: must be multiple of 3']);
  });
});

describe('property names that are Object.prototype members', () => {
  const schema: JsonSchema = JSON.parse(
    '{"type":"object","additionalProperties":false,"required":["__proto__"],"properties":{"__proto__":{"type":"string"},"constructor":{"type":"integer"},"toString":{"type":"boolean"},"\\u0000x":{"type":"string"},"body":{"type":"object","required":["__proto__","constructor"],"properties":{"__proto__":{"type":"string","enum":["a","b"]},"constructor":{"type":"integer"}}}}}',
  ) as JsonSchema;
  const t = tool(schema);

  it('accepts them as ordinary arguments', () => {
    expect(validateArguments(t, JSON.parse('{"__proto__":"p","constructor":1,"toString":true,"body":{"__proto__":"a","constructor":2}}'))).toEqual([]);
  });

  it('requires them, and names them in messages', () => {
    expect(validateArguments(t, JSON.parse('{"body":{"__proto__":"c"}}'))).toEqual([
      '__proto__: is required',
      'body.constructor: is required',
      'body.__proto__: must be one of "a", "b"',
    ]);
    expect(validateArguments(t, JSON.parse('{"__proto__":1,"constructor":"x"}'))).toEqual(['__proto__: must be string', 'constructor: must be integer']);
  });

  it('never confuses an escaped name with a real one', () => {
    expect(validateArguments(t, JSON.parse('{"\\u0000__proto__":"p"}'))).toEqual([
      '__proto__: is required',
      '["\\u0000__proto__"]: is not an accepted argument',
    ]);
    expect(validateArguments(t, JSON.parse('{"__proto__":"p","\\u0000x":"ok"}'))).toEqual([]);
  });

  it('conforms an output with such properties, nulling the right one', () => {
    const out = tool(
      { type: 'object' },
      JSON.parse(
        '{"type":"object","properties":{"__proto__":{"anyOf":[{"type":"number"},{"type":"null"}]},"constructor":{"anyOf":[{"type":"number"},{"type":"null"}]}}}',
      ) as JsonSchema,
    );
    const value = JSON.parse('{"__proto__":"not a number","constructor":1}') as Record<string, unknown>;
    const fitted = conformOutput(out, value)!;
    expect(fitted.nulled).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(fitted.value, '__proto__')?.value).toBeNull();
    expect(fitted.value.constructor).toBe(1);
  });
});

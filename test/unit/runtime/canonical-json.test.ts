import { describe, expect, it } from 'vitest';
import { argumentsHash, canonicalJson, jsonSafe } from '../../../templates/runtime/core/canonical-json.js';

describe('canonicalJson', () => {
  it('sorts keys by UTF-16 code unit, integer-like keys too (an object would put them first, in numeric order)', () => {
    expect(canonicalJson({ b: 1, 10: 2, 2: 3, a: { z: 1, y: [2, { d: 1, c: 0 }] } })).toBe('{"10":2,"2":3,"a":{"y":[2,{"c":0,"d":1}],"z":1},"b":1}');
  });

  it('writes what JSON.stringify would see: undefined and functions dropped from objects, null in arrays; NaN null; -0 as 0; bigint as a string; toJSON', () => {
    expect(canonicalJson({ a: undefined, f: () => 1, n: Number.NaN, z: -0, big: 10n, d: new Date('2024-01-02T03:04:05Z'), l: [undefined, () => 1] })).toBe(
      '{"big":"10","d":"2024-01-02T03:04:05.000Z","l":[null,null],"n":null,"z":0}',
    );
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson('a "b"')).toBe('"a \\"b\\""');
  });

  it('leaves out a parsed own __proto__ member, as the value form does', () => {
    const parsed = JSON.parse('{"__proto__":{"x":1},"a":1}') as unknown;
    expect(canonicalJson(parsed)).toBe('{"a":1}');
    expect(JSON.stringify(jsonSafe(parsed, (s) => s, 'test'))).toBe('{"a":1}');
  });

  it('refuses cycles; a value seen twice but not inside itself is fine', () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(() => canonicalJson(loop)).toThrow('canonicalJson: circular structure');
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it('the value form has the same text as the canonical form', () => {
    const value = { b: [1, { y: 'é', x: null }], 10: true, 2: false, a: { c: -0 } };
    expect(JSON.stringify(jsonSafe(value, (s) => s, 'test'))).not.toBe(canonicalJson(value)); // an object lists "2" before "10", whatever the sort
    expect(canonicalJson(jsonSafe(value, (s) => s, 'test'))).toBe(canonicalJson(value));
  });
});

describe('argumentsHash', () => {
  it('is the sha256 of the canonical JSON: key order does not matter, values do', () => {
    expect(argumentsHash({ a: 1, b: [1, 2] })).toBe(argumentsHash({ b: [1, 2], a: 1 }));
    expect(argumentsHash({ a: 1 })).not.toBe(argumentsHash({ a: '1' }));
    expect(argumentsHash({})).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });
});

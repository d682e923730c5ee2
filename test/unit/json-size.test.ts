// jsonFits must answer exactly `Buffer.byteLength(JSON.stringify(v)) <= limit`, at every limit.
import { expect, test } from 'vitest';
import { jsonFits, jsonLengthFits } from '../../src/core/json-size.js';

const values: unknown[] = [
  null,
  0,
  -0,
  1.5e-7,
  Number.NaN,
  Infinity,
  true,
  '',
  'é€😀 "q" \\ \n\u2028',
  '\ud800',
  [],
  {},
  [undefined, () => 1, Symbol('s'), 1],
  { a: undefined, b: () => 1, c: 'x' },
  { ké: ['v', { n: null, d: new Date(0) }], e: [[[]]], long: 'x'.repeat(500) },
  JSON.parse('{"__proto__": {"a": 1}, "b": [1, 2, {"c": "d"}]}'),
];

test.each(values.map((v, i) => ({ v, i })))('value $i at every limit around its size', ({ v }) => {
  const size = Buffer.byteLength(JSON.stringify(v) ?? '');
  for (let limit = Math.max(0, size - 3); limit <= size + 3; limit++) {
    expect(jsonFits(v, limit)).toBe(size <= limit);
    for (const nativeFrom of [0, 1, 2, 4]) expect(jsonFits(v, limit, nativeFrom)).toBe(size <= limit);
  }
  expect(jsonFits(v, 0)).toBe(size === 0);
});

test.each(values.map((v, i) => ({ v, i })))('jsonLengthFits: value $i at every limit around its length', ({ v }) => {
  const length = (JSON.stringify(v) ?? '').length;
  for (let limit = Math.max(0, length - 3); limit <= length + 3; limit++) expect(jsonLengthFits(v, limit)).toBe(length <= limit);
});

// Duplicate JSON keys: the fast path (keys spelled in the text vs keys held by JSON.parse's result)
// must never hide a duplicate the full scan finds.
import { describe, expect, test } from 'vitest';
import { countKeys, findDuplicateKeys } from '../../src/source/json-index.js';

const texts = [
  '{"a": 1, "b": {"c": [1, {"d": 2}]}}',
  '{"a": "x\\": y", "b": "\\\\", "c": "\\\\\\"d\\":"}',
  '{ "k" : { "k" : { "k" : 1 } } }',
  '{"__proto__": {"x": 1}, "y": ["a:", "b\\"", {"z": null}]}',
  '[{"a": 1}, {"a": 2}, "q:"]',
  '"just a string: yes"',
  '{"a": 1, "a": 2}',
  '{"o": {"b": 1, "c": 2, "b": 3}, "p": {"b": 1}}',
  '{"a": {"x": "\\u0022a\\u0022:"}, "a": []}',
  '{"\\u0061": 1, "a": 2}',
];

describe('duplicate keys: fast path and full scan agree', () => {
  test.each(texts.map((t) => ({ t })))('$t', ({ t }) => {
    const parsed: unknown = JSON.parse(t);
    expect(findDuplicateKeys(t, parsed)).toEqual(findDuplicateKeys(t));
  });
  test('some texts have duplicates, some do not', () => {
    const found = texts.map((t) => findDuplicateKeys(t, JSON.parse(t)).length);
    expect(found.filter((n) => n > 0)).toHaveLength(4);
    expect(countKeys('{"a": {"b": "c:", "d": 1}}')).toBe(3);
  });
});

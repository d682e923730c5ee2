// The $ref cycle check's fast path (src/openapi/scan.ts hasRefCycle, on the targets of the
// document's $refs) must find exactly the cycles the reporting walk names: every shape below is
// checked both ways.
import { describe, expect, test } from 'vitest';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { checkRefCycles } from '../../src/openapi/check.js';
import { hasRefCycle, scanDocument } from '../../src/openapi/scan.js';
import type { YamlSource } from '../../src/source/source.js';

const source = { locate: () => ({ file: 'spec.json', pointer: '', line: 1, col: 1 }) } as unknown as YamlSource;
const doc = (schemas: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ openapi: '3.0.3', paths: {}, components: { schemas, ...extra } });

const cases: Array<[string, Record<string, unknown>, number]> = [
  ['bare refs A → B → A', doc({ A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/A' } }), 1],
  ['allOf of itself', doc({ A: { allOf: [{ $ref: '#/components/schemas/A' }] } }), 1],
  ['not of itself', doc({ A: { not: { $ref: '#/components/schemas/A' } } }), 1],
  ['oneOf through a member pointer', doc({ A: { oneOf: [{ $ref: '#/components/schemas/B' }] }, B: { $ref: '#/components/schemas/A/oneOf/0' } }), 1],
  ['percent-encoded pointer', doc({ 'A B': { $ref: '#/components/schemas/A%20B' } }), 1],
  ['escaped ~1 pointer', doc({ 'a/b': { anyOf: [{ $ref: '#/components/schemas/a~1b' }] } }), 1],
  [
    'two separate cycles',
    doc({ A: { $ref: '#/components/schemas/A' }, B: { allOf: [{ $ref: '#/components/schemas/C' }] }, C: { $ref: '#/components/schemas/B' } }),
    2,
  ],
  ['parameter cycle', doc({}, { parameters: { p: { $ref: '#/components/parameters/q' }, q: { $ref: '#/components/parameters/p' } } }), 1],
  ['recursion through properties is fine', doc({ Node: { type: 'object', properties: { next: { $ref: '#/components/schemas/Node' } } } }), 0],
  ['recursion through items is fine', doc({ L: { type: 'array', items: { $ref: '#/components/schemas/L' } } }), 0],
  ['a chain that ends', doc({ A: { $ref: '#/components/schemas/B' }, B: { allOf: [{ $ref: '#/components/schemas/C' }] }, C: { type: 'string' } }), 0],
  ['dangling ref', doc({ A: { $ref: '#/components/schemas/Nope' } }), 0],
  ['leading-zero index does not resolve', doc({ A: { oneOf: [{ $ref: '#/components/schemas/A/oneOf/00' }] } }), 0],
  ['external ref is not followed', doc({ A: { $ref: 'other.yaml#/A' } }), 0],
];

describe('$ref cycles: fast check and reporting walk agree', () => {
  test.each(cases.map(([name, d, n]) => ({ name, d, n })))('$name', ({ d, n }) => {
    expect(hasRefCycle(d, scanDocument(d).refs)).toBe(n > 0);
    const diagnostics = new Diagnostics();
    expect(checkRefCycles({ doc: d, source, diagnostics })).toBe(n);
    expect(diagnostics.items.filter((i) => i.code === 'MCPGEN_SPEC_REF_CYCLE')).toHaveLength(n);
  });
});

test('a document too deep for the scan still has its cycles found (a bundled file is not depth-checked)', () => {
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 2600; i++) deep = { allOf: [deep] };
  const d = doc({ A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/A' }, Deep: deep });
  const diagnostics = new Diagnostics();
  expect(checkRefCycles({ doc: d, source, diagnostics })).toBe(1);
});

import { describe, expect, it } from 'vitest';
import { withDefs } from '../../../templates/runtime/core/defs.js';

describe('withDefs', () => {
  it('attaches the named definitions, in order, after the schema keys', () => {
    const table = { B: { type: 'string' }, A: { type: 'integer' }, C: { type: 'null' } };
    const out = withDefs({ type: 'object', properties: { a: { $ref: '#/$defs/A' } } }, table, ['A', 'B']);
    expect(JSON.stringify(out)).toBe('{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"integer"},"B":{"type":"string"}}}');
  });

  it('keeps a definition named __proto__ as data and refuses unknown names', () => {
    const table = JSON.parse('{"__proto__":{"type":"string"}}') as Record<string, { type: string }>;
    const out = withDefs({ type: 'object' }, table, ['__proto__']) as { $defs: object };
    expect(Object.getPrototypeOf(out.$defs)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"type":"object","$defs":{"__proto__":{"type":"string"}}}');
    expect(() => withDefs({}, {}, ['toString'])).toThrow(/toString/);
  });
});

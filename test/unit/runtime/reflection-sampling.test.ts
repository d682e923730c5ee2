import { describe, expect, it } from 'vitest';
import { DEFAULT_JUSTIFICATION_SCHEMA, embedJustificationSchema, extractJsonObject, justificationChecker } from '../../../templates/runtime/reflection-sampling.js';

describe('extractJsonObject', () => {
  it('takes a fenced json block first', () => {
    expect(extractJsonObject('Here {not json}\n```json\n{"a": 1}\n```\nand {"b": 2}')).toEqual({ a: 1 });
    expect(extractJsonObject('```\n{"a": [1, {"b": "}"}]}\n```')).toEqual({ a: [1, { b: '}' }] });
  });

  it('otherwise the first balanced object that parses, braces in strings included', () => {
    expect(extractJsonObject('Sure: {"intent": "use {x} \\" }", "n": {"m": 1}} trailing')).toEqual({ intent: 'use {x} " }', n: { m: 1 } });
    expect(extractJsonObject('{oops} then {"ok": true}')).toEqual({ ok: true });
  });

  it('returns undefined without an object', () => {
    expect(extractJsonObject('no json here')).toBeUndefined();
    expect(extractJsonObject('[1, 2]')).toBeUndefined();
    expect(extractJsonObject('{"unterminated": 1')).toBeUndefined();
  });
});

describe('justification checking', () => {
  it('checks the default four-key schema with field-level messages', () => {
    const check = justificationChecker(DEFAULT_JUSTIFICATION_SCHEMA);
    expect(check({ intent: 'a', alternatives: [], choice: 'b', confidence: 0 })).toEqual([]);
    expect(check({ intent: 'a', alternatives: [], choice: 'b', confidence: -0.1 })).toEqual(['justification.confidence: must be >= 0']);
    expect(check(null)).toEqual(['justification: must be object']);
  });

  it('keeps local $refs working when the schema is embedded', () => {
    const schema = { $defs: { pct: { type: 'number', minimum: 0, maximum: 100 } }, type: 'object', properties: { risk: { $ref: '#/$defs/pct' } }, required: ['risk'] };
    const check = justificationChecker(schema);
    expect(check({ risk: 50 })).toEqual([]);
    expect(check({ risk: 500 })).toEqual(['justification.risk: must be <= 100']);
    const embedded = embedJustificationSchema(schema, { hash: { type: 'string' } }, ['hash']);
    expect(embedded).toMatchObject({ required: ['hash', 'justification'], $defs: schema.$defs, properties: { justification: { properties: schema.properties } } });
  });
});

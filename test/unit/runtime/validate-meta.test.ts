/**
 * The precompiled 2020-12 meta-schema validator (templates/runtime/generated/meta-validator.gen.ts) is up to
 * date with scripts/meta-validator.mjs, and says exactly what Ajv's own compiled meta-schema says:
 * same verdict, same error objects, same "cannot be compiled" message through validateArguments.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FormatsPlugin } from 'ajv-formats';
import formatsImport from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { META_VALIDATOR_FILE, metaValidatorSource } from '../../../scripts/meta-validator.mjs';
import type { JsonSchema, OperationTool } from '../../../templates/runtime/core/types.js';
import { validateMetaSchema } from '../../../templates/runtime/generated/meta-validator.gen.js';
import { validateArguments } from '../../../templates/runtime/validation/validate.js';
import { AJV_OPTIONS } from '../../../templates/runtime/validation/validate-options.js';

const formatsModule = formatsImport as FormatsPlugin | { default: FormatsPlugin };
const addFormats = typeof formatsModule === 'function' ? formatsModule : formatsModule.default;

/** What validate.ts did before: an Ajv instance that compiles the meta-schema itself. */
function plainAjv(): Ajv2020 {
  const ajv = new Ajv2020(AJV_OPTIONS);
  addFormats(ajv);
  return ajv;
}

const invalid: Record<string, unknown>[] = [
  { type: 'nope' },
  { type: ['string', 'string'] },
  { type: [] },
  { required: 'a' },
  { required: ['a', 'a'] },
  { minimum: 'x' },
  { maxLength: -1 },
  { multipleOf: 0 },
  { properties: { a: { type: 1 }, b: { items: 5 } } },
  { additionalProperties: 'no' },
  { allOf: [] },
  { anyOf: [{ type: 'string' }, 3] },
  { $defs: { x: { $ref: 5 } } },
  { definitions: { x: { type: 'nope' } } },
  { $anchor: '1bad' },
  { $id: 'a#b' },
  { $dynamicRef: 3 },
  { dependentRequired: { a: [1, 1] } },
  { dependentSchemas: { a: 'x' } },
  { dependencies: { a: 3 } },
  { unevaluatedProperties: 1, unevaluatedItems: 'x' },
  { contentEncoding: 1, contentMediaType: 2 },
  { enum: 'a', const: undefined, examples: 4 },
  { prefixItems: [], contains: 1, minContains: -2 },
  { patternProperties: { '^a': 1 }, propertyNames: 'x' },
  { if: 1, then: 2, else: 3, not: 4 },
  { title: 1, description: 2, deprecated: 'no', readOnly: 1, writeOnly: 1 },
  { format: 1, $comment: 2, $vocabulary: { x: 'y' } },
  { items: { properties: { deep: { anyOf: [{ not: { type: 'nope' } }] } } } },
];

const valid: unknown[] = [
  true,
  false,
  {},
  {
    type: 'object',
    properties: { a: { type: 'string', pattern: '^[a-z]+$', format: 'email' }, b: { type: ['integer', 'null'], multipleOf: 0.1 } },
    required: ['a'],
    additionalProperties: false,
  },
  { $defs: { Pet: { type: 'object', properties: { parent: { $ref: '#/$defs/Pet' } } } }, $ref: '#/$defs/Pet' },
  { $id: 'https://example.com/x', $anchor: 'top', enum: [1, 'a', null], const: { a: 1 }, examples: [1] },
  { prefixItems: [{ type: 'string' }], items: false, contains: { type: 'number' }, minContains: 1, uniqueItems: true },
  { if: { type: 'string' }, then: { minLength: 1 }, else: { minimum: 0 }, unevaluatedProperties: false },
  { 'x-vendor': 1, nullable: true, example: 'e' },
];

describe('meta-validator.ts', () => {
  it('is what scripts/meta-validator.mjs generates today (rerun `node --import tsx scripts/meta-validator.mjs`)', () => {
    expect(readFileSync(META_VALIDATOR_FILE, 'utf8')).toBe(metaValidatorSource(AJV_OPTIONS));
  });

  it.each([...invalid, ...valid].map((s) => [JSON.stringify(s), s]))('judges %s as Ajv does, with the same errors', (_, schema) => {
    const ajv = plainAjv();
    const expected = ajv.validateSchema(schema as JsonSchema);
    expect(validateMetaSchema(schema)).toBe(expected);
    expect(validateMetaSchema.errors ?? null).toEqual(ajv.errors ?? null);
  });

  it.each(invalid.map((s) => [JSON.stringify(s), s]))('refuses %s with the message a plain Ajv gives', (_, schema) => {
    let message = '';
    try {
      plainAjv().compile(schema);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^schema is invalid: /);
    const tool: OperationTool = { kind: 'operation', name: 'broken', inputSchema: schema as JsonSchema, http: { method: 'GET', path: '/', params: [] } };
    expect(() => validateArguments(tool, {})).toThrow(`The input schema of tool broken cannot be compiled: ${message}`);
  });

  it('leaves other meta-schemas and a malformed $schema to Ajv', () => {
    const other: OperationTool = {
      kind: 'operation',
      name: 'draft7',
      inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' },
      http: { method: 'GET', path: '/', params: [] },
    };
    expect(() => validateArguments(other, {})).toThrow(
      'The input schema of tool draft7 cannot be compiled: no schema with key or ref "http://json-schema.org/draft-07/schema#"',
    );
    const bad: OperationTool = {
      kind: 'operation',
      name: 'badmeta',
      inputSchema: { $schema: 1 } as unknown as JsonSchema,
      http: { method: 'GET', path: '/', params: [] },
    };
    expect(() => validateArguments(bad, {})).toThrow('The input schema of tool badmeta cannot be compiled: $schema must be a string');
  });
});

import { describe, expect, it } from 'vitest';
import type { JsonSchema, OperationTool } from '../../../templates/runtime/core/types.js';
import { compiledValidatorCount, formatPath, MAX_MESSAGES, validateArguments, validateOutput } from '../../../templates/runtime/validation/validate.js';

function tool(name: string, inputSchema: JsonSchema, outputSchema?: JsonSchema): OperationTool {
  const t: OperationTool = { kind: 'operation', name, inputSchema, http: { method: 'GET', path: '/', params: [] } };
  return outputSchema ? { ...t, outputSchema } : t;
}

const petTool = tool('addPet', {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  additionalProperties: false,
  required: ['petId', 'body'],
  properties: {
    petId: { type: 'integer' },
    status: { enum: ['available', 'pending', 'sold'] },
    email: { type: 'string', format: 'email' },
    body: { $ref: '#/$defs/Pet' },
  },
  $defs: {
    Pet: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' } },
        parent: { $ref: '#/$defs/Pet' },
      },
    },
  },
});

describe('validateArguments', () => {
  it('accepts valid arguments, including recursive $defs references', () => {
    expect(validateArguments(petTool, { petId: 1, body: { name: 'Rex', parent: { name: 'Max', tags: ['x'] } } })).toEqual([]);
  });

  it('names each bad field by its path', () => {
    const messages = validateArguments(petTool, { petId: 'one', body: { tags: ['a', 2] }, foo: 1, status: 'lost', email: 'nope' });
    expect(messages).toEqual(
      expect.arrayContaining([
        'petId: must be integer',
        'body.name: is required',
        'body.tags[1]: must be string',
        'foo: is not an accepted argument',
        'status: must be one of "available", "pending", "sold"',
        'email: must match format "email"',
      ]),
    );
    expect(messages).toHaveLength(6);
  });

  it('reports missing required arguments and errors found through $ref', () => {
    expect(validateArguments(petTool, {})).toEqual(['petId: is required', 'body: is required']);
    expect(validateArguments(petTool, { petId: 1, body: { name: 'a', parent: { name: 3 } } })).toEqual(['body.parent.name: must be string']);
  });

  it('labels a wrong top-level value as "arguments"', () => {
    expect(validateArguments(petTool, 'x')).toEqual(['arguments: must be object']);
  });

  it('describes nested unknown properties, const and multi-type errors', () => {
    const t = tool('nested', {
      type: 'object',
      properties: {
        opts: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
        mode: { const: 'fast' },
        n: { type: ['integer', 'null'] },
      },
    });
    expect(validateArguments(t, { opts: { b: 1 }, mode: 'slow', n: 'x' })).toEqual([
      'opts.b: is not an accepted property',
      'mode: must be "fast"',
      'n: must be integer or null',
    ]);
  });

  it('quotes odd property names in paths', () => {
    expect(formatPath(['body', 'a b', '0', 'X-Rate-Limit'])).toBe('body["a b"][0].X-Rate-Limit');
    const t = tool('odd', { type: 'object', required: ['a.b'] });
    expect(validateArguments(t, {})).toEqual(['["a.b"]: is required']);
  });

  it('caps the number of messages', () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 30; i++) properties[`p${i}`] = { type: 'integer' };
    const t = tool('many', { type: 'object', properties });
    const args = Object.fromEntries(Object.keys(properties).map((k) => [k, 'x']));
    const messages = validateArguments(t, args);
    expect(messages).toHaveLength(MAX_MESSAGES + 1);
    expect(messages.at(-1)).toBe('(10 more problems not shown)');
  });

  it('compiles lazily, once per tool, and recompiles when the schema object changes', () => {
    const before = compiledValidatorCount();
    const tools = Array.from({ length: 1200 }, (_, i) => tool(`lazy${i}`, { type: 'object', properties: { x: { type: 'integer' } } }));
    expect(compiledValidatorCount()).toBe(before);
    validateArguments(tools[5]!, { x: 1 });
    validateArguments(tools[5]!, { x: 2 });
    expect(compiledValidatorCount()).toBe(before + 1);
    const replaced = tool('lazy5', { type: 'object', properties: { x: { type: 'string' } } });
    expect(validateArguments(replaced, { x: 1 })).toEqual(['x: must be string']);
    expect(validateArguments(tools[5]!, { x: 1 })).toEqual([]);
  });

  it('does not confuse tools whose schemas share an $id', () => {
    const a = tool('idA', { $id: 'https://example.com/same', type: 'object', properties: { v: { type: 'integer' } } });
    const b = tool('idB', { $id: 'https://example.com/same', type: 'object', properties: { v: { type: 'string' } } });
    expect(validateArguments(a, { v: 'x' })).toEqual(['v: must be integer']);
    expect(validateArguments(b, { v: 1 })).toEqual(['v: must be string']);
  });

  it('throws a clear error for a schema that cannot compile', () => {
    const t = tool('broken', { type: 'object', properties: { x: { $ref: '#/$defs/Missing' } } });
    expect(() => validateArguments(t, {})).toThrow(/input schema of tool broken cannot be compiled/);
  });
});

describe('validateOutput', () => {
  const out = tool('getPet', { type: 'object' }, { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, name: { type: 'string' } } });

  it('accepts matching results and reports mismatches by path', () => {
    expect(validateOutput(out, { id: 1, name: 'Rex' })).toEqual([]);
    expect(validateOutput(out, { id: 'x', name: 2 })).toEqual(['id: must be integer', 'name: must be string']);
    expect(validateOutput(out, {})).toEqual(['id: is required']);
  });

  it('accepts anything when the tool has no output schema', () => {
    expect(validateOutput(petTool, 'whatever')).toEqual([]);
  });
});

describe('inherited properties', () => {
  it('does not mistake Object.prototype members for arguments', async () => {
    const { validateArguments } = await import('../../../templates/runtime/validation/validate.js');
    const tool = {
      kind: 'operation' as const,
      name: 'protoProps',
      inputSchema: { type: 'object', properties: { constructor: { type: 'string' }, toString: { type: 'string' } }, required: [] },
      http: { method: 'GET' as const, path: '/', params: [] },
    };
    expect(validateArguments(tool, {})).toEqual([]);
    expect(validateArguments(tool, { constructor: 1 })).toEqual(['constructor: must be string']);
  });
});

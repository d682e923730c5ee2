import { describe, expect, it } from 'vitest';
import { analyseRefs, SchemaConverter } from '../../src/openapi/schema.js';

const convert = (doc: Record<string, unknown>, schema: unknown, mode: 'input' | 'output' = 'input') => {
  const scope = new SchemaConverter(doc).scope(mode);
  const value = scope.convert(schema) as Record<string, unknown>;
  return scope.finish({ type: 'object', properties: { x: value } });
};

describe('SchemaConverter', () => {
  it('inlines acyclic references', () => {
    const doc = { components: { schemas: { Tag: { type: 'object', properties: { name: { type: 'string' } } } } } };
    expect(convert(doc, { $ref: '#/components/schemas/Tag' })).toStrictEqual({
      type: 'object',
      properties: { x: { type: 'object', properties: { name: { type: 'string' } } } },
    });
  });

  it('turns a self-reference into $defs + $ref instead of recursing', () => {
    const doc = { components: { schemas: { Node: { type: 'object', properties: { child: { $ref: '#/components/schemas/Node' } } } } } };
    expect(convert(doc, { $ref: '#/components/schemas/Node' })).toStrictEqual({
      type: 'object',
      properties: { x: { $ref: '#/$defs/Node' } },
      $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' } } } },
    });
  });

  it('handles mutual recursion and pulls in every definition needed transitively', () => {
    const doc = {
      definitions: {
        A: { type: 'object', properties: { b: { $ref: '#/definitions/B' } } },
        B: { type: 'object', properties: { a: { $ref: '#/definitions/A' } } },
        Wrapper: { type: 'object', properties: { a: { $ref: '#/definitions/A' } } },
      },
    };
    const out = convert(doc, { $ref: '#/definitions/Wrapper' });
    expect(out.properties).toStrictEqual({ x: { type: 'object', properties: { a: { $ref: '#/$defs/A' } } } });
    expect(Object.keys(out.$defs as object)).toEqual(['A', 'B']);
    expect(analyseRefs(doc).cyclic).toEqual(new Set(['#/definitions/A', '#/definitions/B']));
  });

  it('rewrites the OpenAPI 3.0 dialect', () => {
    const doc = {};
    const out = convert(doc, {
      type: 'object',
      properties: {
        a: { type: 'string', nullable: true, enum: ['x', 'y'] },
        n: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 9, exclusiveMaximum: false },
        f: { type: 'file' },
        list: { type: 'array' },
        bad: { type: 'string', pattern: '(?i)abc' },
        good: { type: 'string', pattern: '^[a-z]+$' },
        ext: { type: 'string', 'x-foo': 1, example: 'e', xml: { name: 'q' } },
      },
      discriminator: { propertyName: 'a' },
    });
    expect((out.properties as Record<string, unknown>).x).toStrictEqual({
      type: 'object',
      properties: {
        a: { type: ['string', 'null'], enum: ['x', 'y', null] },
        n: { type: 'number', exclusiveMinimum: 0, maximum: 9 },
        f: { type: 'string', format: 'binary' },
        list: { type: 'array', items: {} },
        bad: { type: 'string' },
        good: { type: 'string', pattern: '^[a-z]+$' },
        ext: { type: 'string' },
      },
    });
  });

  it('drops readOnly properties from input schemas and writeOnly ones from output schemas', () => {
    const doc = {
      components: {
        schemas: {
          User: {
            type: 'object',
            required: ['id', 'password', 'name'],
            properties: { id: { type: 'integer', readOnly: true }, password: { type: 'string', writeOnly: true }, name: { type: 'string' } },
          },
        },
      },
    };
    const input = convert(doc, { $ref: '#/components/schemas/User' }, 'input');
    const output = convert(doc, { $ref: '#/components/schemas/User' }, 'output');
    expect((input.properties as Record<string, unknown>).x).toStrictEqual({
      type: 'object',
      required: ['password', 'name'],
      properties: { password: { type: 'string' }, name: { type: 'string' } },
    });
    expect((output.properties as Record<string, unknown>).x).toStrictEqual({
      type: 'object',
      required: ['id', 'name'],
      properties: { id: { type: 'integer' }, name: { type: 'string' } },
    });
  });

  it('wraps a nullable $ref and keeps a sibling description', () => {
    const doc = { components: { schemas: { T: { type: 'string' } } } };
    expect((convert(doc, { $ref: '#/components/schemas/T', nullable: true, description: 'd' }).properties as Record<string, unknown>).x).toStrictEqual({
      type: ['string', 'null'],
      description: 'd',
    });
  });

  it('moves large shared definitions to $defs so one tool carries them once', () => {
    const big = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`field${i}`, { type: 'string', description: 'x'.repeat(20) }])),
    };
    const wrapper = { type: 'object', properties: { a: { $ref: '#/components/schemas/Big' }, b: { $ref: '#/components/schemas/Big' } } };
    const doc = { components: { schemas: { Big: big, Wrapper: wrapper } } };
    const out = convert(doc, wrapper);
    expect((out.properties as Record<string, Record<string, unknown>>).x!.properties).toStrictEqual({ a: { $ref: '#/$defs/Big' }, b: { $ref: '#/$defs/Big' } });
    expect(Object.keys(out.$defs as object)).toEqual(['Big']);
  });

  it('names definitions independently of the order tools reach them', () => {
    const doc = {
      components: { schemas: { Node: { type: 'object', properties: { n: { $ref: '#/components/schemas/Node' } } } } },
      definitions: { Node: { type: 'object', properties: { n: { $ref: '#/definitions/Node' } } } },
    };
    const conv = new SchemaConverter(doc);
    const s1 = conv.scope('input');
    s1.convert({ $ref: '#/definitions/Node' });
    const s2 = new SchemaConverter(doc).scope('input');
    s2.convert({ $ref: '#/components/schemas/Node' });
    s2.convert({ $ref: '#/definitions/Node' });
    expect(Object.keys(s1.finish({}).$defs as object)).toEqual(['Node_2']);
    expect(Object.keys(s2.finish({}).$defs as object)).toEqual(['Node', 'Node_2']);
  });

  it('follows $ref chains with deref and stops on loops', () => {
    const doc = { a: { $ref: '#/b' }, b: { $ref: '#/c' }, c: { ok: true }, l1: { $ref: '#/l2' }, l2: { $ref: '#/l1' } };
    const conv = new SchemaConverter(doc);
    expect(conv.deref({ $ref: '#/a' })).toStrictEqual({ ok: true });
    expect(conv.deref({ $ref: '#/l1' })).toBeUndefined();
  });
});

/**
 * The result contract and the schemas a tool publishes: lenient output schemas, the
 * `{status, data}` wrapper, portable rewrites and input slimming.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it, test } from 'vitest';
import { portable } from '../../src/ir/schema/portable.js';
import { slimInput } from '../../src/ir/schema/slim-input.js';
import { ANY_VALUE, lenientRoot, outputContract } from '../../src/ir/tools/output-schema.js';
import { portabilityProblems } from '../helpers/portability.js';

const ajv = new Ajv2020({ strict: false, allErrors: true });
const accepts = (schema: object, value: unknown) => ajv.compile(schema)(value);

const pet = {
  type: 'object',
  required: ['id', 'name'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer', format: 'int64', minimum: 1, description: 'The id.' },
    name: { type: 'string', pattern: '^[a-z]+$', examples: ['rex'] },
    status: { type: 'string', enum: ['available', 'sold'] },
    owner: { $ref: '#/$defs/Owner' },
    tags: { type: 'array', items: { $ref: '#/$defs/Tag' } },
  },
  $defs: {
    Owner: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, pets: { type: 'array', items: { $ref: '#/$defs/Owner' } } } },
    Tag: { type: 'object', properties: { label: { type: 'string' } } },
  },
};

describe('lenient output schemas', () => {
  it('drop required, formats, patterns, enums, bounds, descriptions and examples, and accept null below the root', () => {
    const s = lenientRoot(pet, 1);
    expect(s).toEqual({
      type: 'object',
      properties: {
        id: { anyOf: [{ type: 'number' }, { type: 'null' }] },
        name: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        status: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        owner: { anyOf: [{ type: 'object' }, { type: 'null' }] },
        // a list keeps its items on its own level: the objects are cut at the same depth
        tags: { anyOf: [{ type: 'array', items: { anyOf: [{ type: 'object' }, { type: 'null' }] } }, { type: 'null' }] },
      },
    });
    expect(JSON.stringify(s)).not.toMatch(/"type":\[/);
    expect(portabilityProblems(s)).toEqual([]);
  });

  it('accept every plausible drift of a body the strict schema rejects', () => {
    const s = lenientRoot(pet, 2);
    const drifting = [
      { id: 1, name: 'rex', extra: true },
      { id: 1.5, name: null },
      {},
      { id: 2, owner: null, tags: [null, { label: null, more: 1 }] },
      { id: 3, status: 'lost', name: 'UPPER', owner: { pets: [{ name: 5 }] } },
    ];
    for (const body of drifting) {
      expect(accepts(pet, body), JSON.stringify(body)).toBe(false);
      expect(accepts(s, body), JSON.stringify(body)).toBe(true);
    }
  });

  it('inline recursive definitions only down to the depth, and never emit {}', () => {
    const deep = lenientRoot(pet, 3);
    expect(deep.$defs).toBeUndefined();
    expect(JSON.stringify(deep)).not.toContain('$ref');
    expect(JSON.stringify(deep)).not.toContain('{}');
    const owner = (deep.properties as Record<string, { anyOf: Array<Record<string, unknown>> }>).owner!.anyOf[0]!;
    expect(Object.keys(owner.properties as object)).toEqual(['name', 'pets']);
  });

  it('merge allOf/oneOf objects into one object, and leave conflicting properties open', () => {
    const s = lenientRoot(
      {
        type: 'object',
        allOf: [
          { type: 'object', properties: { a: { type: 'string' }, c: { type: 'string' } } },
          { properties: { b: { type: 'integer' }, c: { type: 'object' } } },
        ],
      } as never,
      1,
    );
    expect(s.type).toBe('object');
    expect(Object.keys((s.properties ?? {}) as object).sort()).toEqual(['a', 'b']);
    // so an operation answering with such a schema returns the object itself
    expect(
      outputContract(
        [
          {
            kind: 'json',
            schema: {
              allOf: [{ $ref: '#/$defs/A' }, { properties: { b: { type: 'string' } } }],
              $defs: { A: { type: 'object', properties: { a: { type: 'string' } } } },
            },
          },
        ],
        'lenient',
      ),
    ).toEqual({
      shape: 'object',
      schema: { type: 'object', properties: { a: { anyOf: [{ type: 'string' }, { type: 'null' }] }, b: { anyOf: [{ type: 'string' }, { type: 'null' }] } } },
    });
    // but one of an object or an array is not always an object
    expect(outputContract([{ kind: 'json', schema: { oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'string' } }] } }], 'lenient').shape).toBe(
      'wrapped',
    );
  });
});

describe('the result contract', () => {
  const objectSchema = { type: 'object', properties: { id: { type: 'integer' } } };
  it('an operation whose every 2xx is a JSON object returns that object', () => {
    const c = outputContract(
      [
        { kind: 'json', schema: objectSchema },
        { kind: 'json', schema: objectSchema },
      ],
      'lenient',
    );
    expect(c.shape).toBe('object');
    expect(c.schema).toEqual({ type: 'object', properties: { id: { anyOf: [{ type: 'number' }, { type: 'null' }] } } });
  });

  it('anything else is {status, data}', () => {
    const array = { type: 'array', items: objectSchema };
    expect(outputContract([{ kind: 'json', schema: array }], 'lenient')).toEqual({
      shape: 'wrapped',
      schema: {
        type: 'object',
        properties: {
          status: { type: 'integer' },
          data: {
            anyOf: [
              {
                type: 'array',
                items: { anyOf: [{ type: 'object', properties: { id: { anyOf: [{ type: 'number' }, { type: 'null' }] } } }, { type: 'null' }] },
              },
              { type: 'null' },
            ],
          },
        },
      },
    });
    // an object 200 next to a 204, text, or no 2xx at all
    for (const bodies of [
      [{ kind: 'json' as const, schema: objectSchema }, { kind: 'empty' as const }],
      [{ kind: 'other' as const }],
      [],
      [{ kind: 'json' as const }],
    ]) {
      const c = outputContract(bodies, 'lenient');
      expect(c.shape).toBe('wrapped');
      expect((c.schema!.properties as Record<string, unknown>).status).toEqual({ type: 'integer' });
    }
    expect(outputContract([{ kind: 'empty' }], 'lenient').schema).toEqual({ type: 'object', properties: { status: { type: 'integer' } } });
  });

  it('strict keeps the spec schema for object results; none publishes nothing', () => {
    expect(outputContract([{ kind: 'json', schema: objectSchema }], 'strict')).toEqual({ shape: 'object', schema: objectSchema });
    expect(outputContract([{ kind: 'json', schema: { type: 'array', items: objectSchema } }], 'strict')).toEqual({ shape: 'wrapped' });
    expect(outputContract([{ kind: 'json', schema: objectSchema }], 'none')).toEqual({ shape: 'object' });
  });
});

describe('portable schemas', () => {
  it('rewrites type arrays, untyped and boolean schemas without changing what validates', () => {
    const input = {
      type: 'object',
      properties: {
        a: { type: ['string', 'null'], minLength: 2 },
        b: {},
        c: { description: 'anything' },
        d: true,
        e: { type: 'array', items: {} },
        f: { type: 'object', additionalProperties: true },
        g: { not: {} },
        h: { type: ['array', 'null'], items: { type: 'string' }, maxItems: 2 },
      },
      additionalProperties: false,
    };
    const out = portable(input);
    expect(out.properties).toEqual({
      a: { anyOf: [{ type: 'string' }, { type: 'null' }], minLength: 2 },
      b: ANY_VALUE,
      c: { description: 'anything', ...ANY_VALUE },
      d: ANY_VALUE,
      e: { type: 'array', items: ANY_VALUE },
      f: { type: 'object', additionalProperties: true },
      g: { not: {} },
      h: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }], maxItems: 2 },
    });
    expect(portabilityProblems(out)).toEqual([]);
    for (const v of [
      { a: 'xy' },
      { a: null },
      { a: 'x' },
      { b: [1], c: null, d: { x: 1 }, e: [1, 'a', null] },
      { g: 1 },
      { z: 1 },
      { h: ['a'] },
      { h: [1] },
      { h: ['a', 'b', 'c'] },
      { h: null },
    ]) {
      expect(accepts(out, v), JSON.stringify(v)).toBe(accepts(input, v));
    }
  });

  it('keeps a property named __proto__ an own property', () => {
    const input = JSON.parse('{"type":"object","properties":{"__proto__":{"type":["string","null"]}}}') as Record<string, unknown>;
    const out = portable(input);
    expect(Object.hasOwn(out.properties as object, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out.properties)).toBe(Object.prototype);
  });
});

describe('input slimming', () => {
  const big = {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'See [the docs](https://example.com/docs/very/long/link) for ids. ' + 'More words here. '.repeat(30) },
      body: { $ref: '#/$defs/Spec' },
    },
    required: ['id', 'body'],
    additionalProperties: false,
    $defs: {
      Spec: {
        type: 'object',
        description: 'A spec.',
        required: ['containers'],
        properties: { containers: { type: 'array', items: { $ref: '#/$defs/Container' } }, name: { type: 'string', description: 'x'.repeat(400) } },
      },
      Container: {
        type: 'object',
        description: 'y'.repeat(3000),
        properties: {
          image: { type: 'string', description: 'z'.repeat(3000) },
          env: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
        },
      },
    },
  };

  it('cuts argument descriptions, with links reduced to their text', () => {
    const { schema } = slimInput(big, { maxBytes: 1_000_000, maxArgumentDescriptionLength: 80 });
    const id = (schema.properties as Record<string, { description: string }>).id!;
    expect(id.description.startsWith('See the docs for ids.')).toBe(true);
    expect(id.description.length).toBeLessThanOrEqual(80);
  });

  it('drops nested descriptions, then cuts at the deepest level that fits, keeping every argument', () => {
    const r = slimInput(big, { maxBytes: 600, maxArgumentDescriptionLength: 80 });
    expect(r.cutAt).toBeDefined();
    expect(Buffer.byteLength(JSON.stringify(r.schema))).toBeLessThanOrEqual(600);
    expect(Object.keys(r.schema.properties as object)).toEqual(['id', 'body']);
    expect(r.schema.required).toEqual(['id', 'body']);
    expect(JSON.stringify(r.schema)).not.toContain('$ref');
    expect(portabilityProblems(portable(r.schema))).toEqual([]);
    // what the cut schema accepts includes everything the full one accepts
    const full = { id: 'a', body: { containers: [{ image: 'nginx', env: [{ name: 'X' }] }] } };
    expect(accepts(big, full)).toBe(true);
    expect(accepts(r.schema, full)).toBe(true);
    // and it still refuses what is wrong at the levels it keeps
    expect(accepts(r.schema, { id: 'a' })).toBe(false);
    expect(accepts(r.schema, { id: 'a', body: { containers: 'nope' } })).toBe(false);
  });

  it('leaves a schema that fits alone (but for long argument descriptions)', () => {
    const small = { type: 'object', properties: { q: { type: 'string', description: 'Query.' } }, additionalProperties: false };
    expect(slimInput(small, { maxBytes: 4096, maxArgumentDescriptionLength: 160 })).toEqual({ schema: small });
  });
});

describe('portable shares what is portable already and never changes its input', () => {
  test('an unchanged subtree is the same object; a changed one is a copy; the input is intact', () => {
    const fine = { type: 'object', properties: { a: { type: 'string' } } };
    const input = { type: 'object', properties: { fine, odd: { type: ['string', 'null'] }, any: {} }, additionalProperties: false };
    const before = JSON.stringify(input);
    const out = portable(input) as { properties: Record<string, unknown> };
    expect(JSON.stringify(input)).toBe(before);
    expect(out).not.toBe(input);
    expect(out.properties.fine).toBe(fine);
    expect(out.properties.odd).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
    expect(out.properties.any).toEqual(ANY_VALUE);
    expect(portable(fine as never)).toBe(fine);
  });
});

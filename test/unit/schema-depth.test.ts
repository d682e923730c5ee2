/**
 * Schemas of bounded depth and dropped patterns in the converter (issue 10, items 1 and 4):
 * a spec nested thousands of levels deep converts without overflowing the stack, the published
 * schema is at most MAX_SCHEMA_DEPTH levels deep, and what was left out is reported.
 */
import { describe, expect, it } from 'vitest';
import { SchemaConverter } from '../../src/openapi/schema.js';
import { boundDepth, MAX_SCHEMA_DEPTH, typeStandIn } from '../../src/openapi/schema-depth.js';

/** JSON nesting depth of a value. */
function depthOf(v: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    max = Math.max(max, d);
    if (typeof x === 'object' && x !== null) for (const y of Object.values(x)) stack.push([y, d + 1]);
  }
  return max;
}

function nested(depth: number): unknown {
  let s: unknown = { type: 'string' };
  for (let i = 0; i < depth; i++)
    s = i % 3 === 0 ? { type: 'object', properties: { n: s } } : i % 3 === 1 ? { type: 'array', items: s } : { anyOf: [s, { type: 'null' }] };
  return s;
}

describe('depth', () => {
  it.each([500, 5000])('converts a schema nested %i levels and publishes at most MAX_SCHEMA_DEPTH', (depth) => {
    const doc = { components: { schemas: { D: nested(depth) } } };
    const scope = new SchemaConverter(doc).scope('input');
    const converted = scope.convert({ $ref: '#/components/schemas/D' });
    const { schema, cut } = boundDepth(scope.finish({ type: 'object', properties: { body: converted } }));
    expect(cut || scope.notes.cut).toBe(true);
    // at most two JSON levels per schema level (properties → name)
    expect(depthOf(schema)).toBeLessThanOrEqual(2 * MAX_SCHEMA_DEPTH + 2);
  });

  it('leaves shallow schemas alone (the same object)', () => {
    const s = { type: 'object', properties: { a: { type: 'array', items: { type: 'string' } } } };
    expect(boundDepth(s)).toEqual({ schema: s, cut: false });
    expect(boundDepth(s).schema).toBe(s);
  });

  it('cuts to the declared types, keeping __proto__ an own property', () => {
    const s = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"object","properties":{"x":{"type":["string","null"]}}}}}') as Record<
      string,
      unknown
    >;
    const { schema, cut } = boundDepth(s, 1);
    expect(cut).toBe(true);
    expect(Object.keys((schema as { properties: object }).properties)).toEqual(['__proto__']);
    expect(JSON.stringify(schema)).toBe('{"type":"object","properties":{"__proto__":{"type":"object"}}}');
  });

  it.each([
    [
      { type: 'array', items: { type: 'string' } },
      { type: 'array', items: {} },
    ],
    [{ type: ['integer', 'null'] }, { anyOf: [{ type: 'integer' }, { type: 'null' }] }],
    [{ properties: { a: {} } }, { type: 'object' }],
    [{ anyOf: [{ type: 'string' }] }, {}],
    [true, true],
  ])('typeStandIn(%j) is %j', (node, expected) => {
    expect(typeStandIn(node)).toEqual(expected);
  });
});

describe('patterns', () => {
  it('drops what RE2 cannot run and reports it, also from $defs and patternProperties', () => {
    const doc = {
      components: {
        schemas: {
          Tree: {
            type: 'object',
            properties: { code: { type: 'string', pattern: '^(?=a)a+$' }, kids: { type: 'array', items: { $ref: '#/components/schemas/Tree' } } },
          },
        },
      },
    };
    const scope = new SchemaConverter(doc).scope('input');
    const value = scope.convert({
      type: 'object',
      patternProperties: { '^(a)\\1$': { type: 'string' }, '^x-': { type: 'string' } },
      properties: { t: { $ref: '#/components/schemas/Tree' }, ok: { type: 'string', pattern: '^[a-z]+$' } },
    });
    const root = scope.finish(value as Record<string, unknown>);
    expect(JSON.stringify(root)).not.toContain('(?=');
    expect(JSON.stringify(root)).not.toContain('\\\\1');
    expect(JSON.stringify(root)).toContain('^x-');
    expect(JSON.stringify(root)).toContain('^[a-z]+$');
    expect([...scope.notes.patterns.keys()].sort()).toEqual(['^(?=a)a+$', '^(a)\\1$']);
  });
});

import { describe, expect, it } from 'vitest';
import { covers } from '../../../templates/runtime/tools/handler-input.js';
import { checkElicitAnswer } from '../../../templates/runtime/validation/elicit-check.js';

const FORM = {
  type: 'object' as const,
  properties: {
    name: { type: 'string', minLength: 2, maxLength: 5 },
    email: { type: 'string', format: 'email' },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    score: { type: 'number' },
    ok: { type: 'boolean' },
    color: {
      type: 'string',
      oneOf: [
        { const: 'red', title: 'Red' },
        { const: 'blue', title: 'Blue' },
      ],
    },
    size: { type: 'string', enum: ['s', 'm'] },
    tags: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string', enum: ['a', 'b', 'c'] } },
    titled: { type: 'array', items: { anyOf: [{ const: 'x', title: 'X' }] } },
  },
  required: ['name'],
};

describe('checkElicitAnswer', () => {
  it('accepts an answer that fits the form', () => {
    expect(
      checkElicitAnswer(FORM, {
        name: 'Ada',
        email: 'ada@example.org',
        age: 36,
        score: 1.5,
        ok: true,
        color: 'red',
        size: 'm',
        tags: ['a', 'c'],
        titled: ['x'],
      }),
    ).toEqual([]);
  });

  it('names every problem: missing, unknown, wrong type, bounds, choices, formats', () => {
    expect(checkElicitAnswer(FORM, { email: 'nope', age: 1.5, ok: 'yes', color: 'green', size: 'xl', tags: [], titled: ['y'], extra: 1 }).sort()).toEqual(
      [
        'name: is required',
        'email: must be a valid email',
        'age: must be integer',
        'ok: must be boolean',
        'color: must be one of "red", "blue"',
        'size: must be one of "s", "m"',
        'tags: must have at least 1 items',
        'titled: "y" is not one of "x"',
        'extra: is not a field of the form',
      ].sort(),
    );
    expect(checkElicitAnswer(FORM, { name: 'A' })).toEqual(['name: must have at least 2 characters']);
    expect(checkElicitAnswer(FORM, { name: 'Adalovelace', age: -1 })).toEqual(['name: must have at most 5 characters', 'age: must be >= 0']);
    expect(checkElicitAnswer(FORM, 'Ada')).toEqual(['content: must be an object']);
    // a property named like an Object.prototype member is no field of the form
    expect(checkElicitAnswer(FORM, { name: 'Ada', constructor: 1 })).toEqual(['constructor: is not a field of the form']);
  });
});

describe('covers', () => {
  it('a bare elicitation capability means forms; URL mode needs its own', () => {
    expect(covers({ elicitation: {} }, 'elicitation')).toBe(true);
    expect(covers({ elicitation: {} }, 'elicitation.url')).toBe(false);
    expect(covers({ elicitation: { url: {} } }, 'elicitation')).toBe(false);
    expect(covers({ elicitation: { url: {} } }, 'elicitation.url')).toBe(true);
    expect(covers({ elicitation: { form: {}, url: {} } }, 'elicitation')).toBe(true);
    expect(covers({ sampling: {} }, 'sampling')).toBe(true);
    expect(covers({ sampling: {} }, 'roots')).toBe(false);
    expect(covers(undefined, 'sampling')).toBe(false);
  });
});

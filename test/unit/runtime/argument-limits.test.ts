/**
 * The size and depth limits of a call's arguments: the measure is the compact JSON's UTF-8 length,
 * it stops at the first byte or level past a limit, and it needs no stack for deep values.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ARGUMENT_DEPTH, measureArguments, overLimitMessage } from '../../../templates/runtime/operation/argument-limits.js';

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

describe('measureArguments', () => {
  it('is the length of the compact JSON in UTF-8 bytes', () => {
    const samples: unknown[] = [
      {},
      { a: 1 },
      { name: 'Rex', tags: ['a', 'b', ''], n: -1.5e-7, ok: true, no: false, nothing: null, nested: { deep: [[], {}, [1, [2, { x: 'y' }]]] } },
      { 'quote"key': 'back\\slash', ctrl: '\u0000\u001f\n\t', unicode: 'café ☕ 𝄞', emoji: ['😀'] },
      { __proto__key: 1, ['__proto__']: { x: 1 } },
      { big: 12345678901234567890, small: 1e-300, list: Array.from({ length: 100 }, (_, i) => i) },
    ];
    for (const v of samples) expect(measureArguments(v, 1_000_000)).toEqual({ fits: true, bytes: bytes(v) });
    // JSON.parse makes "__proto__" an own key: counted like any other
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": "b"}');
    expect(measureArguments(parsed, 1000)).toEqual({ fits: true, bytes: bytes(parsed) });
  });

  it('stops at the first byte past the limit, whatever the size of the rest', () => {
    const wide = { list: Array.from({ length: 1_300_000 }, () => ({})) };
    const limit = 1024;
    expect(measureArguments(wide, limit)).toEqual({ fits: false, over: 'bytes', limit });
    const exact = { s: 'x'.repeat(100) };
    expect(measureArguments(exact, bytes(exact))).toEqual({ fits: true, bytes: bytes(exact) });
    expect(measureArguments(exact, bytes(exact) - 1)).toEqual({ fits: false, over: 'bytes', limit: bytes(exact) - 1 });
    const manyKeys = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, 0]));
    expect(measureArguments(manyKeys, 100)).toMatchObject({ fits: false, over: 'bytes' });
  });

  it('refuses nesting past the depth limit without using the stack (a million levels)', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(measureArguments({ deep }, 100_000_000)).toEqual({ fits: false, over: 'depth', limit: MAX_ARGUMENT_DEPTH });
    // the arguments object is level 1: 64 levels fit, 65 do not
    let ok: unknown = 1;
    for (let i = 0; i < MAX_ARGUMENT_DEPTH; i++) ok = { a: ok };
    expect(measureArguments(ok, 1_000_000)).toMatchObject({ fits: true });
    expect(measureArguments({ a: ok }, 1_000_000)).toMatchObject({ fits: false, over: 'depth' });
  });

  it('says which limit was passed and, for the size, which variable sets it', () => {
    expect(overLimitMessage('addPet', { fits: false, over: 'bytes', limit: 1024 }, 'PETS_MAX_ARGUMENT_BYTES')).toBe(
      'Invalid arguments for tool addPet: they take more than 1024 bytes as JSON (the limit, PETS_MAX_ARGUMENT_BYTES); nothing was run',
    );
    expect(overLimitMessage('addPet', { fits: false, over: 'depth', limit: 64 }, 'PETS_MAX_ARGUMENT_BYTES')).toBe(
      'Invalid arguments for tool addPet: they are nested more than 64 levels deep (the limit of every call); nothing was run',
    );
  });
});

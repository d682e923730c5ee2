import { describe, expect, it } from 'vitest';
import { LocalRoundNonces } from '../../../templates/runtime/server/round-nonces.js';

describe('LocalRoundNonces', () => {
  it('accepts a nonce once until it expires', async () => {
    let now = 1000;
    const nonces = new LocalRoundNonces({ now: () => now });
    expect(await nonces.claim('a', 100)).toBe('fresh');
    expect(await nonces.claim('a', 100)).toBe('used');
    expect(await nonces.claim('b', 100)).toBe('fresh');
    now = 1099;
    expect(await nonces.claim('a', 100)).toBe('used');
    now = 1100;
    // its state has expired by now: openState refuses it before the nonce is looked at
    expect(await nonces.claim('a', 100)).toBe('fresh');
  });

  it('when full of unexpired nonces, refuses new ones rather than forgetting any; expired ones make room', async () => {
    let now = 0;
    const nonces = new LocalRoundNonces({ max: 3, now: () => now });
    for (const n of ['a', 'b', 'c']) expect(await nonces.claim(n, 100)).toBe('fresh');
    expect(await nonces.claim('d', 100)).toBe('full');
    for (const n of ['a', 'b', 'c']) expect(await nonces.claim(n, 100)).toBe('used');
    now = 100;
    expect(await nonces.claim('d', 100)).toBe('fresh');
    expect(nonces.size).toBe(1);
  });
});

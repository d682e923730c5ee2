import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RoundState } from '../../../templates/runtime/shared/state.js';
import {
  DEFAULT_HINT_TTL_MS,
  openState,
  StateError,
  sealState,
  signHint,
  stateKey,
  verifyHint,
  withRoundState,
} from '../../../templates/runtime/shared/state.js';

const KEY = randomBytes(32);
const OTHER = randomBytes(32);
const HEX = 'a'.repeat(64);
const NOW = 1_800_000_000_000;

function refusal(fn: () => unknown): StateError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StateError);
    return err as StateError;
  }
  throw new Error('did not throw');
}

describe('stateKey', () => {
  it('hashes a long enough <PREFIX>_STATE_KEY to 32 bytes, the same for every instance', () => {
    const secret = 'x'.repeat(32);
    const a = stateKey('PET', { PET_STATE_KEY: secret });
    expect(a.generated).toBe(false);
    expect(a.key).toEqual(createHash('sha256').update(secret).digest());
    expect(stateKey('PET', { PET_STATE_KEY: secret }).key.equals(a.key)).toBe(true);
    expect(stateKey('PET', { PET_STATE_KEY: 'é'.repeat(40) }).key).toHaveLength(32);
  });

  it('generates a random key when the variable is absent or blank', () => {
    for (const env of [{}, { PET_STATE_KEY: '' }, { PET_STATE_KEY: '   ' }]) {
      const k = stateKey('PET', env);
      expect(k.generated).toBe(true);
      expect(k.key).toHaveLength(32);
    }
    expect(stateKey('PET', {}).key.equals(stateKey('PET', {}).key)).toBe(false);
  });

  it('refuses a short key, naming the variable and the length', () => {
    expect(() => stateKey('PET', { PET_STATE_KEY: 'short' })).toThrow(/^PET_STATE_KEY must be at least 32 characters long \(got 5\)/);
  });
});

describe('sealState / openState', () => {
  it('round-trips JSON until it expires', () => {
    const value = { callId: 'c1', state: { reflection: { done: ['x'] }, n: 1, s: 'é"' } };
    const token = sealState(KEY, value, 1000, NOW);
    expect(token).toMatch(/^[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.\d+\.[A-Za-z0-9_-]{22}$/);
    expect(openState(KEY, token, NOW + 999)).toEqual(value);
    const expired = refusal(() => openState(KEY, token, NOW + 1000));
    expect(expired.reason).toBe('expired');
    expect(expired.message).toMatch(/expired at 2027-/);
  });

  it('defaults to one hour', () => {
    const token = sealState(KEY, 1, undefined, NOW);
    expect(openState(KEY, token, NOW + 3_599_999)).toBe(1);
    expect(refusal(() => openState(KEY, token, NOW + 3_600_000)).reason).toBe('expired');
  });

  it('refuses another key, altered payloads or expiries, and malformed tokens', () => {
    const token = sealState(KEY, { a: 1 }, 1000, NOW);
    expect(refusal(() => openState(OTHER, token, NOW)).reason).toBe('bad-signature');
    const [iv, body, expiry, tag] = token.split('.') as [string, string, string, string];
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(refusal(() => openState(KEY, `${iv}.${flipped.toString('base64url')}.${expiry}.${tag}`, NOW)).reason).toBe('bad-signature');
    const forged = Buffer.from(JSON.stringify({ a: 2 })).toString('base64url');
    expect(refusal(() => openState(KEY, `${iv}.${forged}.${expiry}.${tag}`, NOW)).reason).toBe('bad-signature');
    expect(refusal(() => openState(KEY, `${iv}.${body}.${Number(expiry) + 100000}.${tag}`, NOW)).reason).toBe('bad-signature');
    expect(refusal(() => openState(KEY, `${randomBytes(12).toString('base64url')}.${body}.${expiry}.${tag}`, NOW)).reason).toBe('bad-signature');
    for (const bad of [
      '',
      'abc',
      'a.b',
      `${body}.${expiry}.${tag}`,
      `${iv}.${body}.${expiry}.${tag}.x`,
      `${iv}.${body}.-1.${tag}`,
      `${iv}.${body}.${expiry}.`,
      `${iv}.${body}.${expiry}.${tag}+`,
      `${iv}AAAA.${body}.${expiry}.${tag}`,
    ]) {
      expect(refusal(() => openState(KEY, bad, NOW)).reason).toBe('malformed');
    }
    expect(refusal(() => openState(KEY, 42 as unknown as string, NOW)).reason).toBe('malformed');
  });

  it('is confidential: nothing of the value can be read from the token', () => {
    const secret = 'api-response-text-9f2c';
    const token = sealState(KEY, { api: { '0': { outcome: { text: secret } } } }, 1000, NOW);
    const decoded = token
      .split('.')
      .map((p) => Buffer.from(p, 'base64url').toString('latin1'))
      .join('\n');
    expect(token).not.toContain(secret);
    expect(decoded).not.toContain(secret);
    expect(decoded).not.toContain('outcome');
    // a random iv: the same value seals to another token each time
    expect(sealState(KEY, { a: 1 }, 1000, NOW)).not.toBe(sealState(KEY, { a: 1 }, 1000, NOW));
  });

  it('a state token is not a hint and a hint is not a state token', () => {
    const hint = signHint(KEY, HEX, 'crs', 1000, NOW);
    expect(() => openState(KEY, hint, NOW)).toThrow(StateError);
    expect(verifyHint(KEY, sealState(KEY, HEX, 1000, NOW), 'crs', NOW).ok).toBe(false);
  });
});

describe('signHint / verifyHint', () => {
  it('signs <64hex>.<expiry seconds>.<mac>, 24 h by default', () => {
    const token = signHint(KEY, HEX, 'crs', undefined, NOW);
    const [hex, expiry] = token.split('.');
    expect(hex).toBe(HEX);
    expect(Number(expiry)).toBe(Math.ceil((NOW + DEFAULT_HINT_TTL_MS) / 1000));
    expect(verifyHint(KEY, token, 'crs', NOW)).toEqual({ ok: true, hex: HEX });
    expect(() => signHint(KEY, 'A'.repeat(64), 'crs')).toThrow(TypeError);
  });

  it('accepts the hint on any instance with the same key, only for its domain, until it expires', () => {
    const token = signHint(KEY, HEX, 'crs', 10_000, NOW);
    expect(verifyHint(Buffer.from(KEY), token, 'crs', NOW + 5000)).toEqual({ ok: true, hex: HEX });
    expect(verifyHint(KEY, token, 'datum', NOW)).toEqual({ ok: false, reason: 'domain-mismatch' });
    expect(verifyHint(OTHER, token, 'crs', NOW)).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verifyHint(OTHER, token, 'datum', NOW)).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verifyHint(KEY, token, 'crs', NOW + 10_000)).toEqual({ ok: false, reason: 'expired', expiresAt: NOW + 10_000 });
  });

  it('binds the hex and the expiry', () => {
    const token = signHint(KEY, HEX, 'crs', 10_000, NOW);
    const [, expiry, mac] = token.split('.');
    expect(verifyHint(KEY, `${'b'.repeat(64)}.${expiry}.${mac}`, 'crs', NOW)).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verifyHint(KEY, `${HEX}.${Number(expiry) + 3600}.${mac}`, 'crs', NOW)).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('reports malformed tokens', () => {
    const token = signHint(KEY, HEX, 'crs', 10_000, NOW);
    const [, expiry, mac] = token.split('.') as [string, string, string];
    for (const bad of [
      undefined,
      1,
      '',
      HEX,
      `${HEX.toUpperCase()}.${expiry}.${mac}`,
      `sha256:${token}`,
      `${HEX}.x.${mac}`,
      `${HEX}.${expiry}.${mac.slice(1)}`,
      `${token}.x`,
    ]) {
      expect(verifyHint(KEY, bad, 'crs', NOW)).toEqual({ ok: false, reason: 'malformed' });
    }
  });
});

describe('withRoundState', () => {
  it('starts a call, seals its state into an input-required result, and resumes it', async () => {
    let seen: RoundState | undefined;
    const first = await withRoundState(KEY, undefined, (round) => {
      seen = round;
      round.state.step = 1;
      return { resultType: 'input_required' as const, inputRequests: {} };
    });
    expect(seen?.callId).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof first.requestState).toBe('string');
    expect(openState(KEY, first.requestState as string)).toEqual({ callId: seen?.callId, state: { step: 1 } });

    const second = await withRoundState(KEY, first.requestState, (round) => {
      expect(round).toEqual({ callId: seen?.callId, state: { step: 1 } });
      return { content: [] };
    });
    expect(second).toEqual({ content: [] });
  });

  it('refuses state sealed under another key or not of a call', async () => {
    await expect(withRoundState(KEY, sealState(OTHER, { callId: 'c', state: {} }), () => ({}))).rejects.toMatchObject({ reason: 'bad-signature' });
    await expect(withRoundState(KEY, sealState(KEY, { callId: 'c', state: [] }), () => ({}))).rejects.toMatchObject({ reason: 'malformed' });
    await expect(withRoundState(KEY, 'garbage', () => ({}))).rejects.toBeInstanceOf(StateError);
  });
});

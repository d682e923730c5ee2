import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../templates/runtime/core/canonical-json.js';
import { gateKey, isGateKey, normalizeArgs, templateHash } from '../../../templates/runtime/reflection/reflection-key.js';

describe('normalizeArgs', () => {
  it('sorts object keys recursively and keeps array order', () => {
    const v = normalizeArgs({ b: 1, a: { d: [3, 1, { z: 1, y: 2 }], c: true } });
    expect(JSON.stringify(v)).toBe('{"a":{"c":true,"d":[3,1,{"y":2,"z":1}]},"b":1}');
  });

  it('trims strings and collapses internal whitespace runs to one space', () => {
    expect(normalizeArgs({ crs: '  EPSG:4326 \n\t to   EPSG:3857  ' })).toEqual({ crs: 'EPSG:4326 to EPSG:3857' });
    expect(normalizeArgs(['a\u00a0 b'])).toEqual(['a b']);
  });

  it('normalises strings to NFC', () => {
    expect(normalizeArgs('e\u0301')).toBe('\u00e9');
  });

  it('drops undefined members, keeps null, JSON-converts odd values', () => {
    expect(normalizeArgs({ a: undefined, b: null, c: () => 1, d: [undefined], e: Number.NaN, f: -0, g: 10n })).toEqual({
      b: null,
      d: [null],
      e: null,
      f: 0,
      g: '10',
    });
    expect(normalizeArgs(undefined)).toBeNull();
    expect(normalizeArgs({ when: new Date('2024-01-02T03:04:05Z') })).toEqual({ when: '2024-01-02T03:04:05.000Z' });
  });

  it('does not alter object keys', () => {
    expect(normalizeArgs({ ' Key  A ': 'x' })).toEqual({ ' Key  A ': 'x' });
  });

  it('throws on cycles but accepts shared references', () => {
    const shared = { x: 1 };
    expect(normalizeArgs({ a: shared, b: shared })).toEqual({ a: { x: 1 }, b: { x: 1 } });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => normalizeArgs(cyclic)).toThrow(/circular/);
  });
});

describe('canonicalJson', () => {
  it('sorts keys, has no whitespace, keeps strings as they are', () => {
    expect(canonicalJson({ z: ' a  b ', a: [1, { y: 1, x: 2 }], m: undefined })).toBe('{"a":[1,{"x":2,"y":1}],"z":" a  b "}');
  });
  it('is independent of insertion order', () => {
    expect(canonicalJson({ a: 1, b: { c: 2, d: 3 } })).toBe(canonicalJson({ b: { d: 3, c: 2 }, a: 1 }));
  });
});

describe('templateHash', () => {
  it('is the sha256 hex of the exact text', () => {
    expect(templateHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(templateHash('abc ')).not.toBe(templateHash('abc'));
  });
});

describe('gateKey', () => {
  const base = { domain: 'crs', templateText: 'Justify {{source}} -> {{target}}', promptArgs: { source: 'EPSG:4326', target: 'EPSG:3857' } };

  it('is 64 hex digits: sha256 of the canonical JSON of {args, domain, template[, tool]}', () => {
    const key = gateKey(base);
    expect(isGateKey(key)).toBe(true);
    const material = `{"args":{"source":"EPSG:4326","target":"EPSG:3857"},"domain":"crs","template":"${templateHash(base.templateText)}"}`;
    expect(key).toBe(createHash('sha256').update(material).digest('hex'));
    const withTool = `{"args":{"source":"EPSG:4326","target":"EPSG:3857"},"domain":"crs","template":"${templateHash(base.templateText)}","tool":"reproject"}`;
    expect(gateKey({ ...base, tool: 'reproject' })).toBe(createHash('sha256').update(withTool).digest('hex'));
  });

  it('is stable across argument key order and incidental whitespace', () => {
    const key = gateKey(base);
    expect(gateKey({ ...base, promptArgs: { target: 'EPSG:3857', source: 'EPSG:4326' } })).toBe(key);
    expect(gateKey({ ...base, promptArgs: { target: '  EPSG:3857\n', source: 'EPSG:4326  ' } })).toBe(key);
  });

  it('changes with the template, the domain, the args and the tool', () => {
    const key = gateKey(base);
    expect(gateKey({ ...base, templateText: base.templateText + '.' })).not.toBe(key);
    expect(gateKey({ ...base, domain: 'datum' })).not.toBe(key);
    expect(gateKey({ ...base, promptArgs: { ...base.promptArgs, target: 'EPSG:2154' } })).not.toBe(key);
    expect(gateKey({ ...base, tool: 'a' })).not.toBe(key);
    expect(gateKey({ ...base, tool: 'a' })).not.toBe(gateKey({ ...base, tool: 'b' }));
  });

  it('isGateKey accepts only 64 lower-case hex digits', () => {
    expect(isGateKey('a'.repeat(64))).toBe(true);
    expect(isGateKey('A'.repeat(64))).toBe(false);
    expect(isGateKey('a'.repeat(63))).toBe(false);
    expect(isGateKey(`sha256:${'a'.repeat(64)}`)).toBe(false);
    expect(isGateKey(42)).toBe(false);
  });
});

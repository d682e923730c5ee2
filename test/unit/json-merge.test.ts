/** The three-way merge of package.json (src/write/merge.ts): given base/ours/theirs, want the merge. */
import { describe, expect, it } from 'vitest';
import { type Json, mergeJson } from '../../src/write/merge.js';

type Obj = { [key: string]: Json };
type Case = { name: string; base: Obj; ours: Obj; theirs: Obj; merged: Obj; changed: boolean; conflicts?: string[] };

const CASES: Case[] = [
  { name: 'nothing changed', base: { a: 1 }, ours: { a: 1 }, theirs: { a: 1 }, merged: { a: 1 }, changed: false },
  { name: 'mcpgen changes a value', base: { a: 1 }, ours: { a: 2 }, theirs: { a: 1 }, merged: { a: 2 }, changed: true },
  { name: 'mcpgen adds and removes keys', base: { a: 1, b: 2 }, ours: { a: 1, c: 3 }, theirs: { a: 1, b: 2 }, merged: { a: 1, c: 3 }, changed: true },
  { name: 'the user adds a key', base: { a: 1 }, ours: { a: 2 }, theirs: { a: 1, mine: true }, merged: { a: 2, mine: true }, changed: true },
  {
    name: 'the user changes and removes keys mcpgen leaves alone',
    base: { a: 1, b: 2, c: 3 },
    ours: { a: 1, b: 2, c: 4 },
    theirs: { a: 9, c: 3 },
    merged: { a: 9, c: 4 },
    changed: true,
  },
  { name: 'only the user changed: nothing to write', base: { a: 1 }, ours: { a: 1 }, theirs: { a: 5, z: [1] }, merged: { a: 5, z: [1] }, changed: false },
  { name: 'both made the same change', base: { a: 1 }, ours: { a: 2 }, theirs: { a: 2 }, merged: { a: 2 }, changed: false },
  { name: 'both changed a value differently', base: { a: 1 }, ours: { a: 2 }, theirs: { a: 3 }, merged: { a: 3 }, changed: false, conflicts: ['/a'] },
  { name: 'mcpgen changed what the user removed', base: { a: 1 }, ours: { a: 2 }, theirs: {}, merged: {}, changed: false, conflicts: ['/a'] },
  { name: 'mcpgen removed what the user changed', base: { a: 1 }, ours: {}, theirs: { a: 3 }, merged: { a: 3 }, changed: false, conflicts: ['/a'] },
  {
    name: 'inside objects, key by key: a new dependency next to a bumped one',
    base: { dependencies: { zod: '4.6.7' }, scripts: { build: 'tsc' } },
    ours: { dependencies: { zod: '4.7.0' }, scripts: { build: 'tsc' } },
    theirs: { dependencies: { 'date-fns': '^4.1.0', zod: '4.6.7' }, scripts: { build: 'tsc', lint: 'eslint' } },
    merged: { dependencies: { 'date-fns': '^4.1.0', zod: '4.7.0' }, scripts: { build: 'tsc', lint: 'eslint' } },
    changed: true,
  },
  {
    name: 'both added the same object key: merged inside it',
    base: {},
    ours: { overrides: { a: '1' } },
    theirs: { overrides: { b: '2' } },
    merged: { overrides: { a: '1', b: '2' } },
    changed: true,
  },
  {
    name: 'a conflict deep down is named by its pointer',
    base: { scripts: { 'a/b~c': 'x' } },
    ours: { scripts: { 'a/b~c': 'y' } },
    theirs: { scripts: { 'a/b~c': 'z' } },
    merged: { scripts: { 'a/b~c': 'z' } },
    changed: false,
    conflicts: ['/scripts/a~1b~0c'],
  },
  {
    name: 'arrays are values, compared whole',
    base: { files: ['dist'] },
    ours: { files: ['dist', 'x'] },
    theirs: { files: ['dist', 'mine'] },
    merged: { files: ['dist', 'mine'] },
    changed: false,
    conflicts: ['/files'],
  },
  {
    name: 'key order alone is no change',
    base: { a: 1, b: { c: 1, d: 2 } },
    ours: { a: 1, b: { c: 1, d: 2 } },
    theirs: { b: { d: 2, c: 1 }, a: 1 },
    merged: { a: 1, b: { c: 1, d: 2 } },
    changed: false,
  },
];

describe('mergeJson', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const got = mergeJson({ base: c.base, ours: c.ours, theirs: c.theirs });
      expect(got.merged).toStrictEqual(c.merged);
      expect(got.changed).toBe(c.changed);
      expect(got.conflicts.map((x) => x.pointer)).toStrictEqual(c.conflicts ?? []);
    });
  }

  it("puts mcpgen's keys in its order, then the user's, and keeps dependency maps sorted", () => {
    const got = mergeJson({
      base: { name: 'x', version: '1', dependencies: { b: '1' } },
      ours: { name: 'x', version: '2', dependencies: { b: '1', d: '1' } },
      theirs: { mine: 1, dependencies: { c: '1', a: '1', b: '1' }, version: '1', name: 'x' },
    });
    expect(JSON.stringify(got.merged)).toBe('{"name":"x","version":"2","dependencies":{"a":"1","b":"1","c":"1","d":"1"},"mine":1}');
  });

  it('keeps a "__proto__" key as a key, never as a prototype', () => {
    const theirs = JSON.parse('{"a":1,"__proto__":{"polluted":true}}') as Obj;
    const got = mergeJson({ base: { a: 1 }, ours: { a: 2 }, theirs });
    expect(JSON.stringify(got.merged)).toBe('{"a":2,"__proto__":{"polluted":true}}');
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(got.merged)).toBe(Object.prototype);
  });

  it('does not walk a deeply nested user value when mcpgen changes something else', () => {
    const deep = JSON.parse('{"v":'.repeat(50_000) + '1' + '}'.repeat(50_000)) as Json;
    const got = mergeJson({ base: { a: 1 }, ours: { a: 2 }, theirs: { a: 1, deep } });
    expect(got.conflicts).toEqual([]);
    expect(got.merged.deep).toBe(deep);
    expect(got.merged.a).toBe(2);
  });
});

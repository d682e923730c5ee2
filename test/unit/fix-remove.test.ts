/**
 * src/cli/fix/remove.ts: entries leave by their own lines (or their own text and comma in a flow
 * mapping); every other byte — comments, order, quoting, alignment, blank lines — is as it was.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { removeEntries } from '../../src/cli/fix/remove.js';

const MANIFEST = `# yaml-language-server: $schema=../schemas/manifest.schema.json
name: "petstore"   # npm package, bin and serverInfo name
description: "${'A long description that a re-printing YAML library would fold at eighty columns. '.repeat(2).trim()}"

include:
  - tag: pets        # keep the pets
overrides:                      # by operationId or "METHOD /path"
  # the list needs a clearer description
  listPets:
    description: >-
      What the model should know.
    # about this tool
    title: "List"
  getInventory: { title: "Inventory" }   # store: left out
concernMappings:
  tools:
    # reads first
    "listPets":       { access: read }
    "getInventory":   { access: read }    # left out
    "createPet":      { access: write }
    "placeOrder":     { access: write }
concerns: [{ name: access, values: [read, write] }]
`;

/** `text` without the lines `from`..`to` (1-based, inclusive). */
function withoutLines(text: string, ...ranges: Array<[number, number]>): string {
  const lines = text.split('\n');
  return lines.filter((_, i) => !ranges.some(([a, b]) => i + 1 >= a && i + 1 <= b)).join('\n');
}

describe('removeEntries', () => {
  it('removes block entries by their whole lines and changes nothing else', () => {
    const res = removeEntries(MANIFEST, ['/concernMappings/tools/getInventory', '/overrides/getInventory', '/concernMappings/tools/placeOrder']);
    if (!res.ok) throw new Error(res.reason);
    // exactly those lines, nothing else: comments, quoting, alignment and the long line as they were
    expect(res.text).toBe(withoutLines(MANIFEST, [14, 14], [19, 19], [21, 21]));
    expect(res.text).toContain('# reads first\n');
    expect(res.text).toContain('overrides:                      # by operationId or "METHOD /path"\n');
    expect(res.text).toContain('"listPets":       { access: read }');
    // in file order, with the lines they took
    expect(res.removed).toEqual([
      { pointer: '/overrides/getInventory', firstLine: 14, lastLine: 14, lines: ['  getInventory: { title: "Inventory" }   # store: left out'] },
      { pointer: '/concernMappings/tools/getInventory', firstLine: 19, lastLine: 19, lines: ['    "getInventory":   { access: read }    # left out'] },
      { pointer: '/concernMappings/tools/placeOrder', firstLine: 21, lastLine: 21, lines: ['    "placeOrder":     { access: write }'] },
    ]);
    const m = parse(res.text) as { concernMappings: { tools: Record<string, unknown> }; overrides: Record<string, unknown> };
    expect(Object.keys(m.concernMappings.tools)).toEqual(['listPets', 'createPet']);
    expect(Object.keys(m.overrides)).toEqual(['listPets']);
  });

  it('takes a multi-line entry with the comment lines inside it, and keeps the comment above it', () => {
    const res = removeEntries(MANIFEST, ['/overrides/listPets']);
    if (!res.ok) throw new Error(res.reason);
    expect(res.text).toBe(withoutLines(MANIFEST, [9, 13]));
    expect(res.text).toContain('  # the list needs a clearer description\n  getInventory:');
  });

  it('removes a block mapping left empty with its key, never the top level', () => {
    const all = ['listPets', 'getInventory', 'createPet', 'placeOrder'].map((t) => `/concernMappings/tools/${t}`);
    const res = removeEntries(MANIFEST, all);
    if (!res.ok) throw new Error(res.reason);
    // `tools` went, then `concernMappings` (its only key): from its key line to its last entry
    expect(res.text).toBe(withoutLines(MANIFEST, [15, 21]));
    expect(res.removed.map((r) => r.pointer)).toEqual(['/concernMappings']);

    const top = removeEntries('a: 1\nb:\n  x: 2\nc: 3\n', ['/a', '/b/x']);
    if (!top.ok) throw new Error(top.reason);
    expect(top.text).toBe('c: 3\n');
    expect(top.removed.map((r) => r.pointer)).toEqual(['/a', '/b']);
  });

  it('removes flow-mapping entries with one comma', () => {
    const src = 'gates: { a: { domain: x }, b: 2, c: 3 }   # keep\nother: [1, 2]\n';
    const mid = removeEntries(src, ['/gates/b']);
    expect(mid.ok && mid.text).toBe('gates: { a: { domain: x }, c: 3 }   # keep\nother: [1, 2]\n');
    const last = removeEntries(src, ['/gates/c']);
    expect(last.ok && last.text).toBe('gates: { a: { domain: x }, b: 2 }   # keep\nother: [1, 2]\n');
    const first = removeEntries(src, ['/gates/a']);
    expect(first.ok && first.text).toBe('gates: { b: 2, c: 3 }   # keep\nother: [1, 2]\n');
    expect(mid.ok && mid.removed).toEqual([{ pointer: '/gates/b', firstLine: 1, lastLine: 1, lines: ['b: 2'] }]);
    const two = removeEntries(src, ['/gates/b', '/gates/c']);
    expect(two.ok && two.text).toBe('gates: { a: { domain: x } }   # keep\nother: [1, 2]\n');
    const every = removeEntries(src, ['/gates/a', '/gates/b', '/gates/c']);
    if (!every.ok) throw new Error(every.reason);
    expect(parse(every.text)).toEqual({ gates: {}, other: [1, 2] });
    expect(every.text.split('\n')[1]).toBe('other: [1, 2]');
  });

  it('works on a JSON manifest and on CRLF line ends', () => {
    const json = '{\n  "name": "x",\n  "overrides": {\n    "a": { "title": "A" },\n    "b": { "title": "B" }\n  }\n}\n';
    const j = removeEntries(json, ['/overrides/b']);
    if (!j.ok) throw new Error(j.reason);
    expect(JSON.parse(j.text)).toEqual({ name: 'x', overrides: { a: { title: 'A' } } });
    const crlf = 'a:\r\n  x: 1\r\n  # note\r\n  y: 2\r\nb: 3\r\n';
    const c = removeEntries(crlf, ['/a/y']);
    expect(c.ok && c.text).toBe('a:\r\n  x: 1\r\n  # note\r\nb: 3\r\n');
  });

  it('escapes pointer tokens, and refuses what it cannot remove on its own', () => {
    const src = 'overrides:\n  GET /pets/{id}: { title: x }\n  "a~b": 1\n  keep: 2\n';
    const ok = removeEntries(src, ['/overrides/GET ~1pets~1{id}', '/overrides/a~0b']);
    expect(ok.ok && ok.text).toBe('overrides:\n  keep: 2\n');
    // an entry merged in from an anchor is not written in the mapping
    const merged = removeEntries('base: &b { x: 1 }\nm:\n  <<: *b\n  y: 2\n', ['/m/x']);
    expect(merged.ok).toBe(false);
    // an anchored entry another key aliases: cutting it would change that key too
    const aliased = removeEntries('m:\n  x: &v 1\n  y: 2\nz: *v\n', ['/m/x']);
    expect(aliased).toMatchObject({ ok: false });
    expect(removeEntries('a: [1\n', ['/a'])).toMatchObject({ ok: false, reason: expect.stringMatching(/does not parse/) });
    expect(removeEntries('a: 1\n', ['/b'])).toMatchObject({ ok: false, reason: expect.stringMatching(/^\/b: no such key/) });
  });
});

/**
 * The build cache's loaded spec (src/openapi/cache.ts) is the load's: the same document, version
 * and diagnostics, and a source that puts every pointer, key or value, where the load's does —
 * for a JSON spec (its own locator over the text) and a YAML one (parsed on the first locate).
 * DigitalOcean is bundled in place (the document is the parsed text's object, edited): the entry
 * must hold the bundled document, not point at the text. The anchored YAML spec shares objects.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Diagnostics, pointer } from '../../src/core/diagnostics.js';
import { isObject } from '../../src/core/json.js';
import { loadSpecCached } from '../../src/openapi/cache.js';
import { type LoadSpecOptions, loadSpec } from '../../src/openapi/load.js';
import { corpusSpec } from '../helpers/corpus.js';

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** Every pointer of a document, up to `limit`. */
function pointers(doc: unknown, limit = 4000): string[][] {
  const out: string[][] = [];
  const walk = (v: unknown, at: string[]) => {
    if (out.length >= limit) return;
    out.push(at);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...at, String(i)]));
    else if (isObject(v)) for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
  };
  walk(doc, []);
  return out;
}

/** Each place of the document holding an object met before, with the first place holding it. */
function sharing(doc: unknown): string[] {
  const first = new Map<object, string>();
  const out: string[] = [];
  const walk = (v: unknown, at: string) => {
    if (v === null || typeof v !== 'object') return;
    const seen = first.get(v);
    if (seen !== undefined) return void out.push(`${at} = ${seen}`);
    first.set(v, at);
    for (const [k, x] of Object.entries(v)) walk(x, `${at}/${k}`);
  };
  walk(doc, '');
  return out;
}

/** A YAML spec whose anchors make one object appear at several places. */
const ANCHORED = `openapi: 3.0.3
info: { title: Anchored, version: '1' }
paths:
  /a:
    get:
      operationId: getA
      parameters:
        - &limit { name: limit, in: query, schema: { type: integer, minimum: 1 } }
      responses: &ok
        '200': { description: ok, content: { application/json: { schema: { type: object, properties: { id: { type: string } } } } } }
  /b:
    get:
      operationId: getB
      parameters: [*limit]
      responses: *ok
`;

describe('spec cache', () => {
  it.each(['petstore-3.0.json', 'train-travel-3.1.yaml', 'petstore-2.0.json', 'digitalocean.json', 'anchored.yaml'])(
    '%s: a hit gives what the load gives',
    async (name) => {
      const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-spec-cache-'));
      temps.push(cacheDir);
      const file = name === 'anchored.yaml' ? path.join(cacheDir, name) : corpusSpec(name);
      if (name === 'anchored.yaml') writeFileSync(file, ANCHORED);
      const opts = (diagnostics: Diagnostics): LoadSpecOptions => ({
        file,
        displayPath: name,
        rootDirs: [path.dirname(file)],
        referencedAt: { file: 'mcpgen.yaml', pointer: '/openapi', line: 2, col: 10 },
        allowRemoteRefs: [],
        diagnostics,
      });
      const plain = new Diagnostics();
      const loaded = (await loadSpec(opts(plain)))!;
      const first = new Diagnostics();
      const miss = await loadSpecCached({ ...opts(first), cacheDir });
      expect(miss.outcome).toBe('miss');
      expect(await miss.save!()).toBe(true);
      const second = new Diagnostics();
      const hit = await loadSpecCached({ ...opts(second), cacheDir });
      expect(hit.outcome).toBe('hit');
      const spec = hit.spec!;
      expect(spec.version).toBe(loaded.version);
      expect(spec.document).toEqual(loaded.document);
      expect(JSON.stringify(spec.document)).toBe(JSON.stringify(loaded.document));
      // the same object at the same places: the model may tell objects apart by identity
      expect(sharing(spec.document)).toEqual(sharing(loaded.document));
      if (name === 'anchored.yaml') expect(sharing(loaded.document).length).toBeGreaterThan(0);
      expect(second.items).toEqual(plain.items);
      expect(first.items).toEqual(plain.items);
      expect(spec.source.file).toBe(loaded.source.file);
      for (const tokens of [...pointers(loaded.document), ['paths', 'nope'], ['components', 'schemas', 'Nope', 'x']]) {
        const p = pointer(tokens);
        expect(spec.source.locate(p), p).toEqual(loaded.source.locate(p));
        expect(spec.source.locate(p, { key: true }), `${p} (key)`).toEqual(loaded.source.locate(p, { key: true }));
      }
    },
  );
});

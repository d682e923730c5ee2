/**
 * The search-eval query files (eval/search/queries/) and the plain BM25 baseline of the harness.
 * Accepted tool names are checked against eval/search/names/<api>.txt, the tool names of each
 * API's default build written by `npm run eval:search -- --write-names` (the harness itself also
 * refuses a query whose accepted tool its build does not have).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bm25Index, tokenize } from '../../eval/search/bm25.mjs';
import { splitOf } from '../../eval/search/split.mjs';

type Query = { id: string; query: string; accept: string[]; split: string };
type QueryFile = { api: string; spec: string; queries: Query[] };

const DIR = path.resolve(import.meta.dirname, '../../eval/search');
const files: QueryFile[] = readdirSync(path.join(DIR, 'queries'))
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(path.join(DIR, 'queries', f), 'utf8')) as QueryFile);
const namesOf = (api: string): Set<string> =>
  new Set(
    readFileSync(path.join(DIR, 'names', `${api}.txt`), 'utf8')
      .split('\n')
      .filter((l) => l !== ''),
  );

describe('eval/search query files', () => {
  it('hold at least 300 queries over at least five APIs, at least 60 each', () => {
    expect(files.length).toBeGreaterThanOrEqual(5);
    expect(files.reduce((n, f) => n + f.queries.length, 0)).toBeGreaterThanOrEqual(300);
    for (const f of files) expect(f.queries.length, f.api).toBeGreaterThanOrEqual(60);
  });

  it('name one corpus spec each, and the file after its api', () => {
    const apis = files.map((f) => f.api);
    expect(new Set(apis).size).toBe(apis.length);
    for (const f of files) {
      expect(f.spec).toMatch(/^\.corpus\/[^/]+\.(json|ya?ml)$/);
      expect(existsSync(path.join(DIR, 'queries', `${f.api}.json`))).toBe(true);
    }
  });

  it('give every query a unique id, a text, and one to three distinct acceptable tools', () => {
    const ids = new Set<string>();
    for (const f of files) {
      for (const q of f.queries) {
        expect(Object.keys(q).sort(), q.id).toEqual(['accept', 'id', 'query', 'split']);
        expect(q.id).toMatch(new RegExp(`^${f.api}-\\d{3}$`));
        expect(ids.has(q.id), `duplicate id ${q.id}`).toBe(false);
        ids.add(q.id);
        expect(q.query.trim().length, q.id).toBeGreaterThan(0);
        expect(q.accept.length, q.id).toBeGreaterThanOrEqual(1);
        expect(q.accept.length, q.id).toBeLessThanOrEqual(3);
        expect(new Set(q.accept).size, q.id).toBe(q.accept.length);
      }
    }
  });

  it('accept only tools the API build has', () => {
    for (const f of files) {
      const names = namesOf(f.api);
      expect(names.size, f.api).toBeGreaterThan(0);
      const unknown = f.queries.flatMap((q) => q.accept.filter((n) => !names.has(n)).map((n) => `${q.id}: ${n}`));
      expect(unknown, f.api).toEqual([]);
    }
  });

  it('record the one split, fixed by a hash of the id, with both halves in every API', () => {
    for (const f of files) {
      for (const q of f.queries) expect(q.split, q.id).toBe(splitOf(q.id));
      for (const half of ['dev', 'heldout']) expect(f.queries.filter((q) => q.split === half).length, `${f.api} ${half}`).toBeGreaterThan(0);
    }
  });

  it('has no query that repeats an operation summary of its spec or is part of one', () => {
    const norm = (s: string) =>
      s
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, ' ')
        .trim();
    for (const f of files) {
      const spec = JSON.parse(readFileSync(path.resolve(DIR, '../..', f.spec), 'utf8')) as { paths: Record<string, Record<string, { summary?: unknown }>> };
      const summaries = new Set<string>();
      for (const item of Object.values(spec.paths)) for (const op of Object.values(item)) if (typeof op?.summary === 'string') summaries.add(norm(op.summary));
      const copied = f.queries.filter((q) => [...summaries].some((s) => s.includes(norm(q.query))));
      expect(
        copied.map((q) => q.id),
        f.api,
      ).toEqual([]);
    }
  });
});

describe('eval/search BM25 baseline', () => {
  it('tokenises without stemming: camelCase, snake_case and kebab-case split, HTML dropped, lower case', () => {
    expect(tokenize('PostCustomersCustomer issues_list-for-repo <p>Get HTTPStatus</p>')).toEqual([
      'post',
      'customers',
      'customer',
      'issues',
      'list',
      'for',
      'repo',
      'get',
      'http',
      'status',
    ]);
  });

  it('ranks by BM25 with exact terms only, ties in catalogue order', () => {
    const search = bm25Index([
      { name: 'a', text: 'list customers' },
      { name: 'b', text: 'delete customer' },
      { name: 'c', text: 'delete customer now please' },
      { name: 'd', text: 'delete customer' },
    ]);
    // "customer" does not match "customers" (no stemming); the shorter document wins; b before d (catalogue order).
    expect(search('delete customer', 10)).toEqual(['b', 'd', 'c']);
    expect(search('customers', 10)).toEqual(['a']);
    expect(search('delete customer', 2)).toEqual(['b', 'd']);
    expect(search('refund', 10)).toEqual([]);
  });
});

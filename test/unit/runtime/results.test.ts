/**
 * Results that fit, as pure functions: compaction (nulls, empty values, omitted keys, long
 * strings), the budget (a list cut at an item boundary, an object's largest fields dropped, never
 * JSON cut mid-value), and the next call's arguments (after a cut list, from a Link header, from a
 * cursor in the body, Stripe's has_more).
 */
import { describe, expect, it } from 'vitest';
import type { OperationTool } from '../../../templates/runtime/core/types.js';
import type { CompactionReport } from '../../../templates/runtime/operation/result-fit.js';
import { compact, fitBytes } from '../../../templates/runtime/operation/result-fit.js';
import { nextCall } from '../../../templates/runtime/operation/result-paging.js';
import { DEFAULT_RESULT_POLICY, policyFor, shapeResult } from '../../../templates/runtime/operation/results.js';

/** A list tool with the given query parameters. */
function tool(query: string[], extra: Partial<OperationTool> = {}): OperationTool {
  return {
    kind: 'operation',
    name: 'list_things',
    inputSchema: { type: 'object' },
    http: { method: 'GET', path: '/things', params: query.map((name) => ({ arg: name.replace(/\W/g, '_'), name, in: 'query' as const })) },
    ...extra,
  } as OperationTool;
}

const report = (): CompactionReport => ({ nulls: 0, empties: 0, omitted: new Map(), shortened: 0 });

describe('compaction', () => {
  it('drops nulls, empty arrays and objects and omitted keys at any depth, keeps list positions, never mutates', () => {
    const input = {
      id: 1,
      title: 'x',
      body: null,
      labels: [],
      milestone: {},
      user: { login: 'a', avatar_url: 'https://a', node_id: 'MDQ', site_admin: false },
      url: 'https://api',
      html_url: 'https://h',
      nested: [{ a: null }, { b: 0 }],
      _links: { self: 'x' },
    };
    const copy = structuredClone(input);
    const r = report();
    expect(compact(input, DEFAULT_RESULT_POLICY, r)).toEqual({ id: 1, title: 'x', user: { login: 'a', site_admin: false }, nested: [null, { b: 0 }] });
    expect(input).toEqual(copy);
    expect(r.nulls).toBe(2);
    expect([...r.omitted.keys()].sort()).toEqual(['_links', 'avatar_url', 'html_url', 'node_id', 'url']);
    // zero, false and the empty string are values, not noise
    expect(compact({ a: 0, b: false, c: '' }, DEFAULT_RESULT_POLICY)).toEqual({ a: 0, b: false, c: '' });
    expect(compact(null, DEFAULT_RESULT_POLICY)).toBeUndefined();
    expect(compact([null, null], DEFAULT_RESULT_POLICY)).toBeUndefined();
  });

  it('shortens long strings with a count, and omits nothing with an empty omit list', () => {
    const out = compact({ body: 'y'.repeat(1500), html_url: 'h' }, { omit: [], maxStringChars: 1000 }) as { body: string; html_url: string };
    expect(out.body).toBe(`${'y'.repeat(1000)}…[+500 characters]`);
    expect(out.html_url).toBe('h');
    // patterns: * is any run of characters, everything else literal
    expect(compact({ 'a.b': 1, axb: 2, x_url: 3, x_url2: 4 }, { omit: ['a.b', '*_url'], maxStringChars: 10 })).toEqual({ axb: 2, x_url2: 4 });
    const evil = JSON.parse('{"__proto__": {"polluted": 1}, "a": null}') as unknown;
    const c = compact(evil, DEFAULT_RESULT_POLICY) as Record<string, unknown>;
    expect(Object.getPrototypeOf(c)).toBe(Object.prototype);
    expect(JSON.stringify(c)).toBe('{"__proto__":{"polluted":1}}');
  });

  it('a tool setting wins over the server setting, key by key', () => {
    expect(policyFor({ results: { maxTokens: 500 } }, { ...DEFAULT_RESULT_POLICY, maxTokens: 9000, compact: false })).toEqual({
      ...DEFAULT_RESULT_POLICY,
      maxTokens: 500,
      compact: false,
    });
    expect(policyFor({}, undefined)).toBe(DEFAULT_RESULT_POLICY);
  });
});

describe('the budget', () => {
  const items = Array.from({ length: 30 }, (_, i) => ({ number: i + 1, title: `Item ${i + 1} ${'t'.repeat(80)}`, state: 'open' }));

  it('cuts a list at an item boundary: whole items, valid JSON, as many as fit', () => {
    const { value, cut } = fitBytes(items, 1000);
    const kept = value as typeof items;
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(1000);
    expect(JSON.stringify(items.slice(0, kept.length + 1)).length).toBeGreaterThan(1000);
    expect(kept).toEqual(items.slice(0, kept.length));
    expect(cut).toEqual({ list: { kept: kept.length, total: 30, lastKept: items[kept.length - 1] } });
  });

  it('cuts the largest list property of an object (search results, Stripe lists, Kubernetes lists), keeping the rest', () => {
    const search = { total_count: 4242, incomplete_results: false, items };
    const { value, cut } = fitBytes(search, 1500);
    expect((value as { total_count: number }).total_count).toBe(4242);
    expect(cut?.list).toMatchObject({ key: 'items', total: 30 });
    expect(JSON.stringify(value).length).toBeLessThanOrEqual(1500);
  });

  it('an object without a list loses its largest fields first, each named; a value that fits is untouched', () => {
    const obj = { id: 7, name: 'n', readme: 'r'.repeat(3000), config: { a: 'c'.repeat(1000) }, small: true };
    const { value, cut } = fitBytes(obj, 1500);
    expect(cut?.droppedFields).toEqual(['readme']);
    expect(value).toEqual({ id: 7, name: 'n', config: obj.config, small: true });
    expect(fitBytes(obj, 100_000)).toEqual({ value: obj });
  });
});

describe('the next call', () => {
  it('after a cut page: page/per_page arithmetic that continues exactly after the last item shown', () => {
    const t = tool(['state', 'page', 'per_page']);
    const cut = { list: { kept: 12, total: 30, lastKept: {} } };
    expect(nextCall(t, { state: 'open' }, [], cut, null).next).toEqual({ state: 'open', page: 2, per_page: 12 });
    // page 3 of 30: 60 + 12 = 72 items seen; 12 divides 72
    expect(nextCall(t, { page: 3, per_page: 30 }, [], cut, null).next).toEqual({ page: 7, per_page: 12 });
    // 30 + 7 = 37 is prime: one item per page is the only exact continuation
    expect(nextCall(t, { page: 2, per_page: 30 }, [], { list: { kept: 7, total: 30 } }, null).next).toEqual({ page: 38, per_page: 1 });
  });

  it("after a cut page: Stripe's starting_after from the last item shown", () => {
    const t = tool(['limit', 'starting_after']);
    expect(nextCall(t, { limit: 100 }, {}, { list: { key: 'data', kept: 5, total: 100, lastKept: { id: 'cus_5' } } }, null).next).toEqual({
      limit: 100,
      starting_after: 'cus_5',
    });
  });

  it('after a cut page without an offset: the same call with a page size that fits', () => {
    const t = tool(['limit', 'cursor']);
    expect(nextCall(t, { q: 'x' }, {}, { list: { kept: 5, total: 50 } }, null)).toEqual({ smaller: { q: 'x', limit: 5 } });
  });

  it('a whole page: the API own next page, from a Link header or a cursor in the body', () => {
    const gh = tool(['state', 'page', 'per_page']);
    const link =
      '<https://api.github.com/repositories/1/pulls?state=open&page=2&per_page=30>; rel="next", <https://api.github.com/repositories/1/pulls?state=open&page=5&per_page=30>; rel="last"';
    expect(nextCall(gh, { state: 'open' }, [], undefined, link).next).toEqual({ state: 'open', page: 2, per_page: 30 });
    // a Link whose query names a parameter the tool does not have gives no next call
    expect(nextCall(gh, {}, [], undefined, '<https://x/y?since=5>; rel="next"').next).toBeUndefined();
    const k8s = tool(['limit', 'continue']);
    expect(nextCall(k8s, { limit: 50 }, { kind: 'PodList', metadata: { continue: 'eyJ2', resourceVersion: '1' }, items: [] }, undefined, null).next).toEqual({
      limit: 50,
      continue: 'eyJ2',
    });
    const slack = tool(['cursor', 'limit']);
    expect(nextCall(slack, {}, { ok: true, response_metadata: { next_cursor: 'dXNlcj' } }, undefined, null).next).toEqual({ cursor: 'dXNlcj' });
    const stripe = tool(['limit', 'starting_after']);
    expect(nextCall(stripe, {}, { object: 'list', has_more: true, data: [{ id: 'a' }, { id: 'b' }] }, undefined, null).next).toEqual({ starting_after: 'b' });
    expect(nextCall(stripe, {}, { object: 'list', has_more: false, data: [{ id: 'a' }] }, undefined, null).next).toBeUndefined();
  });
});

describe('shapeResult', () => {
  it('a 30-item page over budget: whole items kept, a note with counts and the exact next call, within the budget', () => {
    const t = tool(['state', 'page', 'per_page'], { bytesPerToken: 3 });
    const page = Array.from({ length: 30 }, (_, i) => ({
      number: i + 1,
      title: `PR ${i + 1}`,
      body: 'b'.repeat(2000),
      user: { login: 'octo', avatar_url: 'https://a' },
      merged_at: null,
    }));
    const shaped = shapeResult(t, page, { ...DEFAULT_RESULT_POLICY, maxTokens: 2000 }, { state: 'open' }, null);
    const kept = shaped.value as Array<{ number: number; user: { login: string } }>;
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(30);
    expect(kept.map((k) => k.number)).toEqual(Array.from({ length: kept.length }, (_, i) => i + 1));
    expect(kept[0]!.user).toEqual({ login: 'octo' });
    expect(JSON.stringify(shaped.value).length / 3).toBeLessThanOrEqual(2000);
    expect(shaped.note?.text).toMatch(
      new RegExp(
        `^\\[results: ${kept.length} of 30 items shown, cut to fit 2000 tokens; the rest: call list_things with \\{"state":"open","page":\\d+,"per_page":\\d+\\}; left out: avatar_url \\(link and id noise\\), and empty values\\]$`,
      ),
    );
    expect(shaped.note?.next).toMatchObject({ state: 'open' });
  });

  it('a small result is compacted and carries no note unless something was left out', () => {
    const t = tool([]);
    expect(shapeResult(t, { id: 1, name: 'Rex' }, DEFAULT_RESULT_POLICY, {}, null)).toEqual({ value: { id: 1, name: 'Rex' } });
    expect(shapeResult(t, { id: 1, tags: [] }, { ...DEFAULT_RESULT_POLICY, compact: false }, {}, null)).toEqual({ value: { id: 1, tags: [] } });
    expect(shapeResult(t, null, DEFAULT_RESULT_POLICY, {}, null)).toEqual({ value: {} });
  });
});

/**
 * Search mode's runtime: the index built at build time and loaded by the server, the ranking's
 * word handling, and the bounds of every `search_tools` answer.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { buildSearchIndex, createToolSearch, expandQuery, searchDocument, stem } from '../../../templates/runtime/search.js';
import { SEARCH_LIMITS, SEARCH_TOOLS } from '../../../templates/runtime/search-tools.js';

const TOOLS = Array.from({ length: 30 }, (_, i) => ({
  name: `pets_item-${i}`,
  description: `Pet ${i}. ${'Long words about the pet. '.repeat(20)}`,
  tags: ['pets'],
  method: i % 2 ? 'POST' : 'GET',
  inputSchema: { type: 'object', properties: { petId: { type: 'string', description: 'The pet.' } } },
})).concat([
  { name: 'orders_create', description: 'Place an order\n\nBuys a pet.', tags: ['store'], method: 'POST', inputSchema: { type: 'object', properties: { body: { type: 'object', properties: { quantity: { type: 'integer' } } } } } },
  { name: 'orders_delete', description: 'Cancel an order', tags: ['store'], method: 'DELETE', inputSchema: { type: 'object', properties: {} } },
]);

describe('search runtime', () => {
  it('stems plurals and verb endings the same way on both sides', () => {
    expect(['issues', 'issue', 'merged', 'merge', 'merging', 'repositories', 'repository'].map(stem)).toEqual(['issu', 'issu', 'merg', 'merg', 'merg', 'repository', 'repository']);
    expect(expandQuery('remove my PR')).toBe('remove my PR delete pull request');
  });

  it('indexes summary, the rest of the description, the method as words, tags and argument names', () => {
    expect(searchDocument(TOOLS[30]!)).toEqual({ id: 'orders_create', name: 'orders_create', title: '', summary: 'Place an order', description: '\nBuys a pet.', action: 'create add new', tags: 'store', params: 'body quantity' });
  });

  it('builds the same index from the same tools, and ranks with it once loaded', () => {
    const json = buildSearchIndex(TOOLS);
    expect(buildSearchIndex(TOOLS)).toBe(json);
    const search = createToolSearch(json);
    expect(search.tools).toBe(SEARCH_TOOLS);
    const byName = new Map(TOOLS.map((t) => [t.name, t]));
    const r = search.search({ query: 'remove an order' }, () => true, (n) => byName.get(n));
    expect((r.structuredContent as { results: Array<{ name: string }> }).results[0]!.name).toBe('orders_delete');
    // concern filtering: only what `keep` accepts
    const kept = search.search({ query: 'order' }, (n) => n !== 'orders_delete', (n) => byName.get(n));
    expect((kept.structuredContent as { results: Array<{ name: string }> }).results.map((x) => x.name)).toEqual(['orders_create']);
  });

  it('bounds every answer and refuses malformed arguments with -32602', () => {
    const search = createToolSearch(buildSearchIndex(TOOLS));
    const byName = new Map(TOOLS.map((t) => [t.name, t]));
    const many = search.search({ query: 'pet', limit: 500 }, () => true, (n) => byName.get(n));
    const results = (many.structuredContent as { results: Array<{ description: string }> }).results;
    expect(results).toHaveLength(SEARCH_LIMITS.maxLimit);
    for (const x of results) expect(x.description.length).toBeLessThanOrEqual(SEARCH_LIMITS.descriptionChars);
    expect((search.search({ query: 'pet' }, () => true, (n) => byName.get(n)).structuredContent as { results: unknown[] }).results).toHaveLength(SEARCH_LIMITS.defaultLimit);
    for (const bad of [{}, { query: '' }, { query: 3 }, { query: 'pet', limit: 0 }, { query: 'pet', limit: 'all' }]) {
      expect(() => search.search(bad, () => true, () => undefined)).toThrow(ProtocolError);
    }
    expect(search.search({ query: 'zzzz' }, () => true, () => undefined).content).toEqual([{ type: 'text', text: 'No tool matches "zzzz"; try other words.' }]);
  });
});

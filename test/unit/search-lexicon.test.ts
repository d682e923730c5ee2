/**
 * The WordNet lexicon search mode expands tools with at build time (src/ir/features/search-lexicon.ts),
 * and what it does to the ranking: a user's word that no tool has meets the tool WordNet relates
 * it to, and the index built with it is the same bytes every time.
 */
import { describe, expect, it } from 'vitest';
import { wordnetLexicon } from '../../src/ir/features/search-lexicon.js';
import type { SearchSource } from '../../templates/runtime/search/search.js';
import { buildSearchIndex, createToolSearch } from '../../templates/runtime/search/search.js';

const TOOLS: SearchSource[] = [
  { name: 'customers_delete', description: 'Delete a customer.', method: 'DELETE', path: '/customers/{id}', inputSchema: {} },
  { name: 'refunds_create', description: 'Create a refund.', method: 'POST', path: '/refunds', inputSchema: {} },
  { name: 'invoices_list', description: 'List invoices.', method: 'GET', path: '/invoices', inputSchema: {} },
];

describe('WordNet lexicon', () => {
  it('relates a word to its synonyms and more specific words, sorted, and knows no short or odd words', () => {
    const lexicon = wordnetLexicon();
    expect(lexicon('customer')).toContain('buyer');
    expect(lexicon('refund')).toContain('reimburse');
    expect(lexicon('customers')).toContain('buyer');
    // the derivations of a word's first sense: a noun's verb and back
    expect(lexicon('assignee')).toContain('assign');
    expect(lexicon('payment')).toContain('pay');
    // adjectives, with their similar ones
    expect(lexicon('latest')).toContain('current');
    const words = lexicon('delete');
    expect(words).toEqual([...words].sort());
    expect(lexicon('id')).toEqual([]);
    expect(lexicon('x_1')).toEqual([]);
  });

  it('finds a tool by a word only WordNet relates to it, and builds the same bytes twice', () => {
    const json = buildSearchIndex(TOOLS, wordnetLexicon());
    expect(buildSearchIndex(TOOLS, wordnetLexicon())).toBe(json);
    const search = createToolSearch(json, undefined, {});
    const first = (query: string) =>
      (
        search.search(
          { query },
          () => true,
          () => undefined,
        ).structuredContent as { results: Array<{ name: string }> }
      ).results[0]?.name;
    expect(first('remove a buyer')).toBe('customers_delete');
    expect(first('reimburse someone')).toBe('refunds_create');
    // without the lexicon, neither word is in any tool
    const plain = createToolSearch(buildSearchIndex(TOOLS), undefined, {});
    expect(
      (
        plain.search(
          { query: 'buyer' },
          () => true,
          () => undefined,
        ).structuredContent as { results: unknown[] }
      ).results,
    ).toEqual([]);
  });
});

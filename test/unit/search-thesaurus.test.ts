/**
 * The general-English thesaurus search mode carries in its index (src/ir/features/search-thesaurus.ts):
 * the index keeps only the entries and words it has, the same bytes every time, and a query that
 * says an everyday word or a phrasal verb (also split: "turn the alert off") meets the tool the
 * API names with its own word. Each ranking case fails without the thesaurus.
 */
import { describe, expect, it } from 'vitest';
import { THESAURUS } from '../../src/ir/features/search-thesaurus.js';
import type { SearchSource } from '../../templates/runtime/search/search.js';
import { buildSearchIndex, createToolSearch } from '../../templates/runtime/search/search.js';
import { loadIndex, queryTerms, thesaurusTerms } from '../../templates/runtime/search/search-rank.js';
import { words } from '../../templates/runtime/search/search-text.js';

/** Catalogue order puts the read and the enable first, so a tie on "alert" alone ranks one of them first. */
const TOOLS: SearchSource[] = [
  { name: 'alerts_get', description: 'Get an alert rule.', method: 'GET', path: '/alerts/{id}', inputSchema: {} },
  { name: 'alerts_enable', description: 'Enable an alert rule.', method: 'POST', path: '/alerts/{id}/enable', inputSchema: {} },
  { name: 'alerts_disable', description: 'Disable an alert rule.', method: 'POST', path: '/alerts/{id}/disable', inputSchema: {} },
  { name: 'instances_get', description: 'Get an instance.', method: 'GET', path: '/instances/{id}', inputSchema: {} },
  { name: 'instances_create', description: 'Create an instance.', method: 'POST', path: '/instances', inputSchema: {} },
  { name: 'instances_delete', description: 'Delete an instance.', method: 'DELETE', path: '/instances/{id}', inputSchema: {} },
  { name: 'customers_get', description: 'Retrieve a customer.', method: 'GET', path: '/customers/{id}', inputSchema: {} },
  { name: 'projects_get', description: 'Get a project.', method: 'GET', path: '/projects/{id}', inputSchema: {} },
  { name: 'projects_transfer', description: 'Transfer a project to another owner.', method: 'POST', path: '/projects/{id}/transfer', inputSchema: {} },
];

const first = (json: string, query: string): string | undefined =>
  (
    createToolSearch(json, undefined, {}).search(
      { query },
      () => true,
      () => undefined,
    ).structuredContent as { results: Array<{ name: string }> }
  ).results[0]?.name;

describe('search thesaurus', () => {
  it('is lower-case words and phrases, each standing for one to a few API words', () => {
    const keys = Object.keys(THESAURUS);
    expect(keys.length).toBeGreaterThan(150);
    for (const key of keys) {
      // the ranking reads phrases of up to three words (search-rank.ts thesaurusTerms)
      expect(key).toMatch(/^[a-z0-9]+( [a-z0-9]+){0,2}$/);
      const value = THESAURUS[key]!;
      expect(value.length).toBeGreaterThan(0);
      expect(new Set(value).size).toBe(value.length);
      for (const w of value) expect(w).toMatch(/^[a-z0-9]+( [a-z0-9]+)?$/);
    }
  });

  it('is carried by the index only as far as the API has its words, in the same bytes every time', () => {
    const json = buildSearchIndex(TOOLS, undefined, THESAURUS);
    // the same table with its keys in another order gives the same bytes
    const shuffled = Object.fromEntries(Object.entries(THESAURUS).reverse());
    expect(buildSearchIndex(structuredClone(TOOLS), undefined, shuffled)).toBe(json);
    const table = (JSON.parse(json) as { thesaurus: Record<string, string[]> }).thesaurus;
    // `turn off` stands for disable, deactivate and stop; this API has only the first
    expect(table.turn_off).toEqual(['disabl']);
    expect(table.buyer).toEqual(['custom']);
    // no word of `money back` (refund) is in this API: the entry is left out
    expect(table.money_back).toBeUndefined();
    for (const ts of Object.values(table)) for (const t of ts) expect(Object.hasOwn(JSON.parse(json).terms, t)).toBe(true);
    // built without a thesaurus, the index has none (and the ranking adds nothing)
    const plain = loadIndex(buildSearchIndex(TOOLS));
    expect(plain.data.thesaurus).toBeUndefined();
    expect(thesaurusTerms(plain, words('turn off the alert'))).toEqual([]);
  });

  it('merges keys that stem alike only as far as they are one word inflected', () => {
    // `active` and `activity` both stem to `activ`; `set`, `setting` and `settings` to `set`
    const tools: SearchSource[] = [
      { name: 'runners_list', description: 'List hosted runners that are running or enabled.', inputSchema: {} },
      { name: 'activity_feeds', description: 'Get the activity feed, an event timeline.', inputSchema: {} },
      { name: 'settings_update', description: 'Update a setting: configure a preference or config.', inputSchema: {} },
      { name: 'issues_search', description: 'Search, get or find an issue by lookup.', inputSchema: {} },
    ];
    const index = loadIndex(buildSearchIndex(tools, undefined, THESAURUS));
    const table = index.data.thesaurus!;
    // different words: only what both give (active: enabled, running; activity: event, feed, timeline)
    expect(table.activ).toBeUndefined();
    expect(thesaurusTerms(index, words('active runners'))).toEqual([]);
    // set: update, configure; setting(s): config, configuration, preference; both say configure
    expect(table.set).toEqual(['configur']);
    // inflections of one word (`look up`, `looked up`) still give all their words
    expect(table.look_up).toEqual(['get', 'search', 'find', 'lookup']);
    // a table of two different words that stem alike gives their common words, whatever the key order
    const two = { stopping: ['halt', 'update'], stop: ['update', 'search'] };
    expect(loadIndex(buildSearchIndex(tools, undefined, two)).data.thesaurus).toEqual({ stop: ['updat'] });
  });

  it('drops one-word keys that are stop words: a query never looks them up', () => {
    // `let` ⇒ allow, `me` ⇒ user, `like` ⇒ star, `down` ⇒ status: the index has every target word
    const tools: SearchSource[] = [
      { name: 'users_get', description: 'Get the authenticated user: allow, permit, star, status, outage, customer.', inputSchema: {} },
    ];
    const table = loadIndex(buildSearchIndex(tools, undefined, THESAURUS)).data.thesaurus!;
    for (const key of ['let', 'me', 'like', 'down']) expect(Object.hasOwn(table, key), key).toBe(false);
    // a word that is not a stop word keeps its entry
    expect(table.buyer).toEqual(['custom']);
  });

  it('reads phrases before words, a verb with its particle a few words later, and no stop word alone', () => {
    const index = loadIndex(buildSearchIndex(TOOLS, undefined, THESAURUS));
    expect(thesaurusTerms(index, words('turn off the alert'))).toEqual(['disabl']);
    expect(thesaurusTerms(index, words('turned the noisy alert off'))).toEqual(['disabl']);
    expect(thesaurusTerms(index, words('switch it on'))).toEqual(['enabl']);
    // too far apart: not a phrasal verb
    expect(thesaurusTerms(index, words('turn to the alert rule of my project off'))).toEqual([]);
    // `tear down` is one phrase: `tear` and `down` add nothing of their own
    expect(thesaurusTerms(index, words('tear down a vm'))).toEqual(['delet', 'instanc']);
    // the thesaurus' words come in below the query's own: weight 1 for `alert`, less for `disabl`
    const weights = Object.fromEntries(queryTerms(index, 'turn off the alert').map((t) => [t.term, t.weight]));
    expect(weights.alert).toBe(1);
    expect(weights.disabl).toBeGreaterThan(0);
    expect(weights.disabl).toBeLessThan(1);
  });

  it('finds the tool an everyday request means, which the words alone do not', () => {
    const withTable = buildSearchIndex(TOOLS, undefined, THESAURUS);
    const without = buildSearchIndex(TOOLS);
    const cases: Array<[string, string]> = [
      ['turn the alert off', 'alerts_disable'],
      ['shut that alert off for now', 'alerts_disable'],
      ['spin up a machine', 'instances_create'],
      ['tear down the box', 'instances_delete'],
      ['look up a buyer', 'customers_get'],
      ['hand over the project to bob', 'projects_transfer'],
    ];
    for (const [query, tool] of cases) {
      expect(first(withTable, query), query).toBe(tool);
      expect(first(without, query), query).not.toBe(tool);
    }
  });
});

/**
 * Search mode's runtime: the index built at build time and loaded by the server (BM25F over the
 * tool fields, byte-deterministic), the query's intent against the operation's, prefix and
 * one-edit matches as a tiebreak only, the method and area filters, browsing areas, the debug
 * lines, and the bounds of every `search_tools` answer.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SEARCH_DEBUG_VARIABLE, serverVariables } from '../../../templates/runtime/process/variables.js';
import type { SearchSource } from '../../../templates/runtime/search/search.js';
import { buildSearchIndex, createToolSearch, fieldTexts } from '../../../templates/runtime/search/search.js';
import { COVERAGE } from '../../../templates/runtime/search/search-rank.js';
import { SEARCH_LIMITS, SEARCH_TOOLS } from '../../../templates/runtime/search/search-tools.js';

const TOOLS: SearchSource[] = Array.from({ length: 30 }, (_, i) => ({
  name: `pets_item-${i}`,
  description: `Pet ${i}. ${'Long words about the pet. '.repeat(20)}`,
  tags: ['pets'],
  method: i % 2 ? 'POST' : 'GET',
  path: `/pets/item${i}`,
  inputSchema: { type: 'object', properties: { petId: { type: 'string', description: 'The pet.' } } },
})).concat([
  {
    name: 'orders_create',
    description: 'Place an order\n\nBuys a pet.',
    tags: ['store'],
    method: 'POST',
    path: '/store/orders',
    inputSchema: {
      type: 'object',
      properties: {
        body: { type: 'object', title: 'NewOrder', properties: { quantity: { type: 'integer' }, state: { type: 'string', enum: ['placed', 'approved'] } } },
      },
    },
  },
  {
    name: 'orders_delete',
    description: 'Cancel an order',
    tags: ['store'],
    method: 'DELETE',
    path: '/store/orders/{orderId}',
    inputSchema: { type: 'object', properties: {} },
  },
]);

type Result = { name: string; description: string; area?: string; score: number };
const byName = new Map(TOOLS.map((t) => [t.name, t]));
const describeTool = (n: string) => byName.get(n);
const names = (r: { structuredContent?: unknown }) => (r.structuredContent as { results: Result[] }).results.map((x) => x.name);

/** A search over `tools` answering `query` (every tool visible), as the names ranked. */
function ranked(tools: SearchSource[], query: string, limit = 10): string[] {
  const by = new Map(tools.map((t) => [t.name, t]));
  return names(
    createToolSearch(buildSearchIndex(tools), undefined, {}).search(
      { query, limit },
      () => true,
      (n) => by.get(n),
    ),
  );
}

afterEach(() => vi.restoreAllMocks());

describe('search runtime', () => {
  it('indexes name, summary, path segments, tag, argument names with enum values, schema titles and the rest of the description', () => {
    expect(fieldTexts(TOOLS[30]!)).toEqual({
      name: 'orders_create',
      summary: 'Place an order',
      path: 'store orders',
      tag: 'store',
      params: 'body quantity state placed approved',
      titles: 'NewOrder',
      arguments: '',
      description: '\nBuys a pet.',
    });
  });

  it('builds the same bytes from the same tools, and ranks with it once loaded', () => {
    const json = buildSearchIndex(TOOLS);
    expect(buildSearchIndex(structuredClone(TOOLS))).toBe(json);
    // terms are stored in sorted order, whatever order the tools brought them in
    const keys = Object.keys((JSON.parse(json) as { terms: object }).terms).filter((k) => !/^\d+$/.test(k));
    expect(keys).toEqual([...keys].sort());
    const search = createToolSearch(json, undefined, {});
    expect(search.tools).toBe(SEARCH_TOOLS);
    expect(names(search.search({ query: 'remove an order' }, () => true, describeTool))[0]).toBe('orders_delete');
    // concern filtering: only what `keep` accepts
    expect(names(search.search({ query: 'order' }, (n) => n !== 'orders_delete', describeTool))).toEqual(['orders_create']);
  });

  it('weights fields: a word in the name outranks the same word in a long description', () => {
    const tools: SearchSource[] = [
      { name: 'things_get', description: `Get a thing. ${'Mentions widgets in passing among many other words. '.repeat(3)}`, inputSchema: {} },
      { name: 'widgets_get', description: 'Get one.', inputSchema: {} },
    ];
    expect(ranked(tools, 'widget')).toEqual(['widgets_get', 'things_get']);
  });

  it('matches the query intent against method and path shape: list for a question about what exists, delete for remove', () => {
    const tools: SearchSource[] = [
      { name: 'runners_delete', description: 'A runner.', method: 'DELETE', path: '/runners/{id}', inputSchema: {} },
      { name: 'runners_get', description: 'A runner.', method: 'GET', path: '/runners/{id}', inputSchema: {} },
      { name: 'runners_create', description: 'A runner.', method: 'POST', path: '/runners', inputSchema: {} },
      { name: 'runners_update', description: 'A runner.', method: 'PATCH', path: '/runners/{id}', inputSchema: {} },
      { name: 'runners_all', description: 'A runner.', method: 'GET', path: '/runners', inputSchema: {} },
    ];
    expect(ranked(tools, 'which runners are there')[0]).toBe('runners_all');
    expect(ranked(tools, 'what runners are running')[0]).toBe('runners_all');
    expect(ranked(tools, 'wipe a runner')[0]).toBe('runners_delete');
    expect(ranked(tools, 'change a runner')[0]).toBe('runners_update');
    expect(ranked(tools, 'add a runner')[0]).toBe('runners_create');
    expect(ranked(tools, 'show me runner 4')[0]).toBe('runners_get');
  });

  it('ranks a tool named for what the query says above one whose name says much more (coverage)', () => {
    const tools: SearchSource[] = [
      {
        name: 'scanning_bulk-delete-repo-custom-patterns',
        description: 'Bulk delete custom patterns of a repo\n\nPermanently deletes the patterns of a repo.',
        method: 'DELETE',
        path: '/repos/{owner}/{repo}/scanning/patterns',
        inputSchema: {},
      },
      { name: 'repos_delete', description: 'Delete a repository', method: 'DELETE', path: '/repos/{owner}/{repo}', inputSchema: {} },
      ...Array.from(
        { length: 8 },
        (_, i): SearchSource => ({
          name: `widgets_get-${i}`,
          description: 'Get a widget of a repo.',
          method: 'GET',
          path: `/repos/{owner}/{repo}/widgets/w${i}`,
          inputSchema: {},
        }),
      ),
    ];
    expect(ranked(tools, 'permanently delete a repo')[0]).toBe('repos_delete');
    // without the coverage factor, the longer name's extra matches win
    const saved = COVERAGE.perIdf;
    COVERAGE.perIdf = 0;
    try {
      expect(ranked(tools, 'permanently delete a repo')[0]).toBe('scanning_bulk-delete-repo-custom-patterns');
    } finally {
      COVERAGE.perIdf = saved;
    }
  });

  it('reads a request in the first person as about the authenticated user', () => {
    const tools: SearchSource[] = [
      { name: 'repos_list-for-org', description: 'List organization repositories.', method: 'GET', path: '/orgs/{org}/repos', inputSchema: {} },
      {
        name: 'repos_list-for-authenticated-user',
        description: 'List repositories for the authenticated user.',
        method: 'GET',
        path: '/user/repos',
        inputSchema: {},
      },
    ];
    expect(ranked(tools, 'which repositories do I own')[0]).toBe('repos_list-for-authenticated-user');
    expect(ranked(tools, 'list organization repositories')[0]).toBe('repos_list-for-org');
  });

  it('ranks prefix and one-edit matches below every exact match, as a tiebreak', () => {
    const tools: SearchSource[] = [
      { name: 'statuses_list', description: 'List statuses.', inputSchema: {} },
      { name: 'reports_get', description: 'Get a report. The stat of it.', inputSchema: {} },
    ];
    // `statuses` begins with `stat`: found, but after the tool with the word itself in a weaker field
    expect(ranked(tools, 'stat')).toEqual(['reports_get', 'statuses_list']);
    expect(ranked(tools, 'statu report')).toEqual(['reports_get', 'statuses_list']);
  });

  it('scores a word the index lacks through the longer words it begins, and its one-edit neighbours not at all', () => {
    const tools: SearchSource[] = [
      { name: 'states_get', description: 'Get a state.', inputSchema: {} },
      { name: 'configurations_get', description: 'Get a configuration.', inputSchema: {} },
    ];
    const search = createToolSearch(buildSearchIndex(tools), undefined, {});
    const results = (query: string) =>
      (
        search.search(
          { query },
          () => true,
          (n) => tools.find((t) => t.name === n),
        ).structuredContent as { results: Result[] }
      ).results;
    // "config" begins "configuration": an abbreviation, scored (discounted)
    expect(results('config')[0]).toMatchObject({ name: 'configurations_get' });
    expect(results('config')[0]!.score).toBeGreaterThan(0);
    // "staging" stems to "stage", one edit from "state": listed as a tiebreak only, score 0
    expect(results('staging')).toEqual([expect.objectContaining({ name: 'states_get', score: 0 })]);
  });

  it('filters by method and area, and browses areas and an area’s tools in pages', () => {
    const search = createToolSearch(buildSearchIndex(TOOLS), undefined, {});
    expect(names(search.search({ query: 'order', method: 'delete' }, () => true, describeTool))).toEqual(['orders_delete']);
    expect(names(search.search({ query: 'pet', tag: 'store' }, () => true, describeTool))).toEqual(['orders_create']);
    const areas = search.search({}, () => true, describeTool);
    expect(areas.structuredContent).toEqual({
      areas: [
        { area: 'pets', tools: 30, about: 'item' },
        { area: 'store', tools: 2, about: 'orders' },
      ],
      page: 1,
      pages: 1,
    });
    expect(search.search({}, (n) => n.startsWith('orders'), describeTool).structuredContent).toMatchObject({ areas: [{ area: 'store', tools: 2 }] });
    const first = search.search({ tag: 'pets' }, () => true, describeTool);
    expect(first.structuredContent).toMatchObject({ area: 'pets', page: 1, pages: 2 });
    expect((first.structuredContent as { tools: unknown[] }).tools).toHaveLength(SEARCH_LIMITS.toolPage);
    expect((first.content[0] as { text: string }).text).toContain('Page 1 of 2: page 2 for more.');
    const second = search.search({ tag: 'PETS', page: 2 }, () => true, describeTool);
    expect((second.structuredContent as { tools: Array<{ name: string; summary: string }> }).tools[0]).toEqual({ name: 'pets_item-15', summary: 'Pet 15' });
    expect((search.search({ tag: 'stor' }, () => true, describeTool).content[0] as { text: string }).text).toBe(
      'No area "stor". Did you mean "store"? Call search_tools without a query for the areas.',
    );
  });

  it('says what an area is about by the words of its tools’ names that tell it apart, not by its own name or words every area shares', () => {
    const tool = (name: string, tag: string): SearchSource => ({ name, description: name, tags: [tag], inputSchema: {} });
    const tools = [
      ...['workflow-runs', 'workflow-jobs', 'runner-groups', 'repo-secrets', 'org-secrets'].map((w) => tool(`actions_list-${w}-for-repo`, 'actions')),
      ...['issues', 'comments', 'labels'].map((w) => tool(`issues_list-${w}-for-repo`, 'issues')),
      tool('emojis_get', 'emojis'),
    ];
    const about = Object.fromEntries(
      (
        createToolSearch(buildSearchIndex(tools), undefined, {}).search(
          {},
          () => true,
          () => undefined,
        ).structuredContent as { areas: Array<{ area: string; about: string }> }
      ).areas.map((a) => [a.area, a.about]),
    );
    // `repo` is in nearly every name, `actions` is the area's own name: neither tells the area apart
    expect(about.actions).toBe('secrets, workflow, groups, jobs, org');
    expect(about.issues).toBe('comments, labels, repo');
    // an area whose names say nothing but its own name is about that
    expect(about.emojis).toBe('emojis');
  });

  it('declares MCPGEN_SEARCH_DEBUG among the server’s variables when search (or code) mode is on, and only then', () => {
    const config = { envPrefix: 'PETS', timeoutMs: 1000, maxResponseBytes: 1000 };
    const debug = (searchMode?: boolean) =>
      serverVariables({ config: { ...config, ...(searchMode !== undefined ? { searchMode } : {}) }, tools: [] }).find((v) => v.name === SEARCH_DEBUG_VARIABLE);
    expect(SEARCH_DEBUG_VARIABLE).toBe('MCPGEN_SEARCH_DEBUG');
    expect(debug(true)).toMatchObject({ kind: 'setting', secret: false, required: false });
    expect(debug(undefined)).toBeUndefined();
  });

  it('writes why each result scored what it did to stderr with MCPGEN_SEARCH_DEBUG, and nothing without', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    createToolSearch(buildSearchIndex(TOOLS), undefined, {}).search({ query: 'remove an order' }, () => true, describeTool);
    expect(write).not.toHaveBeenCalled();
    createToolSearch(buildSearchIndex(TOOLS), undefined, { MCPGEN_SEARCH_DEBUG: '1' }).search({ query: 'remove an order', limit: 1 }, () => true, describeTool);
    const lines = String(write.mock.calls[0]![0]).trimEnd().split('\n');
    expect(lines[0]).toBe('[search] "remove an order" intent=delete');
    expect(lines[1]).toMatch(
      /^\[search\] #1 orders_delete score=[\d.]+ = lexical [\d.]+ × intent 1\.5 \(query delete, tool delete\) × coverage [\d.]+; tiebreak [\d.]+; order\(idf [\d.]+; name×1,summary×1,path×1\)=[\d.]+$/,
    );
  });

  it('bounds every answer and refuses malformed arguments with -32602', () => {
    const search = createToolSearch(buildSearchIndex(TOOLS), undefined, {});
    const results = (search.search({ query: 'pet', limit: 500 }, () => true, describeTool).structuredContent as { results: Result[] }).results;
    expect(results).toHaveLength(SEARCH_LIMITS.maxLimit);
    for (const x of results) expect(x.description.length).toBeLessThanOrEqual(SEARCH_LIMITS.descriptionChars);
    const five = search.search({ query: 'pet' }, () => true, describeTool);
    expect((five.structuredContent as { results: unknown[] }).results).toHaveLength(SEARCH_LIMITS.defaultLimit);
    expect(Buffer.byteLength((five.content[0] as { text: string }).text)).toBeLessThanOrEqual(2048);
    // long titles: descriptions are cut shorter so that the default answer still fits 2 KB
    const wordy = TOOLS.slice(0, 6).map((t) => ({ ...t, title: `${t.name} ${'title words '.repeat(20)}` }));
    const byWordy = new Map(wordy.map((t) => [t.name, t]));
    const fit = createToolSearch(buildSearchIndex(wordy), undefined, {}).search(
      { query: 'pet' },
      () => true,
      (n) => byWordy.get(n),
    );
    const fitted = (fit.structuredContent as { results: Result[] }).results;
    expect(fitted).toHaveLength(5);
    expect(fitted[0]!.description.length).toBeLessThan(SEARCH_LIMITS.descriptionChars);
    expect(Buffer.byteLength((fit.content[0] as { text: string }).text)).toBeLessThanOrEqual(SEARCH_LIMITS.answerBytes);
    for (const bad of [
      { query: '' },
      { query: 3 },
      { query: 'pet', limit: 0 },
      { query: 'pet', limit: 'all' },
      { method: 'FETCH' },
      { tag: '' },
      { page: 0 },
    ]) {
      expect(() =>
        search.search(
          bad,
          () => true,
          () => undefined,
        ),
      ).toThrow(ProtocolError);
    }
    expect(
      search.search(
        { query: 'zzzz' },
        () => true,
        () => undefined,
      ).content,
    ).toEqual([{ type: 'text', text: 'No tool matches "zzzz"; try other words, or call search_tools without a query to browse the areas.' }]);
  });

  it('answers a query or an area that is any text: names of Object.prototype find nothing, and a repeated query stays within the budget', () => {
    const search = createToolSearch(
      buildSearchIndex([{ name: 'pets_get', description: 'Get a pet.', method: 'GET', path: '/pets/{id}', inputSchema: {} }]),
      undefined,
      {},
    );
    const ask = (args: Record<string, unknown>) =>
      (
        search.search(
          args,
          () => true,
          () => undefined,
        ).content[0] as { text: string }
      ).text;
    for (const query of ['constructor', 'Constructors', 'list pets constructor', '__proto__', 'hasOwnProperty', 'toString valueOf', 'pr constructor'])
      expect(() => ask({ query }), query).not.toThrow();
    expect(ask({ query: 'constructor' })).toMatch(/^No tool matches "constructor"/);
    expect(ask({ query: 'get pet constructor' })).toContain('pets_get');
    // every character escaped as six bytes in JSON: the answer repeats only the query's start
    for (const query of ['\u0001'.repeat(500), '\ud800'.repeat(500)]) {
      const text = ask({ query });
      expect(text).toMatch(/^No tool matches /);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(SEARCH_LIMITS.answerBytes);
    }
    expect(Buffer.byteLength(ask({ tag: '\u0001'.repeat(200) }))).toBeLessThanOrEqual(SEARCH_LIMITS.answerBytes);
  });
});

describe('acronyms', () => {
  const nouns = ['files', 'reviews', 'comments', 'commits', 'labels'];
  const tools: SearchSource[] = nouns
    .map((n) => ({ name: `pulls_${n}`, description: `Pull request ${n}.`, inputSchema: {} }))
    .concat([
      { name: 'repos_get', description: 'Get a repository.', inputSchema: {} },
      { name: 'pr_tools', description: 'Get a pr.', inputSchema: {} },
    ]);

  it('reads a query word as the initials of a phrase at least five tools share, unless the API uses the word as widely', () => {
    const index = JSON.parse(buildSearchIndex(tools)) as { acronyms: Record<string, string[]> };
    expect(index.acronyms).toEqual({ pr: ['pull', 'request'] });
    expect(ranked(tools, 'PR reviews')[0]).toBe('pulls_reviews');
    // the tool that says `pr` itself first, then the pull request tools (no word of theirs is `pr`)
    expect(ranked(tools, 'PRs')).toEqual(['pr_tools', ...nouns.map((n) => `pulls_${n}`)]);
    // four tools are not enough
    expect((JSON.parse(buildSearchIndex(tools.slice(1))) as { acronyms: object }).acronyms).toEqual({});
  });
});

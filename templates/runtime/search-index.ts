/**
 * The full-text index of search mode: how tools become search documents, the MiniSearch options
 * (the same at build time, when mcpgen builds and serialises the index, and at run time, when the
 * server loads it), and the ranking. Pure: it imports only MiniSearch, so mcpgen itself runs it.
 *
 * This file is copied into generated projects that use search mode.
 */
import MiniSearch from 'minisearch';
import type { Options, SearchOptions } from 'minisearch';
/** What the index knows of one tool. */
export type SearchDocument = {
  /** The tool name (the document id). */
  readonly id: string;
  /** The name split into words (`issues_create-comment` ⇒ `issues create comment`). */
  readonly name: string;
  readonly title: string;
  /** The first sentence of the description (an operation's summary). */
  readonly summary: string;
  /** The rest of the description. */
  readonly description: string;
  /** What the HTTP method does, in words (`create add new` for POST), so a request's verb meets it. */
  readonly action: string;
  readonly tags: string;
  /** Argument names and descriptions (top level, and the properties of a `body` argument). */
  readonly params: string;
};

/** The fields the tools of a server are indexed over, and how much a match in each counts. */
const BOOST = { name: 1.5, title: 2, summary: 3, action: 1.5, tags: 1, description: 0.4, params: 0.08 } as const;

/** The action words of each HTTP method. */
const ACTIONS: Record<string, string> = {
  get: 'get list show',
  head: 'get',
  post: 'create add new',
  put: 'update set replace add',
  patch: 'update edit change',
  delete: 'delete remove',
};

/**
 * Everyday words for the actions and subjects of a REST API, added to a query beside the word
 * itself: a user says "open a new ticket" or "who am I", an API says `create` and
 * `authenticated user`. Generic REST vocabulary, not any one API's.
 */
const EXPANSIONS: Record<string, string> = {
  new: 'create', open: 'create', make: 'create', start: 'create', submit: 'create', publish: 'create', propose: 'create', file: 'create', raise: 'create', register: 'create', post: 'create',
  which: 'list', all: 'list', history: 'list', browse: 'list', enumerate: 'list', see: 'list get', show: 'list get', view: 'get', read: 'get', fetch: 'get', download: 'get', details: 'get', look: 'get',
  edit: 'update', change: 'update', modify: 'update', close: 'update', reopen: 'update', rename: 'update',
  remove: 'delete', erase: 'delete', destroy: 'delete', permanently: 'delete',
  find: 'search', ask: 'request add', reply: 'comment create', respond: 'comment create', trigger: 'dispatch run create', whenever: 'webhook', notify: 'webhook',
  me: 'authenticated', mine: 'authenticated', own: 'authenticated', myself: 'authenticated', logged: 'authenticated', am: 'authenticated',
  bug: 'issue', ticket: 'issue', tag: 'label add', pr: 'pull request', prs: 'pull request', copy: 'fork', callback: 'webhook hook create',
};

/** `query` with the expansions of its words added. */
export function expandQuery(query: string): string {
  const extra = tokenize(query)
    .map((w) => EXPANSIONS[w.toLowerCase()])
    .filter((x): x is string => x !== undefined);
  return extra.length > 0 ? `${query} ${extra.join(' ')}` : query;
}

/** Words too common in requests and API descriptions to tell tools apart. */
const STOP = new Set(
  'a an and any are as at be been by can could do does for from has have how i if in into is it its me my of on or our please should so some someone that the their them then there these this those to was we what when where which who will with would you your'.split(' '),
);

/**
 * A light English stemmer: plurals and the common verb endings, so `issues`/`issue` and
 * `merged`/`merge`/`merging` meet. Deliberately crude: the same function runs on the index and
 * the query, so it only has to be consistent.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = w.slice(0, -3) + 'y';
  else if (w.length > 4 && /(ches|shes|sses|xes)$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  if (w.length > 4 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

/** Lower case, stop words dropped, stemmed; camelCase split into words. */
function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (t.length < 2 || STOP.has(t)) return null;
  return stem(t);
}

/** Words of a name or text: camelCase and `snake_case`/`kebab-case`/paths split apart. */
function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s\p{P}\p{S}]+/u)
    .filter((w) => w.length > 0);
}

/** The MiniSearch options, the same at build time and at run time. */
export const INDEX_OPTIONS: Options<SearchDocument> = {
  fields: ['name', 'title', 'summary', 'description', 'action', 'tags', 'params'],
  storeFields: [],
  tokenize,
  processTerm,
};

const QUERY_OPTIONS: SearchOptions = { boost: { ...BOOST }, prefix: (term) => term.length > 3, fuzzy: (term) => (term.length > 5 ? 0.15 : false), combineWith: 'OR' };

/** The tool fields a search document is made of. */
export type SearchSource = {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  /** The HTTP method of an operation tool. */
  readonly method?: string;
  readonly inputSchema: { readonly [key: string]: unknown };
};

/** Argument names and descriptions of an input schema: its properties, and those of a `body` object argument. */
function argumentWords(schema: SearchSource['inputSchema']): string[] {
  const words: string[] = [];
  const add = (props: unknown): void => {
    if (typeof props !== 'object' || props === null) return;
    for (const [name, sub] of Object.entries(props)) {
      words.push(name);
      const d = typeof sub === 'object' && sub !== null ? (sub as { description?: unknown }).description : undefined;
      if (typeof d === 'string') words.push(d);
    }
  };
  const props = schema.properties;
  add(props);
  const body = typeof props === 'object' && props !== null ? (props as Record<string, unknown>).body : undefined;
  if (typeof body === 'object' && body !== null) add((body as { properties?: unknown }).properties);
  return words;
}

/** The search document of a tool. */
export function searchDocument(tool: SearchSource): SearchDocument {
  const text = tool.description ?? '';
  const cut = text.search(/\.(\s|$)|\n/);
  return {
    id: tool.name,
    name: tool.name,
    title: tool.title ?? '',
    summary: cut < 0 ? text : text.slice(0, cut),
    description: cut < 0 ? '' : text.slice(cut + 1),
    action: tool.method !== undefined ? (ACTIONS[tool.method.toLowerCase()] ?? '') : '',
    tags: (tool.tags ?? []).join(' '),
    params: argumentWords(tool.inputSchema).join(' '),
  };
}

/** Builds the index of `tools` and returns it serialised (what a generated project embeds). */
export function buildSearchIndex(tools: readonly SearchSource[]): string {
  const index = new MiniSearch<SearchDocument>(INDEX_OPTIONS);
  index.addAll(tools.map(searchDocument));
  return JSON.stringify(index);
}

/** The ranked tool names for `query`, best first, at most `limit`, keeping only those `keep` accepts. */
export function rankTools(index: MiniSearch<SearchDocument>, query: string, limit: number, keep: (name: string) => boolean = () => true): Array<{ name: string; score: number }> {
  const out: Array<{ name: string; score: number }> = [];
  for (const hit of index.search(expandQuery(query), QUERY_OPTIONS)) {
    const name = String(hit.id);
    if (!keep(name)) continue;
    out.push({ name, score: Math.round(hit.score * 100) / 100 });
    if (out.length >= limit) break;
  }
  return out;
}

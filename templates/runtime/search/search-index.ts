/**
 * The index of search mode: how tools become field-weighted documents, and the serialised index a
 * build embeds in the generated server (`search-index.gen.ts`). mcpgen builds it with the same
 * code the server ranks with (search-rank.ts), so the two cannot disagree. Byte-deterministic: the
 * same tools (and lexicon) give the same string.
 *
 * This file is copied into generated projects that use search mode.
 */

import type { Intent } from './search-text.js';
import { isIntentWord, operationIntent, phraseTerm, term, terms, words } from './search-text.js';

/** The fields of a tool document, in index order. */
export const FIELDS = ['name', 'summary', 'path', 'tag', 'params', 'titles', 'arguments', 'description', 'related'] as const;
export type Field = (typeof FIELDS)[number];

/** The tool fields a search document is made of. */
export type SearchSource = {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  /** The HTTP method of an operation tool. */
  readonly method?: string;
  /** The path template of an operation tool (`/repos/{owner}/{repo}/issues`). */
  readonly path?: string;
  readonly inputSchema: { readonly [key: string]: unknown };
};

/**
 * General lexical knowledge added at build time (mcpgen's WordNet lexicon, src/ir/features/search-lexicon.ts):
 * the words related to a word of a tool's name, summary, tag or path. A phrase is its words joined
 * by a space. Absent, the `related` field stays empty.
 */
export type Lexicon = (word: string) => readonly string[];

/**
 * Everyday words and phrases with the API words they stand for (mcpgen's general-English
 * thesaurus, src/ir/features/search-thesaurus.ts: `turn off` ⇒ disable, `buyer` ⇒ customer). The
 * index keeps the entries whose words it has, restricted to those words ({@link thesaurusOf}); the
 * ranking adds them to a query that says the key (search-rank.ts).
 */
export type Thesaurus = Readonly<Record<string, readonly string[]>>;

/** Longest description text indexed (the rest adds bytes, rarely a word that tells tools apart). */
const DESCRIPTION_CHARS = 600;

/** The index as serialised: one JSON object, keys in a fixed order. */
export type SerialisedIndex = {
  readonly version: 2;
  readonly fields: readonly Field[];
  /** Per tool: name, intent (or ''), area index, method (or ''). */
  readonly tools: ReadonlyArray<readonly [string, Intent | '', number, string]>;
  /** Per tool, per field: its length in terms. */
  readonly lengths: ReadonlyArray<readonly number[]>;
  /** Areas: name and how many tools. */
  readonly areas: ReadonlyArray<readonly [string, number]>;
  /** Term ⇒ flat postings `[tool, field, frequency, tool, field, frequency, …]`, tools ascending. */
  readonly terms: { readonly [term: string]: readonly number[] };
  /** Acronym ⇒ the terms of the phrase it abbreviates in this API's own names and summaries ({@link acronyms}). */
  readonly acronyms: { readonly [acronym: string]: readonly string[] };
  /** Thesaurus key (its words' stems joined by `_`) ⇒ the index terms it stands for ({@link thesaurusOf}); absent in an index built without one. */
  readonly thesaurus?: { readonly [key: string]: readonly string[] };
};

/**
 * The part of a thesaurus an index carries: each key (its words stemmed, joined by `_`: `turn_off`)
 * with the terms of its words that the index has, the key's own term left out; keys with none, and
 * one-word keys that are stop words (a query's stop words are not looked up), are dropped. Keys
 * that stem alike are one entry: inflections of one word ({@link sameWord}: `look up`, `looked
 * up`) give all their terms; different words (`active`, `activity`) give only the terms all of
 * them give. Sorted, so the same thesaurus and tools give the same bytes.
 */
function thesaurusOf(thesaurus: Thesaurus, has: (t: string) => boolean): Record<string, string[]> {
  const groups = new Map<string, Array<Array<{ ws: string[]; ts: Set<string> }>>>();
  for (const key of Object.keys(thesaurus).sort()) {
    const ws = words(key);
    if (ws.length === 1 && term(ws[0]!) === null) continue;
    const k = phraseTerm(ws);
    const ts = new Set<string>();
    for (const w of thesaurus[key]!) for (const t of terms(w)) if (t !== k) ts.add(t);
    const kinds = groups.get(k) ?? [];
    groups.set(k, kinds);
    const kind = kinds.find((c) => c.some((e) => e.ws.length === ws.length && e.ws.every((w, i) => sameWord(w, ws[i]!))));
    if (kind === undefined) kinds.push([{ ws, ts }]);
    else kind.push({ ws, ts });
  }
  const out: Record<string, string[]> = {};
  for (const k of [...groups.keys()].sort()) {
    const [first, ...rest] = groups.get(k)!.map((kind) => new Set(kind.flatMap((e) => [...e.ts])));
    const ts = [...first!].filter((t) => has(t) && rest.every((r) => r.has(t)));
    if (ts.length > 0) out[k] = ts;
  }
  return out;
}

/** Are two words one word inflected (`look`, `looked`; `setting`, `settings`): the same once a final s, es, ed or ing is dropped? */
function sameWord(a: string, b: string): boolean {
  const bases = (w: string) => [w, ...['s', 'es', 'ed', 'ing'].filter((x) => w.endsWith(x)).map((x) => w.slice(0, -x.length))];
  const bs = bases(b);
  return bases(a).some((x) => bs.includes(x));
}

/** Fewest tools whose names or summaries must share a phrase for its initials to stand for it. */
const ACRONYM_MIN_TOOLS = 5;

/**
 * The acronyms of an API, learnt from its own text: each phrase of two or three consecutive
 * content words of a tool's name or summary ("pull request", "custom resource definition") that
 * at least {@link ACRONYM_MIN_TOOLS} tools share gives its initials (`pr`, `crd`) to the most
 * widely shared such phrase, unless the initials are a common word or one the API's names and
 * summaries use in as many tools. Verbs of intent (`create`, `list`) are left out of phrases. A query's `PR` or `CRDs` then meets pull requests and custom
 * resource definitions, with no table of abbreviations.
 */
function acronyms(tools: readonly SearchSource[], keyDf: (t: string) => number): Record<string, string[]> {
  const df = new Map<string, number>();
  for (const tool of tools) {
    const seen = new Set<string>();
    for (const text of [tool.name, summaryOf(tool).summary]) {
      const ws = words(text).filter((w) => term(w) !== null && /^[a-z]/.test(w) && !isIntentWord(w));
      for (let n = 2; n <= 3; n++) for (let i = 0; i + n <= ws.length; i++) seen.add(ws.slice(i, i + n).join(' '));
    }
    for (const phrase of seen) df.set(phrase, (df.get(phrase) ?? 0) + 1);
  }
  const best = new Map<string, { phrase: string; n: number }>();
  for (const [phrase, n] of [...df].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (n < ACRONYM_MIN_TOOLS) continue;
    const initials = phrase
      .split(' ')
      .map((w) => w[0])
      .join('');
    const at = best.get(initials);
    if (at === undefined || n > at.n) best.set(initials, { phrase, n });
  }
  const out: Record<string, string[]> = {};
  for (const a of [...best.keys()].sort()) {
    // a word the API itself uses at least as widely (`id`, `sip`) is not read as an acronym
    const own = term(a);
    if (own === null || keyDf(own) >= best.get(a)!.n) continue;
    out[a] = terms(best.get(a)!.phrase);
  }
  return out;
}

/** The summary (title, else the description's first sentence) and the rest of the description. */
export function summaryOf(tool: Pick<SearchSource, 'title' | 'description'>): { summary: string; rest: string } {
  const text = tool.description ?? '';
  const cut = text.search(/\.(\s|$)|\n/);
  const first = cut < 0 ? text : text.slice(0, cut);
  const rest = cut < 0 ? '' : text.slice(cut + 1);
  if (tool.title !== undefined && tool.title.length > 0) return { summary: tool.title, rest: first === tool.title ? rest : text };
  return { summary: first, rest };
}

/** Longest part of an argument's description indexed. */
const ARGUMENT_DESCRIPTION_CHARS = 120;
/** Most values of an enum indexed with its argument (`state`: `open`, `closed`, `all`). */
const MAX_ENUM = 12;

/**
 * Argument names (top level, and the properties of a `body` object argument) with the values of
 * their short string enums, the schema titles found there, and the arguments' descriptions (cut).
 */
function argumentsOf(schema: SearchSource['inputSchema']): { names: string[]; titles: string[]; descriptions: string[] } {
  const names: string[] = [];
  const titles: string[] = [];
  const descriptions: string[] = [];
  const title = (s: unknown) => {
    const t = typeof s === 'object' && s !== null ? (s as { title?: unknown }).title : undefined;
    if (typeof t === 'string') titles.push(t);
  };
  const add = (props: unknown): void => {
    if (typeof props !== 'object' || props === null) return;
    for (const [name, sub] of Object.entries(props)) {
      names.push(name);
      title(sub);
      const d = typeof sub === 'object' && sub !== null ? (sub as { description?: unknown }).description : undefined;
      if (typeof d === 'string') descriptions.push(d.slice(0, ARGUMENT_DESCRIPTION_CHARS));
      const values = typeof sub === 'object' && sub !== null ? (sub as { enum?: unknown }).enum : undefined;
      if (Array.isArray(values) && values.length <= MAX_ENUM) for (const v of values) if (typeof v === 'string') names.push(v);
    }
  };
  title(schema);
  add(schema.properties);
  const props = schema.properties;
  const body = typeof props === 'object' && props !== null ? (props as Record<string, unknown>).body : undefined;
  if (typeof body === 'object' && body !== null) add((body as { properties?: unknown }).properties);
  return { names, titles, descriptions };
}

/** The literal segments of a path, version-like ones (`v1`, `2010-04-01`) and parameters left out. */
export function pathWords(path: string | undefined): string[] {
  return (path ?? '')
    .split('/')
    .filter((s) => s.length > 0 && !s.startsWith('{') && !/^(v\d+\w*|\d[\d-]*|api|apis)$/i.test(s))
    .map((s) => s.replace(/\.(json|xml)$/, ''));
}

/**
 * The area of a tool, for browsing: its first tag, else the first literal segment of its path,
 * else `other`.
 */
export function areaOf(tool: SearchSource): string {
  return tool.tags?.[0] ?? pathWords(tool.path)[0] ?? 'other';
}

/** The text of each field of a tool, before lexical expansion. */
export function fieldTexts(tool: SearchSource): Record<Exclude<Field, 'related'>, string> {
  const { summary, rest } = summaryOf(tool);
  const args = argumentsOf(tool.inputSchema);
  return {
    name: tool.name,
    summary,
    path: pathWords(tool.path).join(' '),
    tag: (tool.tags ?? []).join(' '),
    params: args.names.join(' '),
    titles: args.titles.join(' '),
    arguments: args.descriptions.join(' '),
    description: rest.slice(0, DESCRIPTION_CHARS),
  };
}

/** The terms of a tool's `related` field: the lexicon's words for the words of its name, summary, tag and path. */
function relatedTerms(texts: Record<Exclude<Field, 'related'>, string>, lexicon: Lexicon | undefined): string[] {
  if (lexicon === undefined) return [];
  const seen = new Set<string>();
  for (const field of ['name', 'summary', 'tag', 'path'] as const) for (const w of words(texts[field])) seen.add(w);
  const own = new Set([...seen].flatMap((w) => terms(w)));
  const out = new Set<string>();
  for (const w of [...seen].sort()) {
    for (const r of lexicon(w)) {
      const parts = r.split(' ');
      const t = parts.length > 1 ? phraseTerm(parts) : terms(r)[0];
      if (t !== undefined && !own.has(t)) out.add(t);
    }
  }
  return [...out].sort();
}

/** How many tools have a term in their name or summary, from its postings. */
function namedIn(p: readonly number[]): number {
  const docs = new Set<number>();
  const key = [FIELDS.indexOf('name'), FIELDS.indexOf('summary')];
  for (let i = 0; i < p.length; i += 3) if (key.includes(p[i + 1]!)) docs.add(p[i]!);
  return docs.size;
}

/** Builds the index of `tools` (in catalogue order) and returns it serialised: what a generated project embeds. */
export function buildSearchIndex(tools: readonly SearchSource[], lexicon?: Lexicon, thesaurus?: Thesaurus): string {
  const areaNames = [...new Set(tools.map(areaOf))].sort();
  const areaCount = new Map<string, number>();
  const postings = new Map<string, number[]>();
  const lengths: number[][] = [];
  const rows: Array<[string, Intent | '', number, string]> = [];
  tools.forEach((tool, doc) => {
    const area = areaOf(tool);
    areaCount.set(area, (areaCount.get(area) ?? 0) + 1);
    rows.push([tool.name, operationIntent(tool.method, tool.path, tool.name) ?? '', areaNames.indexOf(area), (tool.method ?? '').toUpperCase()]);
    const texts = fieldTexts(tool);
    const lens: number[] = [];
    FIELDS.forEach((field, f) => {
      const ts = field === 'related' ? relatedTerms(texts, lexicon) : terms(texts[field]);
      lens.push(ts.length);
      const tf = new Map<string, number>();
      for (const t of ts) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [t, n] of tf) {
        let p = postings.get(t);
        if (p === undefined) postings.set(t, (p = []));
        p.push(doc, f, n);
      }
    });
    lengths.push(lens);
  });
  const sortedTerms: Record<string, number[]> = {};
  for (const t of [...postings.keys()].sort()) sortedTerms[t] = postings.get(t)!;
  const index: SerialisedIndex = {
    version: 2,
    fields: FIELDS,
    tools: rows,
    lengths,
    areas: areaNames.map((a) => [a, areaCount.get(a)!]),
    terms: sortedTerms,
    acronyms: acronyms(tools, (t) => namedIn(postings.get(t) ?? [])),
    ...(thesaurus !== undefined ? { thesaurus: thesaurusOf(thesaurus, (t) => postings.has(t)) } : {}),
  };
  return JSON.stringify(index);
}

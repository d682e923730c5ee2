/**
 * The runtime's messages that the docs quote stay the runtime's messages: every message in a docs
 * table whose last column is "Message", every `isError`: `…` quoted in running text, and any other
 * quote in running text recognised as a runtime message (one long piece of it is said verbatim), is split
 * at its placeholders (`<name>`, `…`, `N`, example values in quotes, error codes such as
 * ECONNREFUSED), and each literal piece of 8+ characters must be in the runtime's source
 * (templates/runtime, where a template literal's `${…}` may sit between its words). A message
 * reworded in code without its doc fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RUNTIME = path.join(ROOT, 'templates/runtime');

/** Every .ts file of the runtime, with the escapes a template or string literal needs undone. */
const source = readdirSync(RUNTIME, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => readFileSync(path.join(RUNTIME, f), 'utf8'))
  .join('\n')
  .replace(/\\([`'"])/g, '$1');

type Quote = { where: string; text: string };

/** The quoted messages of one doc. */
function quotes(file: string): Quote[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const found: Quote[] = [];
  let inTable = false;
  lines.forEach((line, i) => {
    const where = `${file}:${i + 1}`;
    if (/^\| .*\| Message \|$/.test(line)) {
      inTable = true;
      return;
    }
    if (!line.startsWith('|')) inTable = false;
    if (inTable && !line.startsWith('| ---')) {
      const last =
        line
          .split(/(?<!\\)\|/)
          .slice(1, -1)
          .at(-1) ?? '';
      // an example ("e.g. `…`") is an instance of a pattern, not the message's text
      for (const m of last.replace(/e\.g\. ``.+?``|e\.g\. `[^`]+`(, `[^`]+`)*/g, '').matchAll(/``(.+?)``|`([^`]+)`/g))
        found.push({ where, text: (m[1] ?? m[2])! });
    }
    for (const m of line.matchAll(/`isError`: ``(.+?)``|`isError`: `([^`]+)`/g)) found.push({ where, text: (m[1] ?? m[2])! });
  });
  return found;
}

/** The literal pieces of a quoted message: what is left between its placeholders. */
function pieces(text: string): string[] {
  return text
    .split(/<[^>]+>|…|\.\.\.|"[^"]*"|\b[NM]\b|\b[A-Z]{3,}\b|\/path|\([^)]*"[^)]*\)/)
    .map((p) => p.trim())
    .filter((p) => p.length >= 8);
}

/** In the source as written, or with a template literal's `${…}` between some of its words. */
function inSource(piece: string): boolean {
  if (source.includes(piece)) return true;
  const words = piece.split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(words.join('(?:\\s|\\$\\{[^`\\n]{0,120}?`?)+')).test(source);
}

const DOCS = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/**
 * Runtime messages quoted in running text outside the tables (a refusal the server logs, a note a
 * result carries): a quote of 30+ characters that reads as words, one of whose literal pieces of
 * 12+ characters the runtime says verbatim. Recognised so, it must then be the runtime's whole.
 */
function prose(file: string, known: ReadonlySet<string>, text: string = readFileSync(path.join(ROOT, file), 'utf8')): Quote[] {
  const found: Quote[] = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/``(.+?)``|`([^`]+)`/g)) {
      const text = (m[1] ?? m[2])!;
      if (known.has(text) || text.length < 30 || !/ [a-z]+ [a-z]+ /.test(text)) continue;
      if (pieces(text).some((p) => p.length >= 12 && source.includes(p))) found.push({ where: `${file}:${i + 1}`, text });
    }
  });
  return found;
}

describe('runtime messages quoted in the docs', () => {
  const tabled = DOCS.flatMap(quotes);
  const known = new Set(tabled.map((q) => q.text));
  const all = [...tabled, ...DOCS.flatMap((f) => prose(f, known))];

  it('finds the message tables and quoted isError results (the check reads something)', () => {
    expect(all.length).toBeGreaterThanOrEqual(25);
    expect(all.map((q) => q.text)).toContain("Tool with name '<name>' already exists");
  });

  it.each(all.map((q) => [q.where, q.text] as const))('%s: %s', (_where, text) => {
    const missing = pieces(text).filter((p) => !inSource(p));
    expect(missing, 'reworded in the runtime without its doc (or the doc without the runtime)').toEqual([]);
  });

  it('recognises a runtime message quoted in running text, and its rewording', () => {
    const [quote] = prose(
      'x.md',
      new Set(),
      'On success: `Justification stored (domain "pets", hash <hash>). Now call <tool> once more, with the same arguments.`',
    );
    expect(quote?.text).toMatch(/^Justification stored/);
    expect(pieces(quote!.text).filter((p) => !inSource(p))).toHaveLength(1);
  });

  it('fails for a message the runtime does not say', () => {
    expect(pieces('hash: was issued by a different server entirely <x>').filter((p) => !inSource(p))).toHaveLength(1);
  });
});

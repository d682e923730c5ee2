/**
 * Removes mapping entries from YAML (or JSON) text by JSON pointer, touching nothing else.
 *
 * The `yaml` library's Document API finds each entry and its source range; the entry's text is
 * then cut from the original, so every other byte — comments, key order, quoting, alignment,
 * blank lines — stays as written (re-printing the document would reflow long strings and
 * respace comments). In a block mapping an entry goes with its whole lines (its own trailing
 * comment and any comment lines inside its value included; comment lines above it stay); in a
 * flow mapping (`{ a: 1, b: 2 }`) with its comma. A block mapping left empty goes too, with its
 * key, up to (not including) the top level. The result is parsed again and must equal the input
 * less exactly those entries, or nothing is returned but the reason.
 */
import { isDeepStrictEqual } from 'node:util';
import { isMap, isScalar, type Pair, parseDocument, type YAMLMap } from 'yaml';
import { parsePointer, pointer as pointerOf } from '../../core/diagnostics.js';

/** One removed entry: its pointer, the lines it was on (1-based, inclusive) and their text (a flow entry: its own text). */
export type RemovedEntry = { pointer: string; firstLine: number; lastLine: number; lines: string[] };

/** What {@link removeEntries} did: the new text and what it removed, in file order; or why it could not. */
export type RemoveResult = { ok: true; text: string; removed: RemovedEntry[] } | { ok: false; reason: string };

const PARSE_OPTIONS = { merge: true, uniqueKeys: true, prettyErrors: false } as const;

type Target = { path: string[]; map: YAMLMap; pair: Pair };

/** Removes the entries at `pointers` (each must name a key of a mapping written in the file). */
export function removeEntries(source: string, pointers: readonly string[]): RemoveResult {
  const doc = parseDocument(source, PARSE_OPTIONS);
  const parsed = valueOf(source);
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const before = parsed.value;

  const wanted = new Map<string, string[]>();
  for (const p of pointers) wanted.set(p, parsePointer(p));
  let targets: Target[] = [];
  for (const [pointer, path] of wanted) {
    const t = find(doc, path);
    if (typeof t === 'string') return { ok: false, reason: `${pointer}: ${t}` };
    targets.push(t);
  }
  targets = collapse(doc, targets);

  // source ranges, merged where they touch (neighbours in a flow mapping), cut from the end
  const cuts: Array<{ start: number; end: number }> = [];
  for (const t of targets) {
    const r = t.map.flow ? flowRange(source, t, targets) : blockRange(source, t);
    if (typeof r === 'string') return { ok: false, reason: `${pointerOf(t.path)}: ${r}` };
    cuts.push(r);
  }
  cuts.sort((a, b) => a.start - b.start);
  const merged: Array<{ start: number; end: number }> = [];
  for (const c of cuts) {
    const last = merged[merged.length - 1];
    if (last !== undefined && c.start <= last.end) last.end = Math.max(last.end, c.end);
    else merged.push({ ...c });
  }
  let text = source;
  for (const c of [...merged].reverse()) text = text.slice(0, c.start) + text.slice(c.end);

  // the result must be the input less exactly those entries
  const expected = structuredClone(before);
  for (const t of targets) deleteAt(expected, t.path);
  if (!isDeepStrictEqual(valueOf(text), { ok: true, value: expected })) {
    return { ok: false, reason: 'removing the entries from the text would change something else (anchors, aliases or merge keys?); remove them by hand' };
  }
  // each entry with the lines it was written on, in file order
  const all = source.split('\n');
  const removed = targets
    .map((t) => {
      const start = rangeOf(t.pair.key)![0];
      const end = rangeOf(t.pair.value)?.[1] ?? rangeOf(t.pair.key)![1];
      const firstLine = lineOf(source, start);
      const lastLine = lineOf(source, Math.max(start, trimEnd(source, end, start) - 1));
      // a flow entry shares its line: its own text, on one line
      const lines = t.map.flow
        ? [source.slice(start, end).replace(/\s*[\r\n]+\s*/g, ' ')]
        : all.slice(firstLine - 1, lastLine).map((l) => l.replace(/\r$/, ''));
      return { pointer: pointerOf(t.path), firstLine, lastLine, lines };
    })
    .sort((a, b) => a.firstLine - b.firstLine);
  return { ok: true, text, removed };
}

/** The entry at `path`: a key of a mapping written in the file. */
function find(doc: ReturnType<typeof parseDocument>, path: string[]): Target | string {
  if (path.length === 0) return 'cannot remove the whole document';
  const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
  if (!isMap(parent)) return 'not an entry of a mapping';
  const key = path[path.length - 1]!;
  const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
  if (pair === undefined) return 'no such key written in the file (is it merged in with `<<` or an alias?)';
  return { path, map: parent, pair };
}

/** Replaces every child of a block mapping that loses all its entries by that mapping's own entry (never the top level). */
function collapse(doc: ReturnType<typeof parseDocument>, targets: Target[]): Target[] {
  let list = targets;
  for (;;) {
    const byMap = new Map<YAMLMap, Target[]>();
    for (const t of list) byMap.set(t.map, [...(byMap.get(t.map) ?? []), t]);
    let changed = false;
    const next: Target[] = [];
    for (const [map, ts] of byMap) {
      const parentPath = ts[0]!.path.slice(0, -1);
      const whole = !map.flow && parentPath.length > 0 && new Set(ts.map((t) => t.pair)).size === map.items.length;
      const up = whole ? find(doc, parentPath) : undefined;
      if (up !== undefined && typeof up !== 'string' && !up.map.flow) {
        next.push(up);
        changed = true;
      } else next.push(...ts);
    }
    // an entry and one of its ancestors: the ancestor covers it
    list = next.filter((t) => !next.some((o) => o !== t && o.path.length < t.path.length && o.path.every((k, i) => k === t.path[i])));
    if (!changed) return list;
  }
}

/** Whole lines, from the key's line to the value's last line. */
function blockRange(source: string, t: Target): { start: number; end: number } | string {
  const keyStart = rangeOf(t.pair.key)?.[0];
  if (keyStart === undefined) return 'the entry has no position in the file';
  const start = source.lastIndexOf('\n', keyStart - 1) + 1;
  if (source.slice(start, keyStart).trim() !== '') return 'the entry does not start its line';
  const last = trimEnd(source, rangeOf(t.pair.value)?.[1] ?? rangeOf(t.pair.key)![1], keyStart);
  const nl = source.indexOf('\n', last);
  const end = nl === -1 ? source.length : nl + 1;
  const rest = source.slice(last, nl === -1 ? source.length : nl).trim();
  if (rest !== '' && !rest.startsWith('#')) return 'the entry shares its last line with something else';
  return { start, end };
}

/**
 * In a flow mapping: the entry up to the next entry's key; the last entry from the end of the
 * nearest entry before it that stays (so its comma goes), or the whole content when none stays.
 */
function flowRange(source: string, t: Target, targets: readonly Target[]): { start: number; end: number } | string {
  const items = t.map.items;
  const i = items.indexOf(t.pair);
  const keyStart = rangeOf(t.pair.key)?.[0];
  const valueEnd = rangeOf(t.pair.value)?.[1] ?? rangeOf(t.pair.key)?.[1];
  if (keyStart === undefined || valueEnd === undefined) return 'the entry has no position in the file';
  const next = items[i + 1];
  if (next !== undefined) {
    const nextStart = rangeOf(next.key)?.[0];
    return nextStart === undefined ? 'the next entry has no position in the file' : { start: keyStart, end: nextStart };
  }
  const gone = new Set(targets.filter((o) => o.map === t.map).map((o) => o.pair));
  const kept = items.slice(0, i).filter((p) => !gone.has(p));
  const prev = kept[kept.length - 1];
  if (prev === undefined) return { start: rangeOf(items[0]!.key)?.[0] ?? keyStart, end: valueEnd };
  const prevEnd = rangeOf(prev.value)?.[1] ?? rangeOf(prev.key)?.[1];
  return prevEnd === undefined ? 'the entry before it has no position in the file' : { start: trimEnd(source, prevEnd, 0), end: valueEnd };
}

/** `end` moved back over whitespace, not before `floor`. */
function trimEnd(source: string, end: number, floor: number): number {
  let e = end;
  while (e > floor && /\s/.test(source[e - 1]!)) e--;
  return e;
}

/** The document's value, or why there is none (syntax errors, an alias that no longer resolves). */
function valueOf(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  const doc = parseDocument(text, PARSE_OPTIONS);
  if (doc.errors.length > 0) return { ok: false, reason: `the file does not parse: ${doc.errors[0]!.message}` };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: -1 }) };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}

function rangeOf(node: unknown): readonly [number, number, number] | undefined {
  const r = (node as { range?: [number, number, number] } | null)?.range;
  return r ?? undefined;
}

function deleteAt(value: unknown, path: string[]): void {
  let cur = value as Record<string, unknown>;
  for (const k of path.slice(0, -1)) cur = cur[k] as Record<string, unknown>;
  delete cur[path[path.length - 1]!];
}

function lineOf(source: string, offset: number): number {
  let n = 1;
  for (let i = source.indexOf('\n'); i !== -1 && i < offset; i = source.indexOf('\n', i + 1)) n++;
  return n;
}

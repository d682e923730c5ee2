/**
 * `mcpgen init --tag … --exclude-tag … --method …`: the slice of the spec the starter is for,
 * as the manifest's `include`/`exclude` selectors (docs/manifest.md, "Selectors"): the `--tag`
 * and `--method` values make one `include` selector (any of the tags AND any of the methods),
 * the `--exclude-tag` values one `exclude` selector (exclude wins). A tag the spec does not have,
 * or a method that is not one, is an error naming the closest tags (or methods).
 */

import { shellQuote } from '../../core/shell.js';
import { editDistance, suggest } from '../../core/suggest.js';
import type { SelectorInput } from '../../ir/tools/select.js';
import { METHODS } from '../../openapi/operations.js';

/** The flags as given (repeatable, so lists). */
export type SliceFlags = { tags: readonly string[]; excludeTags: readonly string[]; methods: readonly string[] };

/** The selectors of a slice; both absent when no flag was given (the whole spec). */
export type Slice = { include?: SelectorInput[]; exclude?: SelectorInput[] };

const METHOD_NAMES: readonly string[] = METHODS;

/** A flag value the spec cannot satisfy: which flag, what is wrong, how to fix it. */
export type SliceError = { flag: string; message: string; help: string };

/**
 * Up to `n` candidates closest to `word` (case-insensitive edit distance within max(2, a third
 * of the word's length), or containing it or contained in it), closest first, ties by name.
 */
export function closest(word: string, candidates: Iterable<string>, n = 3): string[] {
  const lower = word.toLowerCase();
  const limit = Math.max(2, Math.floor(word.length / 3));
  const scored: Array<[string, number]> = [];
  for (const c of new Set(candidates)) {
    const cl = c.toLowerCase();
    const d = editDistance(lower, cl);
    if (d <= limit) scored.push([c, d]);
    else if (lower.length >= 3 && (cl.includes(lower) || lower.includes(cl))) scored.push([c, limit + 1]);
  }
  scored.sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return scored.slice(0, n).map(([c]) => c);
}

/** `"a", "b" or "c"`. */
function orList(values: readonly string[]): string {
  const q = values.map((v) => JSON.stringify(v));
  return q.length <= 1 ? (q[0] ?? '') : `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}`;
}

/** The slice's selectors, or every flag value that names something the spec does not have. */
export function sliceSelectors(flags: SliceFlags, specTags: ReadonlySet<string>): { slice: Slice } | { errors: SliceError[] } {
  const errors: SliceError[] = [];
  const sortedTags = [...specTags].sort();
  const checkTag = (flag: string, tag: string) => {
    if (specTags.has(tag)) return;
    const near = closest(tag, specTags);
    const all =
      sortedTags.length <= 12
        ? sortedTags.map((t) => JSON.stringify(t)).join(', ')
        : `${sortedTags
            .slice(0, 12)
            .map((t) => JSON.stringify(t))
            .join(', ')}, … (${sortedTags.length} in all; \`mcpgen init\` without --tag lists them with their sizes)`;
    const help =
      near.length > 0
        ? `did you mean ${orList(near)}? (tags are matched exactly, case included)`
        : sortedTags.length > 0
          ? `the spec's tags: ${all}`
          : 'the spec has no tags: select operations with `include` paths in the manifest instead';
    errors.push({ flag, message: `${JSON.stringify(tag)} is not a tag of any operation in the spec`, help });
  };
  for (const t of flags.tags) checkTag('--tag', t);
  for (const t of flags.excludeTags) checkTag('--exclude-tag', t);
  const methods: string[] = [];
  for (const m of flags.methods) {
    const lower = m.toLowerCase();
    if (METHOD_NAMES.includes(lower)) {
      if (!methods.includes(lower)) methods.push(lower);
      continue;
    }
    const near = suggest(lower, METHOD_NAMES);
    errors.push({
      flag: '--method',
      message: `${JSON.stringify(m)} is not an HTTP method`,
      help: near ? `did you mean ${near.toUpperCase()}?` : `use one of ${METHOD_NAMES.map((x) => x.toUpperCase()).join(', ')}`,
    });
  }
  if (errors.length > 0) return { errors };
  const unique = (l: readonly string[]) => [...new Set(l)];
  const slice: Slice = {};
  const include: SelectorInput = {};
  if (flags.tags.length > 0) include.tag = unique(flags.tags);
  if (methods.length > 0) include.method = methods;
  if (Object.keys(include).length > 0) slice.include = [include];
  if (flags.excludeTags.length > 0) slice.exclude = [{ tag: unique(flags.excludeTags) }];
  return { slice };
}

/** `--tag "Tasks" --tag "Projects" --method GET`: the flags of a slice as a command line would give them. */
export function sliceFlagsText(flags: SliceFlags): string {
  const q = shellQuote;
  return [
    ...flags.tags.map((t) => `--tag ${q(t)}`),
    ...flags.excludeTags.map((t) => `--exclude-tag ${q(t)}`),
    ...flags.methods.map((m) => `--method ${m.toUpperCase()}`),
  ].join(' ');
}

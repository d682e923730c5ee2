/**
 * package.json on disk against the one mcpgen generates now: the user's additions and changes are
 * kept, mcpgen's changes applied (./merge.ts), and a key both changed differently is a conflict
 * naming it, located at the key in the file. A file that is not a JSON object is a conflict too:
 * mcpgen never overwrites what it cannot merge.
 *
 * The base is the generated content recorded in `.mcpgen.json` (`mergeBase`), trusted only when
 * printed again it has the hash recorded for the file: an edited base could otherwise pass the
 * user's own values off as mcpgen's, to be replaced. Without a trusted base (a lock from before
 * merging, or an edited one) there is nothing to merge against: the caller reports the file as
 * not mcpgen's, as for any other file. (A file that still has the recorded hash never gets here:
 * it is mcpgen's and simply replaced.)
 */
import { Diagnostics, type Location } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';
import { parseYamlSource } from '../source/source.js';
import { type Json, mergeJson } from './merge.js';
import { contentHash, type PreviousLock } from './ownership.js';

/** What {@link mergeOnDisk} decided. */
export type MergeOnDisk =
  /** Merged: `text` is what to write, undefined when the file already says it all (leave it as it is). */
  | { kind: 'merged'; text: string | undefined }
  /** Conflicts, reported through `conflict`: nothing may be written. */
  | { kind: 'conflict' }
  /** No base to merge against (no usable `mergeBase`): the file is treated like any other. */
  | { kind: 'no-base' };

/** Options of {@link mergeOnDisk}. */
export type MergeOnDiskOptions = {
  /** Project path, e.g. `package.json`. */
  rel: string;
  /** What mcpgen generates now. */
  generated: string;
  /** What is on disk. */
  onDisk: string;
  previous: PreviousLock;
  /** Display path of `rel`. */
  shown: string;
  /** Reports one MCPGEN_OUTPUT_CONFLICT. */
  conflict: (message: string, help: string, where: Location) => void;
};

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/** A value as the messages show it: JSON, cut at 80 characters, or `nothing` for an absent key. */
function shown(v: Json | undefined): string {
  if (v === undefined) return 'nothing';
  const text = JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The line and column of V8's "at position N" in a JSON.parse error, for the location. */
function errorAt(file: string, text: string, message: string): Location {
  const at = /\bposition (\d+)/.exec(message);
  if (!at) return { file, pointer: '', line: 1, col: 1 };
  const before = text.slice(0, Math.min(Number(at[1]), text.length)).split('\n');
  return { file, pointer: '', line: before.length, col: before.at(-1)!.length + 1 };
}

/** Merges the file on disk with what mcpgen generates now, over the recorded base. */
export function mergeOnDisk(opts: MergeOnDiskOptions): MergeOnDisk {
  const recorded = opts.previous.files.get(opts.rel);
  if (!opts.previous.ours || recorded === undefined) return { kind: 'no-base' };
  const base = opts.previous.mergeBase.get(opts.rel);
  if (!isObject(base) || contentHash(json(base)) !== recorded) return { kind: 'no-base' };
  let theirs: unknown;
  try {
    theirs = JSON.parse(opts.onDisk.charCodeAt(0) === 0xfeff ? opts.onDisk.slice(1) : opts.onDisk);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    opts.conflict(
      `${opts.shown} is not valid JSON (${why}); mcpgen merges it as JSON with what it generates, so it leaves the file alone`,
      `fix the JSON in ${opts.shown} and build again`,
      errorAt(opts.shown, opts.onDisk, why),
    );
    return { kind: 'conflict' };
  }
  if (!isObject(theirs)) {
    opts.conflict(
      `${opts.shown} is JSON but not an object; mcpgen merges it key by key with what it generates, so it leaves the file alone`,
      `make ${opts.shown} a JSON object (restore the generated one) and build again`,
      { file: opts.shown, pointer: '', line: 1, col: 1 },
    );
    return { kind: 'conflict' };
  }
  const result = mergeJson({
    base: base as Record<string, Json>,
    ours: JSON.parse(opts.generated) as Record<string, Json>,
    theirs: theirs as Record<string, Json>,
  });
  if (result.conflicts.length > 0) {
    const source = parseYamlSource({ file: opts.shown, text: opts.onDisk, diagnostics: new Diagnostics(), syntaxCode: 'MCPGEN_SPEC_SYNTAX' });
    for (const c of result.conflicts) {
      const where = source?.locate(c.pointer, { key: true }) ?? { file: opts.shown, pointer: c.pointer, line: 1, col: 1 };
      const mcpgen = c.ours === undefined ? `no longer generates it (it was ${shown(c.base)})` : `changed it from ${shown(c.base)} to ${shown(c.ours)}`;
      const yours = c.theirs === undefined ? 'you removed it' : `you made it ${shown(c.theirs)}`;
      const fix = c.ours === undefined ? 'remove the key' : `set it to ${shown(c.ours)}`;
      opts.conflict(
        `${opts.shown}: key ${c.pointer} was changed both by you and by mcpgen, differently: ${yours}, and mcpgen ${mcpgen}`,
        `in ${opts.shown}, ${fix} (what mcpgen generates now) and build again; you may change it afterwards: mcpgen keeps your value until it changes its own again`,
        where,
      );
    }
    return { kind: 'conflict' };
  }
  if (!result.changed) return { kind: 'merged', text: undefined };
  let text: string;
  try {
    text = json(result.merged);
  } catch (e) {
    // JSON.stringify recurses: a value nested deeper than the stack allows cannot be printed again
    opts.conflict(
      `${opts.shown} cannot be rewritten (${e instanceof Error ? e.message : String(e)}); mcpgen leaves it alone`,
      `simplify ${opts.shown} and build again`,
      { file: opts.shown, pointer: '', line: 1, col: 1 },
    );
    return { kind: 'conflict' };
  }
  return { kind: 'merged', text };
}

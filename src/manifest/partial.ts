/**
 * Semantic checks of a manifest that failed its schema, so that one run reports both kinds of
 * problem (an unknown tag, an unknown override, a bad template are not hidden behind a wrong
 * type elsewhere) without reporting consequences of the schema errors themselves.
 *
 * The checks run on the manifest with every value the schema rejected removed (keys of
 * mappings; list items stay in place, so that pointers keep their meaning). Of what they report,
 * a problem inside a rejected value, or at a mapping or list that holds one (`include` when one
 * of its selectors was rejected), is a consequence and dropped. A check that trips over a value
 * of the wrong type still inside a list ends the pass quietly: the schema error already says
 * what is wrong there.
 */
import { type Diagnostic, Diagnostics, parsePointer } from '../core/diagnostics.js';
import type { LoadedManifest } from './load.js';
import { isRecord } from './schema.js';

const SCHEMA_CODES = new Set(['MCPGEN_MANIFEST_INVALID', 'MCPGEN_MANIFEST_UNKNOWN_KEY']);

/** Pointers of the manifest's schema errors among `diagnostics`. */
export function schemaErrorPointers(diagnostics: Diagnostics, manifestFile: string): string[] {
  return diagnostics.items.filter((d) => SCHEMA_CODES.has(d.code) && d.location.file === manifestFile).map((d) => d.location.pointer);
}

/**
 * A deep copy of `value` without the mapping entries at `pointers`. A rejected list item that is
 * not a mapping takes its whole list with it: the manifest reader skips such items, which would
 * shift the positions, and so the locations, of the items after it.
 */
export function withoutRejected(value: unknown, pointers: readonly string[]): unknown {
  const copy = structuredClone(value);
  const at = (tokens: readonly string[]) =>
    tokens.reduce<unknown>((node, t) => (Array.isArray(node) ? node[Number(t)] : isRecord(node) ? node[t] : undefined), copy);
  const remove = (tokens: readonly string[]) => {
    const parent = at(tokens.slice(0, -1));
    if (isRecord(parent)) delete parent[tokens.at(-1)!];
  };
  for (const ptr of pointers) {
    const tokens = parsePointer(ptr);
    if (tokens.length === 0) continue;
    if (!Array.isArray(at(tokens.slice(0, -1)))) {
      remove(tokens);
      continue;
    }
    // a mapping in a list stays where it is (its rejected keys have pointers of their own)
    if (isRecord(at(tokens))) continue;
    let list = tokens.slice(0, -1);
    while (list.length > 0 && Array.isArray(at(list.slice(0, -1)))) list = list.slice(0, -1);
    if (list.length > 0) remove(list);
  }
  return copy;
}

const within = (p: string, base: string) => p === base || p.startsWith(base + '/');

/**
 * True when `d`, found by a semantic check, is independent of the schema errors at `rejected`:
 * not inside a rejected value, and not at a mapping or list (other than the whole manifest)
 * that holds one.
 */
export function independent(d: Diagnostic, rejected: readonly string[], manifestFile: string): boolean {
  if (d.location.file !== manifestFile) return true;
  const p = d.location.pointer;
  return !rejected.some((r) => within(p, r) || (p !== '' && within(r, p)));
}

/**
 * Runs `checks` (the semantic pass) on the manifest without its rejected values, adding to
 * `diagnostics` what it finds that is independent of the schema errors already there.
 */
export function checkInvalidManifest(opts: {
  loaded: LoadedManifest;
  diagnostics: Diagnostics;
  checks: (pruned: LoadedManifest, into: Diagnostics) => void;
}): void {
  const { loaded, diagnostics } = opts;
  const scratch = new Diagnostics();
  const rejected = schemaErrorPointers(diagnostics, loaded.displayPath);
  const pruned: LoadedManifest = { ...loaded, manifest: withoutRejected(loaded.manifest, rejected) as LoadedManifest['manifest'] };
  try {
    opts.checks(pruned, scratch);
  } catch {
    // a value of the wrong type inside a list reached a check: its schema error is reported
  }
  for (const d of scratch.items) if (independent(d, rejected, loaded.displayPath)) diagnostics.add(d);
}

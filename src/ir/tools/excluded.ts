/**
 * Manifest entries that name operations the spec has but `include`/`exclude` leave out: concern
 * mappings, overrides, reflection gates and `policy.limits.tools` keys (exact names; a glob
 * matching nothing stays MCPGEN_POLICY_UNMATCHED_LIMIT) written for the whole spec (as `mcpgen init` writes
 * them) and kept after trimming. They are not errors — the operation exists, the user left it
 * out — but dead weight: one summarising warning, MCPGEN_EXCLUDED_REFERENCES, counts them, and
 * `mcpgen fix` removes them (src/fix/). A name that exists nowhere in the spec stays an error.
 */
import type { Diagnostics, Location } from '../../core/diagnostics.js';
import { shellQuote } from '../../core/shell.js';
import type { RawOperation } from '../../openapi/operations.js';
import { assignToolNames, type NameRequest } from './names.js';

/** One stale entry: where it is in the manifest and what it is, for messages (`concernMappings.tools.getTask`). */
export type ExcludedReference = { pointer: string; label: string };

/** How many names the warning's message shows before `… and N more`. */
const SHOWN = 5;

/**
 * The tool names the left-out operations would have if they were included: names are assigned
 * over every operation (and the extra tools) as a build of the whole spec would, so a mapping
 * copied from a full starter matches; names the server really has are never in the set.
 */
export function excludedToolNames(input: {
  ops: readonly RawOperation[];
  selected: readonly RawOperation[];
  /** An operation's name request (with its override's explicit name). */
  request: (op: RawOperation) => NameRequest;
  extras: readonly NameRequest[];
  maxToolNameLength: number;
  /** Final names of the server's tools. */
  names: readonly string[];
}): Set<string> {
  const kept = new Set(input.selected);
  if (kept.size === input.ops.length) return new Set();
  const { names: all } = assignToolNames([...input.ops.map(input.request), ...input.extras], input.maxToolNameLength);
  const served = new Set(input.names);
  const out = new Set<string>();
  input.ops.forEach((op, i) => {
    if (!kept.has(op) && !served.has(all[i]!)) out.add(all[i]!);
  });
  return out;
}

/** `concernMappings.tools.getTask`, `overrides["GET /pets"]`: a manifest path for messages. */
export function entryLabel(parent: string, key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/** Collects stale entries while the IR is built, and reports them once. */
export class ExcludedReferences {
  readonly entries: ExcludedReference[] = [];

  constructor(
    /** Tool names of left-out operations ({@link excludedToolNames}). */
    readonly toolNames: ReadonlySet<string> = new Set(),
  ) {}

  add(pointer: string, label: string): void {
    this.entries.push({ pointer, label });
  }

  /**
   * One warning for every stale entry, at the first in the manifest (by line): the count, the
   * first few, and the command that removes them. Returns the entries in manifest order.
   */
  report(diagnostics: Diagnostics, locateManifest: (pointer: string, opts?: { key?: boolean }) => Location): ExcludedReference[] {
    if (this.entries.length === 0) return [];
    const located = this.entries.map((e) => ({ e, at: locateManifest(e.pointer, { key: true }) }));
    located.sort((a, b) => a.at.line - b.at.line || a.at.col - b.at.col || (a.e.pointer < b.e.pointer ? -1 : a.e.pointer > b.e.pointer ? 1 : 0));
    const n = located.length;
    const shown = located
      .slice(0, SHOWN)
      .map((l) => l.e.label)
      .join(', ');
    const more = n > SHOWN ? `, … and ${n - SHOWN} more` : '';
    const file = shellQuote(located[0]!.at.file);
    diagnostics.warn(
      'MCPGEN_EXCLUDED_REFERENCES',
      `${n} manifest ${n === 1 ? 'entry names an operation' : 'entries name operations'} that include/exclude leave out, so ${n === 1 ? 'it does' : 'they do'} nothing: ${shown}${more}`,
      `run \`mcpgen fix ${file}\` to remove ${n === 1 ? 'it' : 'them'} (comments and order are kept), or widen include/exclude to keep ${n === 1 ? 'that operation' : 'those operations'}`,
      located[0]!.at,
    );
    return located.map((l) => l.e);
  }
}

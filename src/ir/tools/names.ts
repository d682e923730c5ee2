/**
 * Tool names and TS identifiers, decided once for the whole server.
 *
 * Tool names are MCP-legal (`[A-Za-z0-9_.-]`, no leading/trailing `-`, `.` or `_`), at most
 * `maxLength` long and unique. Long names are cut and given a hash suffix of the full name;
 * derived names that collide keep the plain name for the first operation (by `METHOD path`)
 * and give the others a hash suffix of their own `METHOD path`, so adding an operation never
 * renames an existing tool unless it takes its place. An explicit name (manifest override)
 * that collides with anything is an error, as is one that is too long.
 */
import { createHash } from 'node:crypto';
import { camelCase, identifier, pascalCase } from '../../core/identifiers.js';

/** A tool waiting for its name. */
export type NameRequest = {
  /** `METHOD /path`: unique per operation, the tie-breaker and hash seed. */
  key: string;
  /** The raw name (operationId or method + path) before sanitising. */
  derived: string;
  /** An explicit name from the manifest, used as is. */
  explicit?: string;
};

/** A problem found while naming. */
export type NameProblem = { kind: 'too-long'; key: string; name: string; max: number } | { kind: 'duplicate'; keys: string[]; name: string; explicit: boolean };

/** First 8 hex characters of sha256. */
export function shortHash(text: string, length = 8): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** Makes any text a legal MCP tool name (not yet length-limited). */
export function sanitizeToolName(raw: string): string {
  const s = raw.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^[_.-]+|[_.-]+$/g, '');
  return s === '' ? 'tool' : s;
}

/** Cuts a name to `max` characters, ending in `_<hash of seed>` when it had to be cut. */
export function fitName(name: string, max: number, seed: string): string {
  if (name.length <= max) return name;
  const hash = shortHash(seed, Math.min(8, max));
  if (max <= hash.length + 1) return hash.slice(0, max);
  return name.slice(0, max - hash.length - 1).replace(/[_.-]+$/, '') + '_' + hash;
}

/** Assigns final tool names; returns them in request order plus any problems. */
export function assignToolNames(requests: readonly NameRequest[], max: number): { names: string[]; problems: NameProblem[] } {
  const problems: NameProblem[] = [];
  const names: string[] = new Array(requests.length);
  const explicitOwners = new Map<string, number[]>();
  requests.forEach((r, i) => {
    if (r.explicit === undefined) return;
    if (r.explicit.length > max) problems.push({ kind: 'too-long', key: r.key, name: r.explicit, max });
    names[i] = r.explicit;
    explicitOwners.set(r.explicit, [...(explicitOwners.get(r.explicit) ?? []), i]);
  });
  for (const [name, owners] of explicitOwners) {
    if (owners.length > 1) problems.push({ kind: 'duplicate', keys: owners.map((i) => requests[i]!.key), name, explicit: true });
  }
  // derived names, grouped by their sanitised form
  const groups = new Map<string, number[]>();
  requests.forEach((r, i) => {
    if (r.explicit !== undefined) return;
    const base = fitName(sanitizeToolName(r.derived), max, r.derived);
    groups.set(base, [...(groups.get(base) ?? []), i]);
  });
  const taken = new Set(explicitOwners.keys());
  for (const [base, members] of groups) {
    const ordered = [...members].sort((a, b) => cmp(requests[a]!.key, requests[b]!.key));
    ordered.forEach((i, n) => {
      const r = requests[i]!;
      let name = base;
      if (n > 0) name = fitName(`${sanitizeToolName(r.derived)}_${shortHash(r.key, 6)}`, max, r.key + ' ' + r.derived);
      if (explicitOwners.has(name)) {
        problems.push({ kind: 'duplicate', keys: [...explicitOwners.get(name)!.map((j) => requests[j]!.key), r.key], name, explicit: true });
      } else if (taken.has(name)) {
        name = fitName(`${name}_${shortHash(r.key, 6)}`, max, r.key);
      }
      taken.add(name);
      names[i] = name;
    });
  }
  return { names, problems };
}

/** TS identifiers for each tool's argument type and constant, unique across the server. */
export function assignIdentifiers(toolNames: readonly string[]): Array<{ argsTypeName: string; constName: string; resultTypeName: string }> {
  const order = toolNames.map((_, i) => i).sort((a, b) => cmp(toolNames[a]!, toolNames[b]!));
  const used = new Set<string>();
  const out: Array<{ argsTypeName: string; constName: string; resultTypeName: string }> = new Array(toolNames.length);
  for (const i of order) {
    const pascal = pascalCase(toolNames[i]!) || 'Tool';
    let base = pascal;
    const idsOf = (b: string) => ({
      argsTypeName: identifier(`${b}Args`),
      constName: identifier(`${camelCase(b)}Tool`),
      resultTypeName: identifier(`${b}Result`),
    });
    for (let n = 2; Object.values(idsOf(base)).some((id) => used.has(id)); n++) base = `${pascal}${n}`;
    const ids = idsOf(base);
    for (const id of Object.values(ids)) used.add(id);
    out[i] = ids;
  }
  return out;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

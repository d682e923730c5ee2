/**
 * One read-only walk over a loaded document that answers the questions the load stage asks of
 * every document — how deep it nests, whether it holds a number JSON cannot carry, whether it
 * declares a `$id`, which `$ref`s it uses — without spelling a path per value. The checks in
 * ./check.ts walk again, spelling paths, only for a document that has something to report.
 */
import { parsePointer } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';

/** Deepest nesting of a document mcpgen reads (JSON levels, about half as many schema levels; a published schema is cut at 64 levels anyway). */
export const MAX_DOCUMENT_DEPTH = 2500;

/** What {@link scanDocument} found. */
export type DocumentScan = {
  /** Some value nests deeper than MAX_DOCUMENT_DEPTH (the walk stopped there). */
  tooDeep: boolean;
  /** Depth of the deepest container (the root is 0). */
  maxDepth: number;
  /** Some number is infinite or NaN (YAML's `.inf`, `.nan`; JSON's `1e999`). */
  nonFinite: boolean;
  /** Some object has a `$id` key. */
  hasId: boolean;
  /** Every non-empty string `$ref` value. */
  refs: Set<string>;
};

/** Walks `doc` once (iteratively: a hostile document may nest thousands of levels deep). */
export function scanDocument(doc: unknown): DocumentScan {
  const scan: DocumentScan = { tooDeep: false, maxDepth: 0, nonFinite: false, hasId: false, refs: new Set() };
  const nodes: unknown[] = [doc];
  const depths: number[] = [0];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop()!;
    if (depth > scan.maxDepth) scan.maxDepth = depth;
    const child = depth + 1;
    if (Array.isArray(node)) {
      for (const v of node) {
        if (v !== null && typeof v === 'object') {
          nodes.push(v);
          depths.push(child);
        } else if (child > MAX_DOCUMENT_DEPTH) scan.tooDeep = true;
        else if (typeof v === 'number' && !Number.isFinite(v)) scan.nonFinite = true;
      }
    } else if (isObject(node)) {
      if ('$id' in node) scan.hasId = true;
      const ref = node.$ref;
      if (typeof ref === 'string' && ref.length > 0) scan.refs.add(ref);
      for (const k in node) {
        const v = node[k];
        if (v !== null && typeof v === 'object') {
          nodes.push(v);
          depths.push(child);
        } else if (child > MAX_DOCUMENT_DEPTH) scan.tooDeep = true;
        else if (typeof v === 'number' && !Number.isFinite(v)) scan.nonFinite = true;
      }
    }
    if (depth > MAX_DOCUMENT_DEPTH) scan.tooDeep = true;
    if (scan.tooDeep) return scan;
  }
  return scan;
}

/** Keywords through which a schema is, rather than contains, another schema. */
export const COMPOSITION = ['allOf', 'anyOf', 'oneOf'] as const;

/**
 * Whether the document has a `$ref` cycle with no content (see checkRefCycles): a walk of
 * `$ref`s and allOf/anyOf/oneOf/not members that comes back to where it started. Every such cycle
 * passes through the target of one of `refs`, so the graph holds only what is reachable from
 * those targets through members and `$ref`s, each object once.
 */
export function hasRefCycle(doc: Record<string, unknown>, refs: ReadonlySet<string>): boolean {
  const targets = new Map<string, object | undefined>();
  const resolve = (ref: string): object | undefined => {
    if (targets.has(ref)) return targets.get(ref);
    let cur: unknown = doc;
    let tokens: string[] | undefined;
    try {
      tokens = parsePointer(decodeURIComponent(ref));
    } catch {
      tokens = undefined;
    }
    if (tokens === undefined) cur = undefined;
    else {
      for (const t of tokens) {
        if (Array.isArray(cur)) cur = /^(?:0|[1-9]\d*)$/.test(t) ? cur[Number(t)] : undefined;
        else if (isObject(cur) && Object.hasOwn(cur, t)) cur = cur[t];
        else cur = undefined;
        if (cur === undefined) break;
      }
    }
    const target = isObject(cur) ? cur : undefined;
    targets.set(ref, target);
    return target;
  };
  // the graph, each object once: from the targets down through allOf/anyOf/oneOf/not members,
  // an edge to each member and from a `$ref` to its target
  const edges = new Map<object, object[]>();
  const stack: object[] = [];
  for (const ref of refs) {
    if (!ref.startsWith('#')) continue;
    const t = resolve(ref);
    if (t !== undefined) stack.push(t);
  }
  while (stack.length > 0) {
    const node = stack.pop()! as Record<string, unknown>;
    if (edges.has(node)) continue;
    const out: object[] = [];
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#')) {
      const t = resolve(node.$ref);
      if (t !== undefined) out.push(t);
    }
    for (const k of COMPOSITION) {
      const list = node[k];
      if (Array.isArray(list)) for (const v of list) if (isObject(v)) out.push(v);
    }
    if (isObject(node.not)) out.push(node.not);
    edges.set(node, out);
    for (const o of out) if (!edges.has(o)) stack.push(o);
  }
  // depth-first search with colours: 1 on the current path, 2 done
  const state = new Map<object, 1 | 2>();
  for (const root of edges.keys()) {
    if (state.has(root)) continue;
    const work: Array<{ node: object; next: number }> = [{ node: root, next: 0 }];
    state.set(root, 1);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const out = edges.get(frame.node) ?? [];
      if (frame.next < out.length) {
        const t = out[frame.next++]!;
        const s = state.get(t);
        if (s === 1) return true;
        if (s === undefined) {
          state.set(t, 1);
          work.push({ node: t, next: 0 });
        }
        continue;
      }
      state.set(frame.node, 2);
      work.pop();
    }
  }
  return false;
}

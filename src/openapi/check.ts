/**
 * Checks of an OpenAPI document that its meta-schema cannot make, each problem a located error:
 *
 * - numbers JSON cannot carry: YAML's `.inf`, `-.inf` and `.nan` parse as numbers, but a JSON
 *   Schema (and the generated TypeScript) has no such value;
 * - `$ref` cycles with no content: `A: {$ref: B}`, `B: {$ref: A}` (or `A: {allOf: [{$ref: A}]}`)
 *   define nothing — the emitted types would be `type A = B; type B = A` and validation would
 *   never end. Cycles through `properties`, `items` and the like are ordinary recursive schemas
 *   and fine; a parameter, response or path item `$ref` cycle is an error too.
 */
import { type Diagnostics, escapePointerToken, parsePointer, pointer } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';
import type { YamlSource } from '../source/source.js';
import { COMPOSITION, hasRefCycle, MAX_DOCUMENT_DEPTH, scanDocument } from './scan.js';

export { MAX_DOCUMENT_DEPTH };

/** How YAML spells a non-finite number. */
function yamlSpelling(n: number): string {
  return Number.isNaN(n) ? '.nan' : n > 0 ? '.inf' : '-.inf';
}

/**
 * Reports every non-finite number in `doc` (located through `source`); pointers in `skip` were
 * reported already. Returns the pointers reported.
 */
export function checkFiniteNumbers(opts: { doc: unknown; source: YamlSource; diagnostics: Diagnostics; skip?: ReadonlySet<string> }): Set<string> {
  const found = new Set<string>();
  // an explicit stack, not recursion: a hostile document may nest thousands of levels deep; only
  // containers and non-finite numbers are pushed, and a path is spelled out only when reported
  const stack: Frame[] = [{ node: opts.doc, key: '', parent: undefined, depth: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { node } = frame;
    if (typeof node === 'number') {
      if (Number.isFinite(node)) continue;
      const ptr = pointer(tokensOf(frame));
      if (opts.skip?.has(ptr) || found.has(ptr)) continue;
      found.add(ptr);
      opts.diagnostics.error(
        'MCPGEN_SPEC_INVALID',
        `${ptr || '/'} is ${yamlSpelling(node)}, a number JSON Schema cannot express`,
        'use a finite number, or leave the keyword out (no `maximum` is no upper bound)',
        opts.source.locate(ptr),
      );
      continue;
    }
    pushChildren(stack, frame, (v) => (typeof v === 'number' ? !Number.isFinite(v) : v !== null && typeof v === 'object'));
  }
  return found;
}

/** A value met by a walk: its parent frame and key spell its path only when one is needed. */
type Frame = { node: unknown; key: string; parent: Frame | undefined; depth: number };

/** The tokens of a frame's path from the root. */
function tokensOf(frame: Frame): string[] {
  const tokens: string[] = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) tokens.push(f.key);
  return tokens.reverse();
}

/** Pushes the children of a container that `keep` selects, last first (so the first pops first). */
function pushChildren(stack: Frame[], frame: Frame, keep: (v: unknown) => boolean): void {
  const { node } = frame;
  if (Array.isArray(node)) {
    for (let i = node.length - 1; i >= 0; i--) if (keep(node[i])) stack.push({ node: node[i], key: String(i), parent: frame, depth: frame.depth + 1 });
  } else if (isObject(node)) {
    const keys = Object.keys(node);
    for (let i = keys.length - 1; i >= 0; i--) {
      const v = node[keys[i]!];
      if (keep(v)) stack.push({ node: v, key: keys[i]!, parent: frame, depth: frame.depth + 1 });
    }
  }
}

/**
 * Reports a document nested deeper than {@link MAX_DOCUMENT_DEPTH} levels, at the first value
 * that is (no real API comes close; a hostile one would overflow the checks that follow).
 * Returns whether the document is within the limit.
 */
export function checkDepth(opts: { doc: unknown; source: YamlSource; diagnostics: Diagnostics }): boolean {
  const stack: Frame[] = [{ node: opts.doc, key: '', parent: undefined, depth: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > MAX_DOCUMENT_DEPTH) {
      const tokens = tokensOf(frame);
      const ptr = pointer(tokens);
      opts.diagnostics.error(
        'MCPGEN_SPEC_TOO_DEEP',
        `the OpenAPI document nests more than ${MAX_DOCUMENT_DEPTH} levels deep (at ${ptr.length > 120 ? `${ptr.slice(0, 60)}…${ptr.slice(-40)}` : ptr})`,
        'flatten the schema with named definitions and $refs; mcpgen publishes at most 64 levels of a schema anyway',
        opts.source.locate(pointer(tokens.slice(0, MAX_DOCUMENT_DEPTH))),
      );
      return false;
    }
    // a scalar child is one level deeper than its container: only a container can be past the limit first
    pushChildren(stack, frame, (v) => (v !== null && typeof v === 'object' ? true : frame.depth + 1 > MAX_DOCUMENT_DEPTH));
  }
  return true;
}

/**
 * A copy of `doc` with everything below `depth` levels replaced by an empty object or array:
 * what the meta-schema check reads (its validator recurses once per level, and a hostile depth
 * would overflow it). Deeper schema content is still checked by the converter, which bounds it.
 */
export function shallowCopy(doc: unknown, depth: number): unknown {
  const copy = (node: unknown): unknown => (Array.isArray(node) ? [] : isObject(node) ? {} : node);
  const root = copy(doc);
  const stack: Array<{ from: unknown; to: unknown; level: number }> = [{ from: doc, to: root, level: 0 }];
  while (stack.length > 0) {
    const { from, to, level } = stack.pop()!;
    const entries: Array<[string, unknown]> = Array.isArray(from) ? from.map((v, i) => [String(i), v]) : isObject(from) ? Object.entries(from) : [];
    for (const [k, v] of entries) {
      const child = copy(v);
      Object.defineProperty(to, k, { value: child, writable: true, enumerable: true, configurable: true });
      if (level + 1 < depth && child !== v) stack.push({ from: v, to: child, level: level + 1 });
    }
  }
  return root;
}

/**
 * Reports each `$ref` cycle with no content once, at the member that comes first in the
 * document, naming the whole cycle. Returns the number of cycles.
 */
export function checkRefCycles(opts: { doc: Record<string, unknown>; source: YamlSource; diagnostics: Diagnostics; refs?: ReadonlySet<string> }): number {
  // almost every document has no such cycle: found on the targets of its `$ref`s by identity,
  // without spelling a pointer per object; only a document with one is walked again to name and
  // locate it
  let refs = opts.refs;
  if (refs === undefined) {
    const scan = scanDocument(opts.doc);
    // a walk cut short by depth has not seen every `$ref` (a bundled file is not depth-checked):
    // the full walk then
    if (scan.tooDeep) return reportRefCycles(opts);
    refs = scan.refs;
  }
  if (!hasRefCycle(opts.doc, refs)) return 0;
  return reportRefCycles(opts);
}

/** {@link checkRefCycles} for a document that has a cycle: names and locates each. */
function reportRefCycles(opts: { doc: Record<string, unknown>; source: YamlSource; diagnostics: Diagnostics }): number {
  // the graph: a node is an object of the document (by pointer); its edges lead to what it *is*:
  // the target of its `$ref`, and the members of its allOf/anyOf/oneOf and its `not`
  const edges = new Map<string, string[]>();
  const order = new Map<string, number>();
  // an explicit stack, not recursion: a hostile document may nest thousands of levels deep
  const stack: Array<{ node: unknown; ptr: string }> = [{ node: opts.doc, ptr: '' }];
  while (stack.length > 0) {
    const { node, ptr } = stack.pop()!;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) if (node[i] !== null && typeof node[i] === 'object') stack.push({ node: node[i], ptr: `${ptr}/${i}` });
      continue;
    }
    if (!isObject(node)) continue;
    order.set(ptr, order.size);
    const out: string[] = [];
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#')) {
      const target = normalizeRef(node.$ref);
      if (target !== undefined) out.push(target);
    }
    for (const k of COMPOSITION) {
      const list = node[k];
      if (Array.isArray(list)) list.forEach((_, i) => out.push(`${ptr}/${k}/${i}`));
    }
    if (isObject(node.not)) out.push(`${ptr}/not`);
    if (out.length > 0) edges.set(ptr, out);
    const keys = Object.keys(node);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i]!;
      const v = node[k];
      if (v !== null && typeof v === 'object') stack.push({ node: v, ptr: `${ptr}/${escapePointerToken(k)}` });
    }
  }
  let count = 0;
  for (const scc of stronglyConnected(edges)) {
    const cyclic = scc.length > 1 || (edges.get(scc[0]!) ?? []).includes(scc[0]!);
    if (!cyclic) continue;
    count++;
    const first = [...scc].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0))[0]!;
    const members = new Set(scc);
    const path = cyclePath(first, edges, members);
    opts.diagnostics.error(
      'MCPGEN_SPEC_REF_CYCLE',
      `$ref cycle with no content: ${path.map((p) => `#${p}`).join(' → ')}`,
      'give one of them a schema of its own (a `type`, `properties`, …), or point the $ref at the real definition',
      opts.source.locate(first),
    );
  }
  return count;
}

/** `#/a/b%20c` → `/a/b c` re-encoded as a canonical JSON pointer; undefined when malformed. */
function normalizeRef(ref: string): string | undefined {
  try {
    return pointer(parsePointer(decodeURIComponent(ref)));
  } catch {
    return undefined;
  }
}

/** The shortest walk from `start` back to itself inside `members`. */
function cyclePath(start: string, edges: ReadonlyMap<string, string[]>, members: ReadonlySet<string>): string[] {
  const prev = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const cur = queue[i]!;
    for (const next of edges.get(cur) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path: string[] = [];
        for (let p: string | undefined = cur; p !== undefined; p = p === start ? undefined : prev.get(p)) path.unshift(p);
        return [...path, start];
      }
      if (!prev.has(next) && next !== start) {
        prev.set(next, cur);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

/** Tarjan's strongly connected components, iteratively (specs can be deep). */
function stronglyConnected(edges: ReadonlyMap<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let counter = 0;
  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = edges.get(frame.node) ?? [];
      if (frame.next < targets.length) {
        const t = targets[frame.next++]!;
        if (!index.has(t)) {
          index.set(t, counter);
          low.set(t, counter++);
          stack.push(t);
          onStack.add(t);
          work.push({ node: t, next: 0 });
        } else if (onStack.has(t)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(t)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const scc: string[] = [];
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          scc.push(n);
        } while (n !== frame.node);
        out.push(scc);
      }
    }
  }
  return out;
}

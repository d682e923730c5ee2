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
import { type Diagnostics, parsePointer, pointer } from '../diagnostics.js';
import { isObject } from '../json.js';
import type { YamlSource } from '../manifest/source.js';

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
  const walk = (node: unknown, tokens: string[]) => {
    if (typeof node === 'number') {
      if (Number.isFinite(node)) return;
      const ptr = pointer(tokens);
      if (opts.skip?.has(ptr) || found.has(ptr)) return;
      found.add(ptr);
      opts.diagnostics.error(
        'MCPGEN_SPEC_INVALID',
        `${ptr || '/'} is ${yamlSpelling(node)}, a number JSON Schema cannot express`,
        'use a finite number, or leave the keyword out (no `maximum` is no upper bound)',
        opts.source.locate(ptr),
      );
      return;
    }
    if (Array.isArray(node)) node.forEach((v, i) => walk(v, [...tokens, String(i)]));
    else if (isObject(node)) for (const [k, v] of Object.entries(node)) walk(v, [...tokens, k]);
  };
  walk(opts.doc, []);
  return found;
}

/** Keywords through which a schema is, rather than contains, another schema. */
const COMPOSITION = ['allOf', 'anyOf', 'oneOf'] as const;

/**
 * Reports each `$ref` cycle with no content once, at the member that comes first in the
 * document, naming the whole cycle. Returns the number of cycles.
 */
export function checkRefCycles(opts: { doc: Record<string, unknown>; source: YamlSource; diagnostics: Diagnostics }): number {
  // the graph: a node is an object of the document (by pointer); its edges lead to what it *is*:
  // the target of its `$ref`, and the members of its allOf/anyOf/oneOf and its `not`
  const edges = new Map<string, string[]>();
  const order = new Map<string, number>();
  const walk = (node: unknown, ptr: string) => {
    if (Array.isArray(node)) {
      node.forEach((v, i) => walk(v, `${ptr}/${i}`));
      return;
    }
    if (!isObject(node)) return;
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
    for (const [k, v] of Object.entries(node)) walk(v, `${ptr}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  };
  walk(opts.doc, '');
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

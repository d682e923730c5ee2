/**
 * OpenAPI schema → portable JSON Schema 2020-12.
 *
 * - Swagger 2.0 / OpenAPI 3.0 dialect is rewritten (`nullable`, boolean `exclusiveMinimum`,
 *   `type: file`, `x-nullable`); vendor extensions, `xml`, `discriminator`, examples and other
 *   documentation-only keywords are dropped to keep tool lists small.
 * - `$ref`s that are part of a reference cycle become `$ref: '#/$defs/Name'` with the target
 *   emitted once under the root's `$defs`; every other `$ref` is inlined. Deciding this per
 *   reference (not per traversal path) keeps conversion linear and memoisable on specs the
 *   size of GitHub's, and can never recurse forever.
 * - Input schemas drop `readOnly` properties, output schemas drop `writeOnly` ones.
 * - Every array gets `items`. Patterns the generated server cannot enforce are dropped: those
 *   that are not valid ECMAScript (`u` flag), and those its linear-time engine (RE2) cannot run,
 *   such as lookaround and backreferences; each conversion reports what it dropped.
 * - Conversion recurses at most {@link MAX_SCHEMA_DEPTH} × 2 schemas deep (a subtree below is
 *   cut to its type and reported), so a spec nested thousands of levels cannot overflow the stack.
 */

import { patternProblem } from '../../templates/runtime/core/pattern.js';
import { parsePointer } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';
import { jsonLengthFits } from '../core/json-size.js';
import { MAX_SCHEMA_DEPTH, typeStandIn } from './schema-depth.js';

/** A JSON Schema value (object or boolean schema). */
export type JsonSchema = Record<string, unknown>;

/** A schema as written in the spec (any dialect, may hold `$ref`s). */
export type SpecSchema = unknown;

/** Direction of a schema: request (`input`) or response (`output`). */
export type SchemaMode = 'input' | 'output';

const SCALAR_KEYWORDS = new Set([
  'type',
  'enum',
  'const',
  'format',
  'title',
  'description',
  'default',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'maxProperties',
  'minProperties',
  'required',
  'dependentRequired',
  'deprecated',
  'contentEncoding',
  'contentMediaType',
]);
const SCHEMA_KEYWORDS = new Set([
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'contains',
  'unevaluatedProperties',
  'unevaluatedItems',
]);
const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions']);
/**
 * Acyclic references whose converted schema is longer than this (in JSON characters) go to
 * `$defs` instead of being inlined: a definition used many times in one tool (Kubernetes'
 * ObjectMeta) is then published once, not at every use. Small ones are inlined, which is what
 * clients handle best.
 */
const INLINE_LIMIT = 2000;

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

/** What a conversion left out: patterns (pattern ⇒ why) and whether a subtree was cut for depth. */
export type ConversionNotes = { readonly patterns: ReadonlyMap<string, string>; readonly cut: boolean };

/**
 * A converted schema plus the cyclic references (by source `$ref`) it points at via `$defs`,
 * and what was left out of it (absent: nothing).
 */
type Converted = { value: unknown; deps: ReadonlySet<string>; notes?: ConversionNotes };

const NO_DEPS: ReadonlySet<string> = new Set();

/** Deepest recursion of the converter, in schemas (twice the published depth: inlined references compose). */
const MAX_CONVERT_DEPTH = MAX_SCHEMA_DEPTH * 2;

/** Adds `from`'s notes to the accumulating `into`. */
function addNotes(into: { patterns: Map<string, string>; cut: boolean }, from: ConversionNotes | undefined): void {
  if (from === undefined) return;
  for (const [p, why] of from.patterns) if (!into.patterns.has(p)) into.patterns.set(p, why);
  if (from.cut) into.cut = true;
}

/** The notes to keep: `undefined` when nothing was left out. */
function finalNotes(acc: { patterns: Map<string, string>; cut: boolean }): ConversionNotes | undefined {
  return acc.patterns.size > 0 || acc.cut ? { patterns: acc.patterns, cut: acc.cut } : undefined;
}

/** Converts schemas of one bundled document. Create one per document; it memoises per reference. */
export class SchemaConverter {
  private readonly defNames = new Map<string, string>();
  private readonly memo = new Map<string, Converted>();

  private readonly cyclic: ReadonlySet<string>;
  private readonly large = new Map<string, boolean>();
  /** Schemas being converted right now (the recursion depth). */
  private active = 0;

  constructor(private readonly doc: Record<string, unknown>) {
    const { cyclic, refs } = analyseRefs(doc);
    this.cyclic = cyclic;
    // a name for every reference target, decided once in sorted order so that names never
    // depend on which tool happens to reach a definition first
    const taken = new Set<string>();
    for (const ref of [...refs].sort()) {
      const base = defBaseName(ref);
      let name = base;
      for (let i = 2; taken.has(name); i++) name = `${base}_${i}`;
      taken.add(name);
      this.defNames.set(ref, name);
    }
  }

  /** Follows a chain of `$ref`s (used for parameters, request bodies and responses). */
  deref(node: unknown): unknown {
    let cur = node;
    const seen = new Set<string>();
    while (isObject(cur) && typeof cur.$ref === 'string') {
      if (seen.has(cur.$ref)) return undefined;
      seen.add(cur.$ref);
      cur = this.lookup(cur.$ref);
    }
    return cur;
  }

  /** Starts a conversion scope: every schema converted through it shares one `$defs` table. */
  scope(mode: SchemaMode): SchemaScope {
    return new SchemaScope(this, mode);
  }

  /** Resolves an internal `$ref` (`#/...`) in the document. */
  lookup(ref: string): unknown {
    if (!ref.startsWith('#')) return undefined;
    let cur: unknown = this.doc;
    for (const t of parsePointer(ref)) {
      if (Array.isArray(cur)) cur = cur[Number(t)];
      else if (isObject(cur)) cur = Object.prototype.hasOwnProperty.call(cur, t) ? cur[t] : undefined;
      else return undefined;
    }
    return cur;
  }

  /** The `$defs` name of a cyclic reference. */
  defName(ref: string): string {
    return this.defNames.get(ref)!;
  }

  /** Converts the target of a reference (memoised). */
  defBody(ref: string, mode: SchemaMode): Converted {
    return this.cached(`${mode} ${ref}`, () => {
      const t = this.lookup(ref);
      return t === undefined ? { value: {}, deps: NO_DEPS } : this.convert(t, mode);
    });
  }

  /** Converts any schema node. */
  convert(node: unknown, mode: SchemaMode): Converted {
    if (typeof node === 'boolean') return { value: node, deps: NO_DEPS };
    if (!isObject(node)) return { value: {}, deps: NO_DEPS };
    if (this.active >= MAX_CONVERT_DEPTH) {
      const target = typeof node.$ref === 'string' ? this.lookup(node.$ref) : node;
      return { value: typeStandIn(target), deps: NO_DEPS, notes: { patterns: new Map(), cut: true } };
    }
    this.active++;
    try {
      return typeof node.$ref === 'string' ? this.ref(node, mode) : this.keywords(node, mode);
    } finally {
      this.active--;
    }
  }

  /** Whether the converted target's JSON (not counting its own `$defs`) is longer than INLINE_LIMIT. */
  private tooLarge(ref: string, mode: SchemaMode): boolean {
    const key = `${mode} ${ref}`;
    let large = this.large.get(key);
    if (large === undefined) {
      large = !jsonLengthFits(this.defBody(ref, mode).value, INLINE_LIMIT);
      this.large.set(key, large);
    }
    return large;
  }

  private cached(key: string, make: () => Converted): Converted {
    let hit = this.memo.get(key);
    if (!hit) {
      hit = make();
      this.memo.set(key, hit);
    }
    return hit;
  }

  private ref(node: Record<string, unknown>, mode: SchemaMode): Converted {
    const ref = node.$ref as string;
    let target: Converted;
    // a reference the document-wide analysis did not see (only possible for schemas from
    // outside the document) is inlined: it cannot be part of a cycle in the document
    if (!this.defNames.has(ref)) target = this.defBody(ref, mode);
    else if (this.cyclic.has(ref) || this.tooLarge(ref, mode)) target = { value: { $ref: '#/$defs/' + this.defName(ref) }, deps: new Set([ref]) };
    else target = this.defBody(ref, mode);
    // a reference published through `$defs` reports its body's notes where the body is attached (SchemaScope.finish)
    const nullable = node.nullable === true || node['x-nullable'] === true;
    const description = typeof node.description === 'string' ? node.description : undefined;
    if (!nullable && description === undefined) return target;
    let value = target.value;
    if (description !== undefined) value = isObject(value) && !('$ref' in value) ? { ...value, description } : { allOf: [value], description };
    return target.notes
      ? { value: nullableWrap(value, nullable), deps: target.deps, notes: target.notes }
      : { value: nullableWrap(value, nullable), deps: target.deps };
  }

  private keywords(node: Record<string, unknown>, mode: SchemaMode): Converted {
    const out: JsonSchema = {};
    // allocated only when a subschema brings some (most nodes have neither)
    let deps: Set<string> | undefined;
    let notes: { patterns: Map<string, string>; cut: boolean } | undefined;
    const sub = (s: unknown): unknown => {
      const c = this.convert(s, mode);
      if (c.deps.size > 0) {
        deps ??= new Set();
        for (const d of c.deps) deps.add(d);
      }
      if (c.notes !== undefined) addNotes((notes ??= { patterns: new Map(), cut: false }), c.notes);
      return c.value;
    };
    const hide = mode === 'input' ? 'readOnly' : 'writeOnly';
    const hidden: string[] = [];
    for (const k in node) {
      if (!Object.hasOwn(node, k)) continue;
      const v = node[k];
      if (SCALAR_KEYWORDS.has(k)) out[k] = v;
      else if (SCHEMA_KEYWORDS.has(k)) out[k] = typeof v === 'boolean' ? v : sub(v);
      else if (SCHEMA_LIST_KEYWORDS.has(k) && Array.isArray(v)) out[k] = v.map(sub);
      else if (SCHEMA_MAP_KEYWORDS.has(k) && isObject(v)) {
        const entries: Array<[string, unknown]> = [];
        for (const [name, s] of Object.entries(v)) {
          if (k === 'properties' && isObject(s) && s[hide] === true) hidden.push(name);
          else entries.push([name, sub(s)]);
        }
        out[k] = Object.fromEntries(entries);
      } else if (k === 'items') {
        if (Array.isArray(v)) out.prefixItems = v.map(sub);
        else out.items = sub(v);
      }
    }
    if (hidden.length && Array.isArray(out.required)) out.required = out.required.filter((r) => !hidden.includes(r as string));
    fixDialect(out);
    if (typeof out.pattern === 'string') {
      const problem = patternProblem(out.pattern);
      if (problem !== undefined) {
        (notes ??= { patterns: new Map(), cut: false }).patterns.set(out.pattern, problem);
        delete out.pattern;
      }
    } else if ('pattern' in out) delete out.pattern;
    if (isObject(out.patternProperties)) {
      for (const p of Object.keys(out.patternProperties)) {
        const problem = patternProblem(p);
        if (problem === undefined) continue;
        notes ??= { patterns: new Map(), cut: false };
        if (!notes.patterns.has(p)) notes.patterns.set(p, problem);
        delete out.patternProperties[p];
      }
    }
    const types = Array.isArray(out.type) ? out.type : [out.type];
    if (types.includes('array') && out.items === undefined && out.prefixItems === undefined) out.items = {};
    const converted: Converted = {
      value: nullableWrap(out, node.nullable === true || node['x-nullable'] === true),
      deps: deps !== undefined && deps.size > 0 ? deps : NO_DEPS,
    };
    const kept = notes !== undefined ? finalNotes(notes) : undefined;
    if (kept) converted.notes = kept;
    return converted;
  }
}

/** One conversion scope, usually one tool's input or output schema: collects the `$defs` it needs. */
export class SchemaScope {
  private readonly deps = new Set<string>();
  private readonly acc = { patterns: new Map<string, string>(), cut: false };

  constructor(
    private readonly conv: SchemaConverter,
    private readonly mode: SchemaMode,
  ) {}

  /** Converts one schema. */
  convert(schema: unknown): unknown {
    const c = this.conv.convert(schema, this.mode);
    for (const d of c.deps) this.deps.add(d);
    addNotes(this.acc, c.notes);
    return c.value;
  }

  /** What the schemas converted so far (and, after {@link finish}, their `$defs`) left out. */
  get notes(): ConversionNotes {
    return this.acc;
  }

  /** Attaches the `$defs` that the converted schemas need (transitively) to a root object schema. */
  finish(root: JsonSchema): JsonSchema {
    if (this.deps.size === 0) return root;
    const all = new Set<string>();
    const queue = [...this.deps];
    while (queue.length) {
      const ref = queue.pop()!;
      if (all.has(ref)) continue;
      all.add(ref);
      const body = this.conv.defBody(ref, this.mode);
      addNotes(this.acc, body.notes);
      for (const d of body.deps) if (!all.has(d)) queue.push(d);
    }
    const entries = [...all].map((ref) => [this.conv.defName(ref), this.conv.defBody(ref, this.mode).value] as const);
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return { ...root, $defs: Object.fromEntries(entries) };
  }
}

function fixDialect(out: JsonSchema): void {
  if (out.type === 'file') {
    out.type = 'string';
    out.format = 'binary';
  }
  if (typeof out.type === 'string' && !JSON_TYPES.has(out.type)) delete out.type;
  if (Array.isArray(out.type)) out.type = out.type.filter((t) => typeof t === 'string' && JSON_TYPES.has(t));
  if (out.exclusiveMinimum === true) {
    if (typeof out.minimum === 'number') out.exclusiveMinimum = out.minimum;
    else delete out.exclusiveMinimum;
    delete out.minimum;
  } else if (out.exclusiveMinimum === false) delete out.exclusiveMinimum;
  if (out.exclusiveMaximum === true) {
    if (typeof out.maximum === 'number') out.exclusiveMaximum = out.maximum;
    else delete out.exclusiveMaximum;
    delete out.maximum;
  } else if (out.exclusiveMaximum === false) delete out.exclusiveMaximum;
  if (out.required !== undefined && (!Array.isArray(out.required) || out.required.length === 0)) delete out.required;
}

function nullableWrap(out: unknown, nullable: boolean): unknown {
  if (!nullable || !isObject(out)) return out;
  if (typeof out.type === 'string') {
    const res: JsonSchema = { ...out, type: [out.type, 'null'] };
    if (Array.isArray(out.enum) && !out.enum.includes(null)) res.enum = [...out.enum, null];
    return res;
  }
  if (Array.isArray(out.type)) return out.type.includes('null') ? out : { ...out, type: [...out.type, 'null'] };
  return { anyOf: [out, { type: 'null' }] };
}

const GENERIC_TOKENS = new Set([
  'paths',
  'content',
  'schema',
  'schemas',
  'responses',
  'requestBody',
  'properties',
  'items',
  'parameters',
  'components',
  'definitions',
  'additionalProperties',
  'allOf',
  'anyOf',
  'oneOf',
]);

/**
 * A readable `$defs` name for a reference: the schema name for `#/components/schemas/X` and
 * `#/definitions/X`, else the meaningful tail of the pointer (references into other places,
 * such as a multi-file spec's bundled schemas, end in generic tokens like `schema`).
 */
function defBaseName(ref: string): string {
  const tokens = parsePointer(ref);
  const clean = (t: string) => t.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^_+|_+$/g, '');
  const isComponent = (tokens[0] === 'components' && tokens.length === 3) || (tokens[0] === 'definitions' && tokens.length === 2);
  if (isComponent) return clean(tokens[tokens.length - 1]!) || 'Def';
  const meaningful = tokens
    .filter((t) => !GENERIC_TOKENS.has(t) && !t.includes('/json'))
    .map(clean)
    .filter(Boolean);
  return meaningful.slice(-3).join('_') || 'Def';
}

/**
 * Lists every internal `$ref` target reachable from the document, and those that lie on a
 * reference cycle (Tarjan's SCC over the graph "target A's subtree contains $ref B").
 */
export function analyseRefs(doc: Record<string, unknown>): { cyclic: Set<string>; refs: Set<string> } {
  const edges = new Map<string, string[]>();
  const lookup = (ref: string): unknown => {
    let cur: unknown = doc;
    for (const t of parsePointer(ref)) {
      if (Array.isArray(cur)) cur = cur[Number(t)];
      else if (isObject(cur)) cur = Object.prototype.hasOwnProperty.call(cur, t) ? cur[t] : undefined;
      else return undefined;
    }
    return cur;
  };
  // iterative (in document order): a document nested thousands of levels deep must not overflow the stack
  const refsIn = (root: unknown, acc: string[]): string[] => {
    const stack: unknown[] = [root];
    while (stack.length) {
      const node = stack.pop();
      if (Array.isArray(node)) for (let i = node.length - 1; i >= 0; i--) stack.push(node[i]);
      else if (isObject(node)) {
        if (typeof node.$ref === 'string' && node.$ref.startsWith('#')) acc.push(node.$ref);
        const keys = Object.keys(node);
        for (let i = keys.length - 1; i >= 0; i--) if (keys[i] !== '$ref') stack.push(node[keys[i]!]);
      }
    }
    return acc;
  };
  const allRefs = [...new Set(refsIn(doc, []))].sort();
  const pending = [...allRefs];
  while (pending.length) {
    const r = pending.pop()!;
    if (edges.has(r)) continue;
    const out = [...new Set(refsIn(lookup(r), []))];
    edges.set(r, out);
    for (const o of out) if (!edges.has(o)) pending.push(o);
  }
  // iterative Tarjan
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cyclic = new Set<string>();
  let counter = 0;
  for (const start of [...edges.keys()].sort()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1]!;
      const succ = edges.get(frame.node) ?? [];
      if (frame.i < succ.length) {
        const w = succ[frame.i++]!;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, i: 0 });
        } else if (onStack.has(w)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== frame.node);
        if (comp.length > 1 || (edges.get(frame.node) ?? []).includes(frame.node)) for (const c of comp) cyclic.add(c);
      }
    }
  }
  return { cyclic, refs: new Set(edges.keys()) };
}

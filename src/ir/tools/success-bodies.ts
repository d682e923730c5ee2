/**
 * The 2xx responses of one operation, as its tool's output contract and calibration read them
 * (operation-tool.ts): JSON with its converted schema and the spec's examples, empty, or other
 * media.
 */
import { isObject } from '../../core/json.js';
import type { SpecVersion } from '../../openapi/load.js';
import type { RawOperation } from '../../openapi/operations.js';
import type { SchemaConverter } from '../../openapi/schema.js';
import type { SuccessBody } from './output-schema.js';

/** What of the spec a body is read from (a {@link PartsContext} of operation-tool.ts is one). */
type Source = { op: RawOperation; doc: Record<string, unknown>; version: SpecVersion; conv: SchemaConverter };

function isJson(ct: string): boolean {
  const b = ct.split(';')[0]!.trim().toLowerCase();
  return b === 'application/json' || b.endsWith('+json') || b === '*/*';
}

/**
 * The 2xx responses of an operation, as the runtime may receive them: JSON (with its converted
 * schema when the spec gives one, a recursive root published as the root), empty, or other
 * media. No 2xx described at all gives an empty list.
 */
export function successBodies(ctx: Source): SuccessBody[] {
  const { op, conv, doc } = ctx;
  const responses = isObject(op.node.responses) ? op.node.responses : {};
  const codes = Object.keys(responses)
    .filter((c) => /^2(\d\d|XX)$/i.test(c))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out: SuccessBody[] = [];
  for (const code of codes) {
    const res = conv.deref(responses[code]);
    if (!isObject(res)) {
      out.push({ kind: 'other' });
      continue;
    }
    let schema: unknown;
    let examples: unknown[] = [];
    if (code === '204' || code === '205') {
      out.push({ kind: 'empty' });
      continue;
    }
    if (ctx.version === '2.0') {
      const produces = (Array.isArray(op.node.produces) ? op.node.produces : Array.isArray(doc.produces) ? doc.produces : ['application/json']) as string[];
      if (res.schema === undefined) {
        out.push({ kind: 'empty' });
        continue;
      }
      if (!produces.some((p) => typeof p === 'string' && isJson(p))) {
        out.push({ kind: 'other' });
        continue;
      }
      schema = res.schema;
      if (isObject(res.examples)) {
        const key = Object.keys(res.examples).find(isJson);
        if (key !== undefined && res.examples[key] !== undefined) examples = [res.examples[key]];
      }
    } else {
      if (!isObject(res.content) || Object.keys(res.content).length === 0) {
        out.push({ kind: 'empty' });
        continue;
      }
      // the server asks for JSON first (Accept), so an API that offers JSON answers with it
      const json = Object.keys(res.content).find(isJson);
      if (json === undefined) {
        out.push({ kind: 'other' });
        continue;
      }
      const media = res.content[json];
      schema = isObject(media) ? media.schema : undefined;
      if (isObject(media)) examples = mediaExamples(media, conv);
    }
    const withExamples = examples.length > 0 ? { examples } : {};
    if (schema === undefined) {
      out.push({ kind: 'json', ...withExamples });
      continue;
    }
    const scope = conv.scope('output');
    const value = scope.convert(schema);
    if (!isObject(value)) {
      out.push({ kind: 'json', ...withExamples });
      continue;
    }
    let root = scope.finish(value);
    // a response that is itself a recursive definition: publish that definition as the root
    const only = /^#\/\$defs\/(.+)$/.exec(typeof value.$ref === 'string' && Object.keys(value).length === 1 ? value.$ref : '');
    if (only && isObject(root.$defs) && isObject(root.$defs[only[1]!])) {
      const name = only[1]!;
      const { [name]: body, ...rest } = root.$defs;
      root = { ...(body as Record<string, unknown>), $defs: rest };
      // keep the definition only when something still refers to it (a recursive schema)
      if (mentions(root, `#/$defs/${name}`)) root.$defs = sortKeys({ ...rest, [name]: body });
      if (Object.keys(root.$defs as object).length === 0) delete root.$defs;
    }
    out.push({ kind: 'json', schema: root, ...withExamples });
  }
  return out;
}

/** An OpenAPI 3 media type's `example` and the values of its `examples` (references to `components/examples` followed; `externalValue`s skipped). */
function mediaExamples(media: Record<string, unknown>, conv: SchemaConverter): unknown[] {
  const out: unknown[] = [];
  if (media.example !== undefined) out.push(media.example);
  if (isObject(media.examples)) {
    for (const e of Object.values(media.examples)) {
      const node = conv.deref(e);
      if (isObject(node) && node.value !== undefined) out.push(node.value);
    }
  }
  return out;
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Whether the JSON of `value` contains the JSON of `text` (with its quotes), without writing the
 * JSON out: such a match lies inside one string (a key or a value), so each string that could hold
 * it is checked alone.
 */
function mentions(value: unknown, text: string): boolean {
  const needle = JSON.stringify(text);
  const holds = (s: string) => s.includes(text) && JSON.stringify(s).includes(needle);
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (holds(v)) return true;
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
    } else if (isObject(v)) {
      for (const k in v) {
        const x = v[k];
        // JSON leaves out what it cannot write, key and all
        if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
        if (holds(k)) return true;
        stack.push(x);
      }
    }
  }
  return false;
}

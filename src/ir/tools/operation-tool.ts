/**
 * One OpenAPI operation → the request mapping and schemas of its tool (names are decided later,
 * in `names.ts`, once every tool is known).
 */
import { pointer } from '../../core/diagnostics.js';
import { isObject } from '../../core/json.js';
import type { SpecVersion } from '../../openapi/load.js';
import type { RawOperation } from '../../openapi/operations.js';
import type { ConversionNotes, SchemaConverter, SpecSchema } from '../../openapi/schema.js';
import { boundDepth } from '../../openapi/schema-depth.js';
import type { IrBody, IrParam, JsonSchema, ParamLocation, ParamStyle, ToolAnnotations } from '../types.js';
import { type OutputSchemaMode, outputContract, type ResultShape, type SuccessBody } from './output-schema.js';

/** The parts of a tool that come from its operation. */
export type OperationParts = {
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  /** How 2xx bodies become `structuredContent`. */
  resultShape: ResultShape;
  params: IrParam[];
  body?: IrBody;
  annotations: ToolAnnotations;
  title?: string;
  description?: string;
  /**
   * What the published schemas leave out of the spec's: patterns the server cannot enforce
   * (input schemas), and whether a schema was cut for depth (input or output).
   */
  schemaNotes?: ConversionNotes;
  /** Whether a 2xx body may be JSON: one is described as JSON, or no 2xx is described at all. */
  jsonResult: boolean;
  /** The spec's examples of the JSON 2xx bodies (values, `$ref`s followed), in response-code order. */
  resultExamples: unknown[];
};

/** Inputs of {@link operationParts}. */
export type PartsContext = {
  op: RawOperation;
  doc: Record<string, unknown>;
  version: SpecVersion;
  conv: SchemaConverter;
  /** Display path of the spec, for origins. */
  file: string;
  /** Whether file arguments may name local files (manifest `uploads.localFiles`). */
  localFiles: boolean;
  /** How output schemas are published. */
  outputSchemas: OutputSchemaMode;
  /** Deepest level lenient output schemas describe (less when that is larger than `outputMaxBytes`). */
  outputDepth?: number;
  outputMaxBytes?: number;
};

const LOCATIONS: readonly ParamLocation[] = ['path', 'query', 'header', 'cookie'];
const COLLECTION_FORMATS: Record<string, { style?: ParamStyle; explode: boolean }> = {
  csv: { explode: false },
  multi: { style: 'form', explode: true },
  ssv: { style: 'spaceDelimited', explode: false },
  pipes: { style: 'pipeDelimited', explode: false },
  tsv: { explode: false },
};
const NOT_SCHEMA_2 = new Set(['name', 'in', 'required', 'description', 'collectionFormat', 'allowEmptyValue']);

/** Builds the request mapping and the input/output schemas of one operation. */
export function operationParts(ctx: PartsContext): OperationParts {
  const { op, conv } = ctx;
  const input = conv.scope('input');
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const used = new Set<string>();

  // parameters: path-level merged with operation-level (operation wins on name + location)
  const merged = new Map<string, { node: Record<string, unknown>; ptr: string }>();
  const collect = (list: unknown, base: string) => {
    if (!Array.isArray(list)) return;
    list.forEach((p, i) => {
      const node = conv.deref(p);
      if (isObject(node) && typeof node.name === 'string' && typeof node.in === 'string')
        merged.set(`${node.in}\u0000${node.name}`, { node, ptr: `${base}/parameters/${i}` });
    });
  };
  collect(op.pathItem.parameters, pointer(['paths', op.path]));
  collect(op.node.parameters, op.pointer);
  const all = [...merged.values()];

  const params: IrParam[] = [];
  // header names already mirrored as Mcp-Param-* headers, lower-cased (they must differ ignoring case)
  const mirrored = new Set<string>();
  // arguments are named in location priority order so that a path `id` keeps the plain name
  for (const loc of LOCATIONS) {
    for (const { node, ptr } of all.filter((p) => p.node.in === loc)) {
      const name = node.name as string;
      const arg = uniqueArg(name, loc, used);
      const req = loc === 'path' || node.required === true;
      const schema = paramSchema(node, ctx.version);
      let converted = input.convert(schema);
      if (typeof node.description === 'string' && isObject(converted)) converted = { ...converted, description: node.description };
      if (node.deprecated === true && isObject(converted)) converted = { ...converted, deprecated: true };
      if (loc === 'header' && mirrorable(name, converted, mirrored)) converted = { ...(converted as Record<string, unknown>), [X_MCP_HEADER]: name };
      // a parameter named `__proto__` must become a property, not the prototype
      defineOwn(properties, arg, converted);
      if (req) required.push(arg);
      const p: IrParam = { kind: 'param', arg, name, in: loc, required: req, origin: { file: ctx.file, pointer: ptr } };
      Object.assign(p, styleOf(node, loc, ctx.version));
      params.push(p);
    }
  }

  const bodyInfo = requestBody(ctx, all);
  let body: IrBody | undefined;
  if (bodyInfo) {
    const arg = uniqueArg('body', 'body', used, ['requestBody']);
    let converted = input.convert(bodyInfo.schema);
    const files = bodyFiles(bodyInfo.contentType, converted, ctx.localFiles);
    converted = files.schema;
    if (bodyInfo.description && isObject(converted) && converted.description === undefined) converted = { ...converted, description: bodyInfo.description };
    defineOwn(properties, arg, converted);
    if (bodyInfo.required) required.push(arg);
    body = { kind: 'body', arg, contentType: bodyInfo.contentType, required: bodyInfo.required, origin: { file: ctx.file, pointer: bodyInfo.pointer } };
    if (files.fields.length) body.files = files.fields;
    if (files.binary) body.binary = true;
  }

  const root: JsonSchema = { type: 'object', properties };
  if (required.length) root.required = required;
  root.additionalProperties = false;
  const bodies = successBodies(ctx);
  const contract = outputContract(bodies, ctx.outputSchemas, ctx.outputDepth, ctx.outputMaxBytes);
  const inputSchema = boundDepth(input.finish(root));
  const parts: OperationParts = {
    inputSchema: inputSchema.schema,
    resultShape: contract.shape,
    params,
    annotations: annotationsFor(op),
    jsonResult: bodies.length === 0 || bodies.some((b) => b.kind === 'json'),
    resultExamples: bodies.flatMap((b) => (b.kind === 'json' ? (b.examples ?? []) : [])),
  };
  if (body) parts.body = body;
  const outputSchema = contract.schema ? boundDepth(contract.schema) : undefined;
  if (outputSchema) parts.outputSchema = outputSchema.schema;
  const notes = input.notes;
  if (notes.patterns.size > 0 || notes.cut || inputSchema.cut || outputSchema?.cut)
    parts.schemaNotes = { patterns: notes.patterns, cut: notes.cut || inputSchema.cut || outputSchema?.cut === true };
  if (op.summary) parts.title = op.summary;
  const description = describe(op);
  if (description) parts.description = description;
  return parts;
}

/** The input-schema keyword (SEP-2243) that asks a 2026-07-28 client to mirror an argument as the `Mcp-Param-<name>` HTTP header. */
export const X_MCP_HEADER = 'x-mcp-header';

/** RFC 9110 `token`: what an `x-mcp-header` name may be. */
export const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The JSON Schema types SEP-2243 allows an `x-mcp-header` property to have (`number` is not one). */
export const X_MCP_HEADER_TYPES: ReadonlySet<string> = new Set(['string', 'integer', 'boolean']);

/**
 * Whether a header parameter's argument can be mirrored as `Mcp-Param-<name>`: its schema has one
 * type SEP-2243 allows, the name is an HTTP token, and no earlier header of the tool has the name
 * ignoring case (recorded in `seen` when it can).
 */
export function mirrorable(name: string, schema: unknown, seen: Set<string>): boolean {
  if (!isObject(schema) || typeof schema.type !== 'string' || !X_MCP_HEADER_TYPES.has(schema.type) || !HTTP_TOKEN.test(name)) return false;
  if (seen.has(name.toLowerCase())) return false;
  seen.add(name.toLowerCase());
  return true;
}

/** Sets an own property, even one named `__proto__` (a spec's property names are data, never the prototype). */
function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  // a plain assignment elsewhere keeps the object in V8's fast mode
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function uniqueArg(name: string, loc: string, used: Set<string>, alternatives: string[] = []): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || '_';
  const candidates = [clean(name), ...alternatives.map(clean), clean(`${loc}_${name}`)];
  for (const c of candidates) {
    if (!used.has(c)) {
      used.add(c);
      return c;
    }
  }
  for (let i = 2; ; i++) {
    const c = clean(`${loc}_${name}`).slice(0, 60) + `_${i}`;
    if (!used.has(c)) {
      used.add(c);
      return c;
    }
  }
}

function paramSchema(node: Record<string, unknown>, version: SpecVersion): SpecSchema {
  if (version === '2.0') return Object.fromEntries(Object.entries(node).filter(([k]) => !NOT_SCHEMA_2.has(k)));
  if (node.schema !== undefined) return node.schema as SpecSchema;
  if (isObject(node.content)) {
    const first = Object.values(node.content)[0];
    if (isObject(first) && first.schema !== undefined) return first.schema as SpecSchema;
  }
  return {};
}

function styleOf(node: Record<string, unknown>, loc: ParamLocation, version: SpecVersion): Partial<IrParam> {
  if (version === '2.0') {
    const cf = typeof node.collectionFormat === 'string' ? COLLECTION_FORMATS[node.collectionFormat] : undefined;
    if (node.type !== 'array') return {};
    const f = cf ?? COLLECTION_FORMATS.csv!;
    const res: Partial<IrParam> = {};
    if (f.style && !(f.style === 'form' && loc === 'query')) res.style = f.style;
    const defaultExplode = (f.style ?? (loc === 'query' || loc === 'cookie' ? 'form' : 'simple')) === 'form';
    if (f.explode !== defaultExplode) res.explode = f.explode;
    return res;
  }
  const res: Partial<IrParam> = {};
  const style = typeof node.style === 'string' ? (node.style as ParamStyle) : undefined;
  const defaultStyle = loc === 'query' || loc === 'cookie' ? 'form' : 'simple';
  if (style && style !== defaultStyle) res.style = style;
  if (typeof node.explode === 'boolean' && node.explode !== ((style ?? defaultStyle) === 'form')) res.explode = node.explode;
  return res;
}

const BODY_PREFERENCE = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain', 'application/octet-stream'];

/** Picks the media type the tool sends: JSON first, then form, multipart, text, binary, else the first listed. */
export function pickMediaType(types: readonly string[]): string | undefined {
  const base = (t: string) => t.split(';')[0]!.trim().toLowerCase();
  for (const pref of BODY_PREFERENCE) {
    const hit = types.find((t) => base(t) === pref);
    if (hit) return hit;
    if (pref === 'application/json') {
      const plus = types.find((t) => /\+json$/.test(base(t)) || base(t) === '*/*');
      if (plus) return plus;
    }
  }
  return types[0];
}

type BodyInfo = { schema: SpecSchema; contentType: string; required: boolean; description?: string; pointer: string };

function requestBody(ctx: PartsContext, params: Array<{ node: Record<string, unknown>; ptr: string }>): BodyInfo | undefined {
  const { op, conv, doc } = ctx;
  if (ctx.version === '2.0') {
    const consumes = (Array.isArray(op.node.consumes) ? op.node.consumes : Array.isArray(doc.consumes) ? doc.consumes : []).filter(
      (c): c is string => typeof c === 'string',
    );
    const bodyParam = params.find((p) => p.node.in === 'body');
    if (bodyParam) {
      const ct = pickMediaType(consumes.filter((c) => !/form/.test(c))) ?? 'application/json';
      const out: BodyInfo = {
        schema: (bodyParam.node.schema ?? {}) as SpecSchema,
        contentType: ct === '*/*' ? 'application/json' : ct,
        required: bodyParam.node.required === true,
        pointer: bodyParam.ptr,
      };
      if (typeof bodyParam.node.description === 'string') out.description = bodyParam.node.description;
      return out;
    }
    const form = params.filter((p) => p.node.in === 'formData');
    if (form.length === 0) return undefined;
    const properties: Record<string, unknown> = {};
    const required: string[] = [];
    for (const { node } of form) {
      const s = paramSchema(node, '2.0') as Record<string, unknown>;
      defineOwn(properties, node.name as string, typeof node.description === 'string' ? { ...s, description: node.description } : s);
      if (node.required === true) required.push(node.name as string);
    }
    const multipart = consumes.some((c) => c.startsWith('multipart/form-data')) || form.some((p) => p.node.type === 'file');
    const schema: Record<string, unknown> = { type: 'object', properties };
    if (required.length) schema.required = required;
    return {
      schema,
      contentType: multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded',
      required: required.length > 0,
      pointer: form[0]!.ptr,
    };
  }
  const rb = conv.deref(op.node.requestBody);
  if (!isObject(rb) || !isObject(rb.content)) return undefined;
  const ct = pickMediaType(Object.keys(rb.content));
  if (!ct) return undefined;
  const media = rb.content[ct];
  const schema = isObject(media) && media.schema !== undefined ? (media.schema as SpecSchema) : {};
  const out: BodyInfo = {
    schema,
    contentType: ct === '*/*' ? 'application/json' : ct,
    required: rb.required === true,
    pointer: pointer(['paths', op.path, op.method, 'requestBody', 'content', ct]),
  };
  if (typeof rb.description === 'string') out.description = rb.description;
  return out;
}

function isJson(ct: string): boolean {
  const b = ct.split(';')[0]!.trim().toLowerCase();
  return b === 'application/json' || b.endsWith('+json') || b === '*/*';
}

/**
 * The 2xx responses of an operation, as the runtime may receive them: JSON (with its converted
 * schema when the spec gives one, a recursive root published as the root), empty, or other
 * media. No 2xx described at all gives an empty list.
 */
function successBodies(ctx: PartsContext): SuccessBody[] {
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

function annotationsFor(op: RawOperation): ToolAnnotations {
  switch (op.method) {
    case 'get':
    case 'head':
      return { readOnlyHint: true };
    case 'delete':
      return { destructiveHint: true };
    case 'put':
      return { idempotentHint: true };
    default:
      return {};
  }
}

function describe(op: RawOperation): string | undefined {
  const { summary, description } = op;
  let text = description && summary && !description.startsWith(summary) ? `${summary}\n\n${description}` : (description ?? summary);
  if (op.deprecated && text) text = `[deprecated] ${text}`;
  return text?.trim() || undefined;
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const BINARY_TYPES = /^(application\/octet-stream|image\/|audio\/|video\/|application\/pdf$|application\/zip$)/;

/** The input schema of a file argument: base64 content, or `{ path }` when local files are allowed. */
export function fileArgSchema(description: string | undefined, localFiles: boolean): JsonSchema {
  const base64: JsonSchema = { type: 'string', contentEncoding: 'base64', description: 'File content, base64-encoded.' };
  const out: JsonSchema = localFiles
    ? {
        anyOf: [
          base64,
          {
            type: 'object',
            description: 'A local file for the server to read (inside its upload directory).',
            properties: { path: { type: 'string', minLength: 1 }, filename: { type: 'string' }, contentType: { type: 'string' } },
            required: ['path'],
            additionalProperties: false,
          },
        ],
      }
    : { ...base64 };
  if (description) out.description = localFiles ? description : `${description} (base64-encoded)`;
  return out;
}

function isBinarySchema(s: unknown): boolean {
  return isObject(s) && (s.format === 'binary' || typeof s.contentMediaType === 'string' || s.contentEncoding === 'base64');
}

/**
 * Finds the file parts of a body: the whole body for binary media types, or the top-level
 * properties of a multipart body whose schema is binary (also arrays of them), and rewrites
 * their schemas to {@link fileArgSchema}.
 */
function bodyFiles(contentType: string, schema: unknown, localFiles: boolean): { schema: unknown; fields: string[]; binary: boolean } {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const desc = (s: unknown) => (isObject(s) && typeof s.description === 'string' ? s.description : undefined);
  if (BINARY_TYPES.test(type)) return { schema: fileArgSchema(desc(schema), localFiles), fields: [], binary: true };
  if (type !== 'multipart/form-data' || !isObject(schema) || !isObject(schema.properties)) return { schema, fields: [], binary: false };
  const fields: string[] = [];
  const properties: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(schema.properties)) {
    if (isBinarySchema(prop)) {
      fields.push(name);
      defineOwn(properties, name, fileArgSchema(desc(prop), localFiles));
    } else if (isObject(prop) && prop.type === 'array' && isBinarySchema(prop.items)) {
      fields.push(name);
      defineOwn(properties, name, { ...prop, items: fileArgSchema(desc(prop.items), localFiles) });
    } else defineOwn(properties, name, prop);
  }
  return { schema: { ...schema, properties }, fields, binary: false };
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

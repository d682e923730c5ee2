/**
 * One OpenAPI operation → the request mapping and schemas of its tool (names are decided later,
 * in `names.ts`, once every tool is known): its parameters here, its request body in
 * `request-body.ts`, its 2xx responses in `success-bodies.ts`.
 */
import { pointer } from '../../core/diagnostics.js';
import { isObject } from '../../core/json.js';
import type { SpecVersion } from '../../openapi/load.js';
import type { RawOperation } from '../../openapi/operations.js';
import type { ConversionNotes, SchemaConverter } from '../../openapi/schema.js';
import { boundDepth } from '../../openapi/schema-depth.js';
import type { IrBody, IrParam, JsonSchema, ParamLocation, ParamStyle, ToolAnnotations } from '../types.js';
import { type OutputSchemaMode, outputContract, type ResultShape } from './output-schema.js';
import { bodyFiles, defineOwn, paramSchema, requestBody } from './request-body.js';
import { successBodies } from './success-bodies.js';

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

/**
 * The request body of one operation's tool (operation-tool.ts): which media type it sends, the
 * body's spec schema (an OpenAPI 3 `requestBody`, or Swagger 2's `body` or `formData` parameters)
 * and its file parts, whose schemas become file arguments.
 */
import { pointer } from '../../core/diagnostics.js';
import { isObject } from '../../core/json.js';
import type { SpecVersion } from '../../openapi/load.js';
import type { RawOperation } from '../../openapi/operations.js';
import type { SchemaConverter, SpecSchema } from '../../openapi/schema.js';
import type { JsonSchema } from '../types.js';

/** What of the spec a body is read from (a {@link PartsContext} of operation-tool.ts is one). */
type Source = { op: RawOperation; doc: Record<string, unknown>; version: SpecVersion; conv: SchemaConverter };

const NOT_SCHEMA_2 = new Set(['name', 'in', 'required', 'description', 'collectionFormat', 'allowEmptyValue']);

/** Sets an own property, even one named `__proto__` (a spec's property names are data, never the prototype). */
export function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  // a plain assignment elsewhere keeps the object in V8's fast mode
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** The spec schema of a parameter (a Swagger 2 parameter is its own schema; an OpenAPI 3 one has `schema` or `content`). */
export function paramSchema(node: Record<string, unknown>, version: SpecVersion): SpecSchema {
  if (version === '2.0') return Object.fromEntries(Object.entries(node).filter(([k]) => !NOT_SCHEMA_2.has(k)));
  if (node.schema !== undefined) return node.schema as SpecSchema;
  if (isObject(node.content)) {
    const first = Object.values(node.content)[0];
    if (isObject(first) && first.schema !== undefined) return first.schema as SpecSchema;
  }
  return {};
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

export function requestBody(ctx: Source, params: Array<{ node: Record<string, unknown>; ptr: string }>): BodyInfo | undefined {
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
export function bodyFiles(contentType: string, schema: unknown, localFiles: boolean): { schema: unknown; fields: string[]; binary: boolean } {
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

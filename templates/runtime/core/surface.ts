/**
 * The served surface: the exact `tools/list` entry of a tool, the `_meta` a concern mapping
 * adds to any listed primitive, the `persist_justification` tool, and the byte count of a
 * list. Pure functions over data, importing only json-shapes.ts: mcpgen computes the surface it reports at
 * build time with this very module, and the generated server lists its tools with it, so the
 * bytes a build reports are the bytes a client receives.
 */
import { isRecord } from './json-shapes.js';

/** A JSON Schema object. */
export type SurfaceSchema = { readonly [key: string]: unknown };

/** Tool annotations as listed. */
export type SurfaceAnnotations = {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
};

/** The fields of a tool its `tools/list` entry is made of. */
export type ToolSource = {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: SurfaceSchema;
  readonly outputSchema?: SurfaceSchema;
  readonly annotations?: SurfaceAnnotations;
};

/** One entry of `tools/list`. */
export type ToolEntry = {
  name: string;
  title?: string;
  description?: string;
  inputSchema: SurfaceSchema;
  outputSchema?: SurfaceSchema;
  annotations?: SurfaceAnnotations;
  _meta?: { readonly [key: string]: unknown };
};

/** A concern mapping: concern ⇒ the value(s) a primitive belongs to. */
export type ConcernMapping = { readonly [concern: string]: string | readonly string[] };

/** The `tools/list` entry of a tool: name, title, description, schemas, annotations (when any). */
export function toolEntry(tool: ToolSource): ToolEntry {
  const out: ToolEntry = {
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
  };
  if (tool.outputSchema !== undefined) out.outputSchema = tool.outputSchema;
  if (tool.annotations !== undefined && Object.keys(tool.annotations).length > 0) out.annotations = tool.annotations;
  return out;
}

/** `item` with `_meta.concerns` set to `mapping` (unchanged when the mapping is absent or empty). */
export function withConcernMeta<T extends object>(item: T, mapping: ConcernMapping | undefined): T {
  if (mapping === undefined || Object.keys(mapping).length === 0) return item;
  const meta: unknown = (item as { _meta?: unknown })._meta;
  const base = isRecord(meta) ? meta : {};
  return { ...item, _meta: { ...base, concerns: mapping } };
}

/** Size of a list as a client receives it: the UTF-8 length of its JSON. */
export function listBytes(entries: readonly unknown[]): number {
  return new TextEncoder().encode(JSON.stringify(entries)).byteLength;
}

/** Name of the tool that stores a host-written justification. */
export const PERSIST_TOOL_NAME = 'persist_justification';

const HASH_PROPERTY: SurfaceSchema = {
  type: 'string',
  pattern: '^[0-9a-f]{64}\\.[0-9]+\\.[A-Za-z0-9_-]+$',
  description: 'The `hash` from the gate hint, exactly as given.',
};

/** The justification a gate asks for unless the manifest gives a schema. */
export const DEFAULT_JUSTIFICATION_SCHEMA: SurfaceSchema = {
  type: 'object',
  properties: {
    intent: { type: 'string', minLength: 1, description: 'What the call is meant to achieve.' },
    alternatives: { type: 'array', items: { type: 'string' }, description: 'Other options that were considered.' },
    choice: { type: 'string', minLength: 1, description: 'The option chosen, and why.' },
    confidence: { type: 'number', minimum: 0, maximum: 1, description: 'Confidence in the choice, from 0 to 1.' },
  },
  required: ['intent', 'alternatives', 'choice', 'confidence'],
  additionalProperties: false,
};

/** The `persist_justification` tool with a generic schema; {@link persistToolFor} embeds the real domains and justification schema. */
export const PERSIST_TOOL: ToolEntry = {
  name: PERSIST_TOOL_NAME,
  title: 'Persist justification',
  description:
    'Stores the justification a reflection gate asked for. Call it with the hash and domain from the gate hint and the JSON object the model wrote for the gate prompt, then retry the gated tool with the same arguments.',
  inputSchema: {
    type: 'object',
    properties: {
      hash: HASH_PROPERTY,
      domain: { type: 'string', description: 'The `domain` from the gate hint.' },
      justification: { type: 'object', description: 'The JSON object answering the gate prompt.' },
    },
    required: ['hash', 'domain', 'justification'],
    additionalProperties: false,
  },
  annotations: { title: 'Persist justification', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

/**
 * Wraps `schema` as the `justification` property of an object schema, hoisting its `$defs` /
 * `definitions` so local `$ref`s still resolve. Used for validation (paths then start with
 * `justification.`) and as the `persist_justification` input schema.
 */
export function embedJustificationSchema(schema: SurfaceSchema, extra: Record<string, SurfaceSchema> = {}, order: readonly string[] = []): SurfaceSchema {
  const { $defs, definitions, $schema: _ignored, ...inner } = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {
    type: 'object',
    properties: { ...Object.fromEntries(order.filter((k) => Object.hasOwn(extra, k)).map((k) => [k, extra[k]])), justification: inner },
    required: [...order.filter((k) => Object.hasOwn(extra, k)), 'justification'],
    additionalProperties: false,
  };
  if ($defs !== undefined) out.$defs = $defs;
  if (definitions !== undefined) out.definitions = definitions;
  return out;
}

/** `PERSIST_TOOL` with the declared `domains` as an enum and `schema` as the justification's schema. */
export function persistToolFor(schema: SurfaceSchema, domains: readonly string[]): ToolEntry {
  const domain: SurfaceSchema = { type: 'string', enum: [...domains], description: 'The `domain` from the gate hint.' };
  return { ...PERSIST_TOOL, inputSchema: embedJustificationSchema(schema, { hash: HASH_PROPERTY, domain }, ['hash', 'domain']) };
}

/**
 * The manifest JSON Schema (schemas/manifest.schema.json), loaded once, plus small helpers to
 * walk it. The schema is the source of truth of the manifest: validation, defaults and the
 * generated types (./types.gen.ts) all come from it.
 */
import { readFileSync } from 'node:fs';
import { parsePointer } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';
import { packageFile } from '../core/paths.js';

/** A JSON Schema node (an object; boolean schemas do not occur in the manifest schema). */
export type SchemaNode = { [keyword: string]: unknown };

/**
 * Where the schema file lives. Resolved from this module, so it works from `src/manifest/`
 * (tests) and from `dist/manifest/` (the built package ships `schemas/` next to `dist/`).
 */
export const MANIFEST_SCHEMA_URL = packageFile('schemas/manifest.schema.json');

let cached: SchemaNode | undefined;

/** The parsed manifest schema (read from disk on first use). */
export function manifestSchema(): SchemaNode {
  cached ??= JSON.parse(readFileSync(MANIFEST_SCHEMA_URL, 'utf8')) as SchemaNode;
  return cached;
}

/** True for a plain (non-array, non-null) object: `json.ts`'s test, under the manifest code's name. */
export const isRecord = isObject;

/** Follows `$ref`s (local `#/...` ones only) until a node without one. */
export function resolveRef(node: unknown, root: SchemaNode = manifestSchema()): SchemaNode | undefined {
  let n: unknown = node;
  for (let hops = 0; hops < 32 && isRecord(n) && typeof n.$ref === 'string'; hops++) {
    if (!n.$ref.startsWith('#')) return undefined;
    let target: unknown = root;
    for (const token of parsePointer(n.$ref)) target = isRecord(target) || Array.isArray(target) ? (target as Record<string, unknown>)[token] : undefined;
    n = target;
  }
  return isRecord(n) ? n : undefined;
}

/**
 * The schema that describes the value at an instance pointer, or undefined when the schema
 * says nothing about it. `description` is that of the closest node on the way that has one
 * (a property's own description wins over the one of the `$defs` entry it refers to).
 */
export function schemaAt(instancePointer: string): { node: SchemaNode | undefined; description: string | undefined } {
  const root = manifestSchema();
  let node: SchemaNode | undefined = root;
  let description = describe(root);
  for (const token of parsePointer(instancePointer)) {
    node = childSchema(resolveRef(node), token);
    if (!node) return { node: undefined, description };
    description = describe(node) ?? describe(resolveRef(node)) ?? description;
  }
  return { node, description };
}

function describe(n: SchemaNode | undefined): string | undefined {
  return typeof n?.description === 'string' ? n.description : undefined;
}

function childSchema(node: SchemaNode | undefined, token: string): SchemaNode | undefined {
  if (!node) return undefined;
  const props = node.properties;
  if (isRecord(props) && isRecord(props[token])) return props[token];
  if (isRecord(node.additionalProperties)) return node.additionalProperties;
  if (isRecord(node.items) && /^(0|[1-9][0-9]*)$/.test(token)) return node.items;
  const alternatives = node.anyOf ?? node.oneOf;
  if (Array.isArray(alternatives)) {
    for (const alt of alternatives) {
      const child = childSchema(resolveRef(alt), token);
      if (child) return child;
    }
  }
  return undefined;
}

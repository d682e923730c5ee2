/**
 * Enumerates the operations of a bundled OpenAPI document in spec order.
 */
import { pointer } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';

/** HTTP method, upper case. */
export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'OPTIONS' | 'HEAD' | 'PATCH' | 'TRACE';

/** HTTP methods in the order OpenAPI lists them in a Path Item. */
export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** A lower-case HTTP method as it appears in a Path Item. */
export type MethodKey = (typeof METHODS)[number];

/** One operation as found in the document. */
export type RawOperation = {
  method: MethodKey;
  httpMethod: HttpMethod;
  /** Path template as written in the spec. */
  path: string;
  operationId?: string;
  tags: string[];
  summary?: string;
  description?: string;
  deprecated: boolean;
  /** Pointer of the operation object, e.g. `/paths/~1pets/get`. */
  pointer: string;
  /** The operation object. */
  node: Record<string, unknown>;
  /** The enclosing Path Item (for path-level parameters). */
  pathItem: Record<string, unknown>;
};

/** Lists every operation, paths in document order and methods in {@link METHODS} order. */
export function listOperations(doc: Record<string, unknown>): RawOperation[] {
  const out: RawOperation[] = [];
  const paths = isObject(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item) || !path.startsWith('/')) continue;
    for (const method of METHODS) {
      const node = item[method];
      if (!isObject(node)) continue;
      const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
      out.push({
        method,
        httpMethod: method.toUpperCase() as HttpMethod,
        path,
        operationId: str(node.operationId),
        tags: Array.isArray(node.tags) ? node.tags.filter((t): t is string => typeof t === 'string') : [],
        summary: str(node.summary),
        description: str(node.description),
        deprecated: node.deprecated === true,
        pointer: pointer(['paths', path, method]),
        node,
        pathItem: item,
      });
    }
  }
  return out;
}

/** Every tag known to the document: declared at the top level or used by an operation. */
export function knownTags(doc: Record<string, unknown>, ops: readonly RawOperation[]): Set<string> {
  const tags = new Set<string>();
  if (Array.isArray(doc.tags)) for (const t of doc.tags) if (isObject(t) && typeof t.name === 'string') tags.add(t.name);
  for (const op of ops) for (const t of op.tags) tags.add(t);
  return tags;
}

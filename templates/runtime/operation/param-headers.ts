/**
 * `x-mcp-header` (SEP-2243, 2026-07-28 Streamable HTTP): a tool's input schema may mark a
 * property, reached through `properties` only, with `x-mcp-header: <Name>`; a modern client then
 * mirrors the argument's value in an `Mcp-Param-<Name>` HTTP header, which the server checks
 * against the body before the call runs. This module is that check, written after the SDK's own
 * (`scanXMcpHeaderDeclarations` / `validateMcpParamHeaders` of @modelcontextprotocol/server, which
 * its `createMcpHandler` applies to `McpServer` tools only and does not export):
 *
 * - a body value that is absent or `null` needs no header (a header sent anyway is ignored);
 * - otherwise the header must be present: a value `=?base64?…?=` is decoded (canonical Base64 of
 *   UTF-8; anything else is refused as invalid characters), any other value is taken literally;
 * - the (decoded) value must equal the body value as a string (`true`/`false`, the decimal of a
 *   number; integers compare numerically, so `42.0` matches `42`).
 *
 * A refusal is HTTP 400 with JSON-RPC error -32020 (HeaderMismatch), `data.mismatch` naming the
 * header, as the SDK answers a standard-header mismatch.
 *
 * This file is copied verbatim into every generated project.
 */

/** JSON-RPC error code of a header that disagrees with the body (SEP-2243 HeaderMismatch). */
export const HEADER_MISMATCH = -32020;

/** The types an `x-mcp-header` property may have. */
const PERMITTED_TYPES: ReadonlySet<string> = new Set(['string', 'integer', 'boolean']);

/** RFC 9110 token: what a header name suffix may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';
const BASE64_CANONICAL = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CANONICAL_DECIMAL = /^-?\d+(\.\d+)?$/;

/** One `x-mcp-header` property of a tool's input schema. */
export type ParamHeader = {
  /** Property names from the root of the arguments, through `properties`. */
  readonly path: readonly string[];
  /** The header is `Mcp-Param-<name>`. */
  readonly name: string;
  readonly type: string;
};

/** The `x-mcp-header` properties of `schema` reached through `properties` (ill-formed ones are skipped: the build refuses them). */
export function paramHeaders(schema: unknown): ParamHeader[] {
  const out: ParamHeader[] = [];
  const visit = (node: unknown, path: string[]): void => {
    if (node === null || typeof node !== 'object') return;
    const s = node as Record<string, unknown>;
    const name = s['x-mcp-header'];
    if (path.length > 0 && typeof name === 'string' && TOKEN.test(name) && typeof s.type === 'string' && PERMITTED_TYPES.has(s.type))
      out.push({ path, name, type: s.type });
    const props = s.properties;
    if (props !== null && typeof props === 'object') for (const [key, child] of Object.entries(props)) visit(child, [...path, key]);
  };
  visit(schema, []);
  return out;
}

/** Why a request is refused: the HTTP status and JSON-RPC error to answer with. */
export type HeaderRefusal = { readonly status: number; readonly code: number; readonly message: string; readonly data?: unknown };

function refusal(header: string, why: string): HeaderRefusal {
  return {
    status: 400,
    code: HEADER_MISMATCH,
    message: `Bad Request: the request headers and body disagree: ${why}`,
    data: { mismatch: { header, body: why } },
  };
}

/** Decodes an `Mcp-Param-*` value; undefined when it carries the Base64 wrapper around something that is not canonical Base64 of UTF-8. */
export function decodeParamValue(value: string): string | undefined {
  if (!(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX) && value.length >= BASE64_PREFIX.length + BASE64_SUFFIX.length)) return value;
  const b64 = value.slice(BASE64_PREFIX.length, value.length - BASE64_SUFFIX.length);
  if (!BASE64_CANONICAL.test(b64)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(b64, 'base64'));
  } catch {
    return undefined;
  }
}

/** The header form of a primitive argument value; undefined for what has none. */
function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value))) return String(value);
  return undefined;
}

/** Checks the `Mcp-Param-*` headers of a call against its arguments; undefined when they agree. */
export function checkParamHeaders(declared: readonly ParamHeader[], args: unknown, headers: { get(name: string): string | null }): HeaderRefusal | undefined {
  for (const d of declared) {
    const header = `Mcp-Param-${d.name}`;
    let value: unknown = args;
    for (const key of d.path) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    if (value === undefined || value === null) continue;
    const text = asText(value);
    if (text === undefined) continue;
    const raw = headers.get(header);
    if (raw === null) return refusal(header, `the body carries ${d.path.join('.')}=${JSON.stringify(value)} but the ${header} header is absent`);
    const decoded = decodeParamValue(raw.trim());
    if (decoded === undefined) return refusal(header, `the ${header} header carries an invalid Base64 value`);
    const equal =
      (d.type === 'integer' || d.type === 'number') && typeof value === 'number' && CANONICAL_DECIMAL.test(decoded)
        ? Number(decoded) === value
        : decoded === text;
    if (!equal)
      return refusal(header, `the ${header} header decodes to ${JSON.stringify(decoded)} but the body carries ${d.path.join('.')}=${JSON.stringify(value)}`);
  }
  return undefined;
}

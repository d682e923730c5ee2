/**
 * Turns validated tool arguments into one HTTP request, following OpenAPI's parameter
 * serialisation rules (style/explode) and percent-encoding every value so that an argument can
 * never escape its place in the URL (no `../` traversal, no injected query or header lines).
 */
import { randomBytes } from 'node:crypto';
import { isRecord } from '../core/json-shapes.js';
import { isJsonMedia, mediaType } from '../core/media-type.js';
import type { HttpOperation, HttpParam, ParamStyle } from '../core/types.js';

/** A request that is ready for `fetch`. */
export type BuiltRequest = {
  /** Absolute URL, query included. */
  url: string;
  /** HTTP method, upper case. */
  method: string;
  /** Headers to send (`Accept` always, `Content-Type` with a body, `Cookie` for cookie parameters). */
  headers: Record<string, string>;
  /** Encoded body, absent when the operation has none or its argument is undefined. */
  body?: string | Uint8Array;
};

/** Arguments that cannot be put on the wire safely; `arg` names the tool argument at fault. */
export class RequestBuildError extends Error {
  /** The tool argument at fault. */
  readonly arg: string;
  /** Creates the error for argument `arg`. */
  constructor(arg: string, message: string) {
    super(message);
    this.name = 'RequestBuildError';
    this.arg = arg;
  }
}

/** `Accept` sent unless a header parameter sets one. */
export const DEFAULT_ACCEPT = 'application/json, */*;q=0.8';

/** RFC 3986 percent-encoding: everything except unreserved characters (`A-Z a-z 0-9 - . _ ~`). */
export function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/** Joins a base URL and a path: the base keeps its own path, exactly one `/` between them. */
export function joinUrl(baseUrl: string, path: string): string {
  return baseUrl.replace(/\/+$/, '') + (path.startsWith('/') ? path : '/' + path);
}

/** Plain text of a scalar; objects and arrays nested inside a value become JSON. */
function scalar(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? '';
}

/**
 * An argument's value: own properties only, so an argument named `constructor` or `toString`
 * that the caller left out is `undefined`, never the function every object inherits.
 */
function argument(args: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(args, name) ? args[name] : undefined;
}

/** Sets an own property, even one named `__proto__` (a plain assignment would replace the prototype). */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Entries of an object, skipping undefined members. */
function entries(value: Record<string, unknown>): Array<[string, unknown]> {
  return Object.entries(value).filter(([, v]) => v !== undefined);
}

function styleOf(p: HttpParam): ParamStyle {
  return p.style ?? (p.in === 'query' || p.in === 'cookie' ? 'form' : 'simple');
}

function explodeOf(p: HttpParam): boolean {
  return p.explode ?? styleOf(p) === 'form';
}

/** Serialises a path parameter (styles simple, label, matrix); `enc` encodes each value. */
function pathValue(p: HttpParam, value: unknown, enc: (s: string) => string): string {
  const style = styleOf(p);
  const explode = explodeOf(p);
  const name = enc(p.name);
  if (style === 'label' || style === 'matrix') {
    const lead = style === 'label' ? '.' : ';';
    const named = (v: string) => (style === 'matrix' ? `${name}=${v}` : v);
    if (Array.isArray(value)) {
      const items = value.map((v) => enc(scalar(v)));
      return explode ? items.map((v) => lead + named(v)).join('') : lead + named(items.join(','));
    }
    if (isRecord(value)) {
      const pairs = entries(value).map(([k, v]) => [enc(k), enc(scalar(v))] as const);
      if (explode) return pairs.map(([k, v]) => `${lead}${k}=${v}`).join('');
      return lead + named(pairs.map(([k, v]) => `${k},${v}`).join(','));
    }
    return lead + named(enc(scalar(value)));
  }
  // simple (also used for any style that makes no sense in a path)
  if (Array.isArray(value)) return value.map((v) => enc(scalar(v))).join(',');
  if (isRecord(value)) {
    return entries(value)
      .map(([k, v]) => (explode ? `${enc(k)}=${enc(scalar(v))}` : `${enc(k)},${enc(scalar(v))}`))
      .join(',');
  }
  return enc(scalar(value));
}

/** True when a path segment is `.` or `..`, also in percent-encoded form (`%2e`, `.%2E`, …). */
export function isDotSegment(segment: string): boolean {
  const s = segment.replace(/%2e/gi, '.');
  return s === '.' || s === '..';
}

/** A segment with a `{name}` in it. */
const TEMPLATED = /\{[^{}]+\}/;

/** An operation's path template, split once: its path parameters by name, its segments, and what follows a `?`. */
type PathTemplate = {
  readonly byName: ReadonlyMap<string, HttpParam>;
  readonly segments: readonly string[];
  readonly rest: string;
  readonly source: string;
  readonly params: readonly HttpParam[];
};
const pathTemplates = new WeakMap<HttpOperation, PathTemplate>();

function pathTemplate(op: HttpOperation): PathTemplate {
  let t = pathTemplates.get(op);
  if (t === undefined || t.source !== op.path || t.params !== op.params) {
    const queryAt = op.path.indexOf('?');
    const pathPart = queryAt === -1 ? op.path : op.path.slice(0, queryAt);
    t = {
      byName: new Map(op.params.filter((p) => p.in === 'path').map((p) => [p.name, p])),
      segments: pathPart.split('/'),
      rest: queryAt === -1 ? '' : op.path.slice(queryAt),
      source: op.path,
      params: op.params,
    };
    pathTemplates.set(op, t);
  }
  return t;
}

/** Fills the path template, refusing values that would produce an empty or dot segment. */
function fillPath(op: HttpOperation, args: Record<string, unknown>): string {
  const { byName, segments: template, rest } = pathTemplate(op);
  const segments = template.map((segment) => {
    if (!TEMPLATED.test(segment)) return segment;
    const used: string[] = [];
    const filled = segment.replace(/\{([^{}]+)\}/g, (_m, name: string) => {
      const p = byName.get(name);
      if (!p) throw new RequestBuildError(name, `The path template ${op.path} uses {${name}}, which no parameter provides`);
      const value = argument(args, p.arg);
      if (value === undefined || value === null) throw new RequestBuildError(p.arg, `Missing value for path parameter ${p.arg}`);
      const text = pathValue(p, value, encodeRfc3986);
      if (text === '') throw new RequestBuildError(p.arg, `Path parameter ${p.arg} must not be empty`);
      used.push(p.arg);
      return text;
    });
    if (used.length > 0 && isDotSegment(filled)) {
      throw new RequestBuildError(used[0]!, `Path parameter ${used.join(', ')} must not be "." or ".." (got ${JSON.stringify(filled)})`);
    }
    return filled;
  });
  return segments.join('/') + rest;
}

/** Appends `name=value` query pairs for one parameter (all parts already encoded). */
function queryPairs(p: HttpParam, value: unknown): string[] {
  const style = styleOf(p);
  const explode = explodeOf(p);
  const name = encodeRfc3986(p.name);
  const enc = encodeRfc3986;
  if (style === 'deepObject') {
    const out: string[] = [];
    const walk = (prefix: string, v: unknown): void => {
      if (v === undefined) return;
      if (isRecord(v)) for (const [k, inner] of entries(v)) walk(`${prefix}[${enc(k)}]`, inner);
      else if (Array.isArray(v)) for (const item of v) walk(prefix, item);
      else out.push(`${prefix}=${enc(scalar(v))}`);
    };
    walk(name, value);
    return out;
  }
  const sep = style === 'spaceDelimited' ? '%20' : style === 'pipeDelimited' ? '|' : ',';
  if (Array.isArray(value)) {
    const items = value.filter((v) => v !== undefined).map((v) => enc(scalar(v)));
    if (items.length === 0) return [];
    return explode ? items.map((v) => `${name}=${v}`) : [`${name}=${items.join(sep)}`];
  }
  if (isRecord(value)) {
    const pairs = entries(value).map(([k, v]) => [enc(k), enc(scalar(v))] as const);
    if (explode) return pairs.map(([k, v]) => `${k}=${v}`);
    return pairs.length === 0 ? [] : [`${name}=${pairs.map(([k, v]) => `${k}${sep}${v}`).join(sep)}`];
  }
  return [`${name}=${enc(scalar(value))}`];
}

/** Header value (style simple); refuses control characters that would break the header. */
function headerValue(p: HttpParam, value: unknown): string {
  const text = pathValue({ ...p, style: 'simple' }, value, (s) => s);
  if (/[\r\n\0]/.test(text)) throw new RequestBuildError(p.arg, `Header parameter ${p.arg} must not contain line breaks or NUL characters`);
  // fetch only accepts ByteStrings: reject control characters and anything beyond Latin-1.
  if (/[^\t\x20-\x7e\x80-\xff]/.test(text))
    throw new RequestBuildError(p.arg, `Header parameter ${p.arg} may only contain printable ASCII or Latin-1 characters`);
  return text.trim();
}

/** `name=value` cookie pairs (style form); values are percent-encoded so `;` cannot inject cookies. */
function cookiePairs(p: HttpParam, value: unknown): string[] {
  return queryPairs({ ...p, style: 'form' }, value);
}

/** A file ready to be sent: its bytes, and the file name and media type of its part. */
export type FilePart = { readonly kind: 'file'; readonly bytes: Uint8Array; readonly filename: string; readonly contentType: string };

/** True for a {@link FilePart}. */
export function isFilePart(v: unknown): v is FilePart {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'file' && (v as { bytes?: unknown }).bytes instanceof Uint8Array;
}

/** Decodes standard or URL-safe base64; throws `RequestBuildError` naming `arg` for anything else. */
export function decodeBase64(arg: string, value: unknown): Uint8Array {
  if (isFilePart(value)) return value.bytes;
  const problem = `${arg} must be base64-encoded content`;
  if (typeof value !== 'string') throw new RequestBuildError(arg, problem);
  const text = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text) || text.replace(/=+$/, '').length % 4 === 1) {
    throw new RequestBuildError(arg, problem);
  }
  return new Uint8Array(Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64'));
}

/** `application/x-www-form-urlencoded` body: arrays repeat their key, nested objects become JSON. */
function formBody(value: unknown): string {
  if (!isRecord(value)) return scalar(value);
  const form = new URLSearchParams();
  for (const [k, v] of entries(value)) {
    if (Array.isArray(v)) for (const item of v) form.append(k, scalar(item));
    else form.append(k, scalar(v));
  }
  return form.toString();
}

/**
 * `multipart/form-data` body: one part per field (arrays give one part per item); file fields
 * (already {@link FilePart}s, see uploads.ts) become file parts with their name and bytes.
 */
function multipartBody(value: unknown): { body: string | Uint8Array; contentType: string } {
  const boundary = `mcpgen-${randomBytes(12).toString('hex')}`;
  const quote = (s: string) => s.replace(/[\r\n"\\]/g, (c) => encodeURIComponent(c));
  const parts: Array<string | Uint8Array> = [];
  let binary = false;
  const fields = isRecord(value) ? entries(value) : [['value', value] as [string, unknown]];
  for (const [k, v] of fields) {
    for (const item of Array.isArray(v) ? v : [v]) {
      if (isFilePart(item)) {
        binary = true;
        parts.push(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quote(k)}"; filename="${quote(item.filename)}"\r\nContent-Type: ${item.contentType.replace(/[\r\n]/g, '')}\r\n\r\n`,
          item.bytes,
          '\r\n',
        );
        continue;
      }
      const json = typeof item === 'object' && item !== null;
      parts.push(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quote(k)}"\r\n` +
          (json ? 'Content-Type: application/json\r\n' : '') +
          `\r\n${scalar(item)}\r\n`,
      );
    }
  }
  parts.push(`--${boundary}--\r\n`);
  const contentType = `multipart/form-data; boundary=${boundary}`;
  if (!binary) return { body: parts.join(''), contentType };
  return { body: new Uint8Array(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)))), contentType };
}

/** Encodes the body for its media type; returns the body and the `Content-Type` to send. */
function encodeBody(arg: string, contentType: string, value: unknown): { body: string | Uint8Array; contentType: string } {
  const type = mediaType(contentType);
  if (isJsonMedia(type)) return { body: JSON.stringify(value) ?? 'null', contentType };
  if (type === 'application/x-www-form-urlencoded') return { body: formBody(value), contentType };
  if (type === 'multipart/form-data') return multipartBody(value);
  if (type === 'application/octet-stream' || /^(image|audio|video)\//.test(type)) return { body: decodeBase64(arg, value), contentType };
  if (type.startsWith('text/')) return { body: scalar(value), contentType };
  return { body: typeof value === 'object' && value !== null ? JSON.stringify(value) : scalar(value), contentType };
}

/**
 * Builds the HTTP request for `op` from tool arguments. Path values are percent-encoded per
 * segment and may not form `.`/`..` segments; query, header and cookie parameters follow their
 * OpenAPI style; undefined arguments are omitted. Throws `RequestBuildError` for values that
 * cannot be sent safely.
 */
export function buildRequest(op: HttpOperation, args: Record<string, unknown>, baseUrl: string): BuiltRequest {
  const path = fillPath(op, args);
  const query: string[] = [];
  const cookies: string[] = [];
  const headers: Record<string, string> = {};
  for (const p of op.params) {
    const value = argument(args, p.arg);
    if (value === undefined) continue;
    if (p.in === 'query') query.push(...queryPairs(p, value));
    else if (p.in === 'cookie') cookies.push(...cookiePairs(p, value));
    else if (p.in === 'header') define(headers, p.name, headerValue(p, value));
  }
  if (!Object.keys(headers).some((h) => h.toLowerCase() === 'accept')) headers.Accept = DEFAULT_ACCEPT;
  if (cookies.length > 0) headers.Cookie = cookies.join('; ');
  let url = joinUrl(baseUrl, path);
  if (query.length > 0) url += (url.includes('?') ? '&' : '?') + query.join('&');
  const request: BuiltRequest = { url, method: op.method, headers };
  const bodyValue = op.body ? argument(args, op.body.arg) : undefined;
  if (op.body && bodyValue !== undefined) {
    const { body, contentType } = encodeBody(op.body.arg, op.body.contentType, bodyValue);
    for (const h of Object.keys(headers)) if (h.toLowerCase() === 'content-type') delete headers[h];
    headers['Content-Type'] = contentType;
    request.body = body;
  }
  return request;
}

/**
 * Reading and writing node:http messages for the HTTP transport: JSON-RPC error bodies and
 * replies, a web `Response` written out, request headers (one value, a view read in place, or all
 * as web `Headers`), a request body read up to a limit (the rest thrown away so that the client
 * reads the 413), and the era of a request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { classifyInboundRequest } from '@modelcontextprotocol/server';

export const rpcError = (code: number, message: string, id: unknown = null) => ({ jsonrpc: '2.0', error: { code, message }, id });

export function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Writes a web `Response` (the SDK's OAuth answers) to `res`. */
export async function send(res: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => void (headers[name] = value));
  res.writeHead(response.status, { ...headers, 'content-length': String(body.length) });
  res.end(body);
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Bytes of an oversized body read and thrown away so that the client can read the 413 (a client still sending when the connection closes sees only a reset). */
const DISCARD_LIMIT = 16 * 1024 * 1024;

/**
 * The body, or `undefined` when it exceeds `max` bytes: the rest is then read and thrown away
 * (nothing kept) up to {@link DISCARD_LIMIT} so that the client sees the answer; a body longer
 * than that is left unread and the connection closed after the answer.
 */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(header(req, 'content-length'));
    if (declared > max + DISCARD_LIMIT) return resolve(undefined);
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      chunks.length = 0;
      if (size <= max + DISCARD_LIMIT) return;
      req.off('data', onData);
      req.pause();
      resolve(undefined);
    };
    req.on('data', onData);
    req.once('end', () => resolve(size <= max ? Buffer.concat(chunks) : undefined));
    req.once('error', reject);
  });
}

export function webHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

/** Reads a request's headers by name, as web `Headers.get` does (any case; repeated values joined with `, `; `null` when absent). */
export type HeaderView = { get(name: string): string | null };

/**
 * A {@link HeaderView} of `req`'s own headers, read in place (no copy; node:http has already joined
 * repeated values), giving what a web `Headers` copy's `get` gives: own headers only (never
 * `constructor` or `__proto__` from the object's prototype), leading and trailing HTTP whitespace
 * trimmed (node joins `X-A: eu` and an empty `X-A:` as `eu, `; `Headers` reads `eu,`).
 */
export function headerView(req: IncomingMessage): HeaderView {
  return {
    get: (name) => {
      const key = name.toLowerCase();
      if (!Object.hasOwn(req.headers, key)) return null;
      const v = req.headers[key];
      if (v === undefined) return null;
      return (Array.isArray(v) ? v.join(', ') : v).replace(HTTP_WHITESPACE_ENDS, '');
    },
  };
}

/** Leading or trailing HTTP whitespace (tab, line feed, carriage return, space), as `Headers` normalises a value. */
const HTTP_WHITESPACE_ENDS = /^[\t\n\r ]+|[\t\n\r ]+$/g;

export const isMethod = (body: unknown, method: string): boolean =>
  typeof body === 'object' && body !== null && (body as { method?: unknown }).method === method;

/**
 * Whether a request is of the 2025 era (served by a legacy session), told as the SDK's
 * `isLegacyRequest` tells it — its own `classifyInboundRequest` of the method, the
 * `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers and the parsed body — but read from
 * the node:http request as it is, where `isLegacyRequest` needs a web `Request` built for it (a copy
 * of every header, per request). A request other than POST is legacy; a POST always has a body
 * here (an empty or unparsable one was refused before).
 */
export function isLegacy(req: IncomingMessage, body: unknown): boolean {
  if (req.method !== 'POST') return true;
  return (
    classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: header(req, 'mcp-protocol-version'),
      mcpMethodHeader: header(req, 'mcp-method'),
      mcpNameHeader: header(req, 'mcp-name'),
      body,
    }).kind === 'legacy'
  );
}

/**
 * The API's answer as a tool result: a 2xx is a success (its body as text, an image or a resource,
 * and `structuredContent` fitted to the tool's output schema), any other status an `isError` result
 * with the status line and the body, a failed request (timeout, cancellation, network error) an
 * `isError` result saying what happened — never the URL's query, which may hold secrets.
 * operation-call.ts sends the request and hands the response here.
 */

import { STATUS_CODES } from 'node:http';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { errorResult } from '../core/error-result.js';
import { isPlainObject } from '../core/json-shapes.js';
import { log } from '../core/log.js';
import { mediaType } from '../core/media-type.js';
import type { OperationTool } from '../core/types.js';
import type { Settings } from '../process/settings.js';
import { SOCKET_ORIGIN, settingsVariables } from '../process/settings.js';
import { conformOutput, validateOutput } from '../validation/validate.js';
import { measureArguments } from './argument-limits.js';
import type { BoundedBody } from './body.js';
import { bodyKind, decodeText, truncationNote } from './body.js';
import type { BuiltRequest } from './request.js';
import { getProjector, policyFor, shapeResult } from './results.js';

/** What of the call a success result is shaped with: its arguments (paging), the projection expression, and where the whole of a cut result is kept. */
export type ResponseCall = {
  readonly args: Record<string, unknown>;
  readonly projection?: string;
  /** Keeps the whole of a result that had to be cut (JSON text); its URI, or `undefined` when it cannot be kept. */
  readonly keep?: (tool: string, text: string) => string | undefined;
};

/** `host` and `path` of a URL (never its query, which may hold secrets). */
export function requestTarget(url: string): { host: string; path: string; noQuery: string } {
  try {
    const u = new URL(url);
    return { host: u.host, path: u.pathname, noQuery: `${u.origin}${u.pathname}` };
  } catch {
    const noQuery = url.replace(/[?#].*$/s, '');
    return { host: noQuery, path: '', noQuery };
  }
}

/** Finds an error code (`ECONNREFUSED`, `UND_ERR_…`) in an error's cause chain. */
function errorCode(err: unknown): { code?: string; message?: string } {
  let cur: unknown = err;
  for (let depth = 0; depth < 6 && cur instanceof Error; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return { code, message: cur.message };
    if (cur instanceof AggregateError && cur.errors.length > 0) cur = cur.errors[0];
    else cur = cur.cause;
  }
  return err instanceof Error ? { message: (err.cause instanceof Error ? err.cause : err).message } : {};
}

/** Replaces the full URL and its query in `text` with the query-less URL. */
function redact(text: string, req: BuiltRequest): string {
  let out = text.split(req.url).join(requestTarget(req.url).noQuery);
  const search = /\?[^#]*/.exec(req.url)?.[0];
  if (search !== undefined && search.length > 1) out = out.split(search).join('?…');
  return out;
}

/** Text of the `HTTP <status> <text>` line. */
export function statusLine(response: Response): string {
  return `HTTP ${response.status} ${response.statusText || STATUS_CODES[response.status] || ''}`.trimEnd();
}

/** Name of a settings variable for messages. */
export function settingVariable(settings: Settings, which: 'baseUrl' | 'maxResponseBytes' | 'timeoutMs'): string {
  return settings.envPrefix !== undefined ? settingsVariables(settings.envPrefix)[which] : `the ${which} setting`;
}

/** Body as readable text (binary bodies are described, not shown), with the truncation marker. */
function bodyText(body: BoundedBody, contentType: string | null): string {
  const kind = bodyKind(contentType, body.bytes);
  const text =
    kind === 'json' || kind === 'text'
      ? decodeText(body.bytes, contentType, body.truncated)
      : `[${body.totalBytes ?? body.bytes.byteLength} bytes of ${contentType ?? 'binary data'}]`;
  return body.truncated && (kind === 'json' || kind === 'text') ? `${text}\n${truncationNote(body)}` : text;
}

/**
 * Converts a 2xx response. A 2xx is a success: its body goes back as text (or as an image or
 * resource), plus `structuredContent` when the tool publishes an output schema — the JSON object
 * itself, or `{status, data}` for tools whose results are not always objects. Under a lenient
 * schema a body that drifts from the spec is never an error: the values the schema does not
 * accept are `null` in `structuredContent` (logged at debug level) and complete in the text.
 * Only `strict` tools (`outputSchemas: strict`) report a mismatch, as an `isError` result that
 * still carries the data and says why — the SDK client rejects a result without matching
 * `structuredContent` otherwise, and the data must never be hidden; their bodies are not shaped.
 */
function successResult(tool: OperationTool, req: BuiltRequest, response: Response, body: BoundedBody, settings: Settings, call: ResponseCall): CallToolResult {
  const strict = tool.strictOutput === true && tool.outputSchema !== undefined;
  const contentType = response.headers.get('content-type');
  const wrapped = tool.resultShape === 'wrapped';
  const withSchema = tool.outputSchema !== undefined;
  const status = response.status;
  /** `content` plus the structured form of `data` (absent: the body has no JSON value), with the next call's arguments when the API pages. */
  const result = (content: CallToolResult['content'], data?: { value: unknown }, next?: Record<string, unknown>): CallToolResult => {
    if (!withSchema) return { content };
    if (wrapped)
      return {
        content,
        structuredContent: { ...structured(tool, data === undefined ? { status } : { status, data: data.value }), ...(next !== undefined ? { next } : {}) },
      };
    if (data !== undefined && isPlainObject(data.value)) {
      const value = structured(tool, data.value);
      return { content, structuredContent: next !== undefined && !Object.hasOwn(value, 'next') ? { ...value, next } : value };
    }
    log('debug', `tool ${tool.name}: the ${status} response is not a JSON object; structuredContent is empty, the body is in the text`);
    return { content, structuredContent: {} };
  };
  /** A strict tool's result that does not fit its output schema: the data, and why. */
  const problem = (text: string, note: string): CallToolResult => errorResult(`${text}\n\n[note: ${note}]`);
  // (named only when needed: building the variable's name per call costs a measurable share of a call's CPU)
  const raise = (): string => `; raise ${settingVariable(settings, 'maxResponseBytes')} to receive it`;

  if (body.bytes.byteLength === 0 && !body.truncated) {
    const line = status === 204 ? statusLine(response) : `${statusLine(response)} (empty body)`;
    return strict ? problem(line, 'the tool declares an output schema but the response has no body') : result([{ type: 'text', text: line }]);
  }
  const kind = bodyKind(contentType, body.bytes);
  if (kind === 'json' || kind === 'text') {
    const text = bodyText(body, contentType);
    if (strict && kind === 'text') return problem(text, 'the response is not JSON, so it has no structured content');
    if (strict && body.truncated) return problem(text, `the response exceeds the limit of ${settings.maxResponseBytes} bytes, so it was not parsed${raise()}`);
    if (kind === 'text' || body.truncated) return result([{ type: 'text', text }]);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      if (strict) return problem(text, 'the response is not valid JSON, so it cannot be checked against the output schema');
      log('debug', `tool ${tool.name}: the ${status} response is not valid JSON; it is returned as text`);
      return result([{ type: 'text', text }]);
    }
    if (strict) return strictResult(tool, text, parsed, problem);
    if (call.projection !== undefined && tool.projection !== undefined) {
      const arg = tool.projection.arg;
      try {
        parsed = getProjector()!.apply(call.projection, parsed);
      } catch (err) {
        return errorResult(
          `${statusLine(response)}, but the ${arg} expression failed on the response: ${err instanceof Error ? err.message : String(err)}. Call ${tool.name} again with another ${arg}, or without it for the whole result.`,
        );
      }
      if (!measureArguments(parsed, 2 * settings.maxResponseBytes, 10_000).fits) {
        return errorResult(
          `${statusLine(response)}, but what the ${arg} expression selects is over ${2 * settings.maxResponseBytes} bytes as JSON; select less.`,
        );
      }
    }
    const keep = call.keep;
    const shaped = shapeResult(
      tool,
      parsed,
      policyFor(tool, settings.results),
      call.args,
      response.headers.get('link'),
      keep ? (whole) => keep(tool.name, JSON.stringify(whole)) : undefined,
    );
    const json = JSON.stringify(shaped.value) ?? 'null';
    const content: CallToolResult['content'] = [{ type: 'text', text: shaped.note?.text !== undefined ? `${json}\n${shaped.note.text}` : json }];
    if (shaped.link !== undefined)
      content.push({
        type: 'resource_link',
        uri: shaped.link,
        name: `${tool.name} result`,
        mimeType: 'application/json',
        description: `The whole result of this ${tool.name} call, cut above to fit the token budget`,
      });
    return result(content, { value: shaped.value }, shaped.note?.next);
  }
  const mimeType = mediaType(contentType) || 'application/octet-stream';
  if (body.truncated) {
    return errorResult(
      `${statusLine(response)}: the ${mimeType} response is larger than the limit of ${settings.maxResponseBytes} bytes (${truncationNote(body)})${raise()}`,
    );
  }
  const data = Buffer.from(body.bytes).toString('base64');
  const content: CallToolResult['content'] =
    kind === 'image' ? [{ type: 'image', data, mimeType }] : [{ type: 'resource', resource: { uri: requestTarget(req.url).noQuery, mimeType, blob: data } }];
  return strict
    ? { content: [...content, { type: 'text', text: `[note: the tool declares an output schema but the response is ${mimeType}]` }], isError: true }
    : result(content);
}

/** A strict tool's parsed JSON body: its `structuredContent` when it is an object its output schema accepts, else a {@link successResult} problem. */
function strictResult(tool: OperationTool, text: string, parsed: unknown, problem: (text: string, note: string) => CallToolResult): CallToolResult {
  if (!isPlainObject(parsed)) return problem(text, 'the response is not a JSON object, as the output schema requires');
  let mismatches: string[];
  try {
    mismatches = validateOutput(tool, parsed);
  } catch (err) {
    return problem(text, err instanceof Error ? err.message : String(err));
  }
  if (mismatches.length > 0) return problem(text, `the response does not match the tool's output schema:\n${mismatches.map((m) => `- ${m}`).join('\n')}`);
  return { content: [{ type: 'text', text }], structuredContent: parsed };
}

/** `value` made to fit the tool's lenient output schema (see `conformOutput`); `{}` when nothing fits. */
function structured(tool: OperationTool, value: Record<string, unknown>): Record<string, unknown> {
  let fitted: ReturnType<typeof conformOutput>;
  try {
    fitted = conformOutput(tool, value);
  } catch (err) {
    log('warn', `tool ${tool.name}: cannot check the result against its output schema`, err);
    return {};
  }
  if (fitted === undefined) {
    log('debug', `tool ${tool.name}: the response does not fit the output schema; structuredContent is empty, the body is in the text`);
    return {};
  }
  if (fitted.nulled.length > 0) log('debug', `tool ${tool.name}: the response differs from the spec; null in structuredContent at ${fitted.nulled.join(', ')}`);
  return fitted.value;
}

/** Describes a failed fetch (timeout, cancellation, network error) without the URL's query. */
export function failureText(err: unknown, req: BuiltRequest, settings: Settings, timeout: { readonly aborted: boolean }, caller?: AbortSignal): string {
  const { host: urlHost, path } = requestTarget(req.url);
  // over a unix socket the URL's host is a placeholder: name the socket instead
  const host = settings.socketPath !== undefined && req.url.startsWith(`${SOCKET_ORIGIN}/`) ? `unix socket ${settings.socketPath}` : urlHost;
  const where = `(${req.method} ${path})`;
  if (caller?.aborted) return `Request to ${host} was cancelled ${where}`;
  if (timeout.aborted)
    return `Request to ${host} timed out after ${settings.timeoutMs} ms ${where}; raise ${settingVariable(settings, 'timeoutMs')} if the API is slow`;
  const { code, message } = errorCode(err);
  const detail = message ? redact(message, req) : 'unknown error';
  return `Request to ${host} failed ${where}: ${code ? `${code} (${detail})` : detail}`;
}

/**
 * The result of the API's `response` (its body read, within bounds, into `body`) to request `req`:
 * a non-2xx is an `isError` result with the status line and the body; a long-running operation
 * that ended as failed (`failedAs`, its final status) is one too; a 2xx is {@link successResult}.
 */
export function responseResult(
  tool: OperationTool,
  req: BuiltRequest,
  response: Response,
  body: BoundedBody,
  settings: Settings,
  call: ResponseCall,
  failedAs?: string,
): CallToolResult {
  if (!response.ok) {
    const text =
      body.bytes.byteLength > 0 || body.truncated ? `${statusLine(response)}\n${bodyText(body, response.headers.get('content-type'))}` : statusLine(response);
    return errorResult(text);
  }
  if (failedAs !== undefined) return errorResult(`The API's operation ended with status ${failedAs}:\n${bodyText(body, response.headers.get('content-type'))}`);
  return successResult(tool, req, response, body, settings, call);
}

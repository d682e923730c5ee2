/**
 * Executes one tool call: validate the arguments, build and send the HTTP request, and turn
 * the response (or the failure) into a `CallToolResult`. Every expected failure becomes an
 * `isError` result the model can read; nothing here throws for bad input or a broken network.
 */

import { STATUS_CODES } from 'node:http';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { errorResult } from '../core/error-result.js';
import { isPlainObject } from '../core/json-shapes.js';
import { log, logsAt } from '../core/log.js';
import type { OperationTool } from '../core/types.js';
import type { Settings } from '../process/settings.js';
import { SOCKET_ORIGIN, settingsVariables } from '../process/settings.js';
import { DEFAULT_MAX_IN_FLIGHT_BYTES } from '../process/variables.js';
import { conformOutput, validateOutput } from '../validation/validate.js';
import { measureArguments } from './argument-limits.js';
import type { ArgumentEnv } from './arguments.js';
import { fillArguments } from './arguments.js';
import type { ApplyContext } from './auth.js';
import { AuthError, Authenticator, scrub } from './auth.js';
import type { BoundedBody } from './body.js';
import { bodyKind, decodeText, readBounded, truncationNote } from './body.js';
import { InFlightBudget, InFlightLimitError, InFlightShare, SMALL_BODY_BYTES } from './in-flight.js';
import type { BuiltRequest } from './request.js';
import { buildRequest, RequestBuildError } from './request.js';
import { boundResult } from './result-size.js';
import { getProjector, policyFor, shapeResult } from './results.js';
import type { SendOptions } from './send.js';
import { send } from './send.js';
import { socketFetch } from './socket.js';
import type { PollSend } from './tasks-poll.js';
import { awaitOperation, PollError, pollUrl } from './tasks-poll.js';
import { resolveUploads } from './uploads.js';

/** Options of `callOperation`. */
export type CallOptions = {
  /** The fetch implementation (default: global `fetch`). */
  fetch?: typeof fetch;
  /** Aborts the request, e.g. when the client cancels the call. */
  signal?: AbortSignal;
  /**
   * Credentials of the server (one instance per server, so OAuth tokens are shared). Without
   * it, tools that need credentials are refused as not configured.
   */
  auth?: Authenticator;
  /**
   * Values of the variables hidden arguments are read from, read once at start-up. Without it,
   * tools with such arguments are refused as not configured.
   */
  argumentEnv?: ArgumentEnv;
  /**
   * The memory budget of response bodies shared by all calls of the server. Without it, the call
   * has a budget of its own of `settings.maxInFlightBytes`.
   */
  inFlight?: InFlightBudget;
  /**
   * Headers of the MCP request (over HTTP): a security scheme with `fromClient` takes its
   * credential from the named header. Nothing else of them ever reaches the API.
   */
  clientHeaders?: { get(name: string): string | null };
  /** Over HTTP with an OAuth access token: exchanges it for an API token (schemes with `exchange`, auth.ts). */
  exchange?: ApplyContext['exchange'];
  /** Keeps the whole of a result that had to be cut (JSON text) for this call's client; its URI, or `undefined` when it cannot be kept. */
  keepResult?: (tool: string, text: string) => string | undefined;
  /**
   * Told the HTTP status of the API's response the moment its headers arrive, before its body is
   * read: a call that a step ends early (the limits' timeout) still has the status it got.
   */
  onStatus?: (status: number) => void;
};

/** The authenticator of calls made without one: it knows no scheme. */
const NO_AUTH = new Authenticator([], {});

/** `host` and `path` of a URL (never its query, which may hold secrets). */
function target(url: string): { host: string; path: string; noQuery: string } {
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
  let out = text.split(req.url).join(target(req.url).noQuery);
  const search = /\?[^#]*/.exec(req.url)?.[0];
  if (search !== undefined && search.length > 1) out = out.split(search).join('?…');
  return out;
}

/** Text of the `HTTP <status> <text>` line. */
function statusLine(response: Response): string {
  return `HTTP ${response.status} ${response.statusText || STATUS_CODES[response.status] || ''}`.trimEnd();
}

/** Name of a settings variable for messages. */
function variable(settings: Settings, which: 'baseUrl' | 'maxResponseBytes' | 'timeoutMs'): string {
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
function successResult(
  tool: OperationTool,
  req: BuiltRequest,
  response: Response,
  body: BoundedBody,
  settings: Settings,
  call: { args: Record<string, unknown>; projection?: string; keep?: CallOptions['keepResult'] },
): CallToolResult {
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
  const raise = (): string => `; raise ${variable(settings, 'maxResponseBytes')} to receive it`;

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
  const mimeType = (contentType ?? 'application/octet-stream').split(';')[0]!.trim() || 'application/octet-stream';
  if (body.truncated) {
    return errorResult(
      `${statusLine(response)}: the ${mimeType} response is larger than the limit of ${settings.maxResponseBytes} bytes (${truncationNote(body)})${raise()}`,
    );
  }
  const data = Buffer.from(body.bytes).toString('base64');
  const content: CallToolResult['content'] =
    kind === 'image' ? [{ type: 'image', data, mimeType }] : [{ type: 'resource', resource: { uri: target(req.url).noQuery, mimeType, blob: data } }];
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

/** setTimeout's longest delay; a longer one fires at once (as AbortSignal.timeout's does). */
const TIMEOUT_MAX = 2 ** 31 - 1;

/** The signal of one API request: aborted after `ms` or when `caller` is; `clear()` once the call is over. */
type Deadline = { readonly signal: AbortSignal; readonly timeout: { readonly aborted: boolean }; clear(): void };

/**
 * A {@link Deadline}: the same signal as `AbortSignal.any([caller, AbortSignal.timeout(ms)])` (the
 * reason is the caller's, or a `TimeoutError` DOMException), made of one controller and one timer
 * that `clear()` stops: a fraction of the cost per call, and no timer left behind.
 */
function deadline(ms: number, caller?: AbortSignal): Deadline {
  if (ms > TIMEOUT_MAX) {
    const timeout = AbortSignal.timeout(ms);
    return { signal: caller ? AbortSignal.any([caller, timeout]) : timeout, timeout, clear: () => undefined };
  }
  const controller = new AbortController();
  const timeout = { aborted: false };
  if (caller?.aborted) {
    controller.abort(caller.reason);
    return { signal: controller.signal, timeout, clear: () => undefined };
  }
  const onAbort = (): void => controller.abort(caller!.reason);
  caller?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    timeout.aborted = true;
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, ms);
  timer.unref();
  return {
    signal: controller.signal,
    timeout,
    clear: () => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    },
  };
}

/** A body refused by the in-flight budget; `message` describes the request that was sent. */
class InFlightRefusal extends Error {}

/** Describes a failed fetch (timeout, cancellation, network error) without the URL's query. */
function failureText(err: unknown, req: BuiltRequest, settings: Settings, timeout: { readonly aborted: boolean }, caller?: AbortSignal): string {
  const { host: urlHost, path } = target(req.url);
  // over a unix socket the URL's host is a placeholder: name the socket instead
  const host = settings.socketPath !== undefined && req.url.startsWith(`${SOCKET_ORIGIN}/`) ? `unix socket ${settings.socketPath}` : urlHost;
  const where = `(${req.method} ${path})`;
  if (caller?.aborted) return `Request to ${host} was cancelled ${where}`;
  if (timeout.aborted)
    return `Request to ${host} timed out after ${settings.timeoutMs} ms ${where}; raise ${variable(settings, 'timeoutMs')} if the API is slow`;
  const { code, message } = errorCode(err);
  const detail = message ? redact(message, req) : 'unknown error';
  return `Request to ${host} failed ${where}: ${code ? `${code} (${detail})` : detail}`;
}

/** `result` with every secret removed from its text when it is an error (success data is the API's answer, kept as is). */
function scrubbed(result: CallToolResult, secrets: readonly string[]): CallToolResult {
  if (!result.isError || secrets.length === 0) return result;
  return { ...result, content: result.content.map((c) => (c.type === 'text' ? { ...c, text: scrub(c.text, secrets) } : c)) };
}

/**
 * Runs tool `tool` with `args`, which the server's pipeline has validated against the tool's input
 * schema (pipeline.ts checkArguments; validation happens there only): picks its credentials (missing ⇒ `isError` naming the variables, no request
 * sent), sends the request within `settings.timeoutMs` (combined with `opts.signal`), reads at
 * most `settings.maxResponseBytes` and returns the response as MCP content.
 */
export async function callOperation(tool: OperationTool, args: Record<string, unknown>, settings: Settings, opts: CallOptions = {}): Promise<CallToolResult> {
  return (await sendOperation(tool, args, settings, opts)).result;
}

/** What an operation call gave: its result, and the HTTP status of the API's response when one arrived. */
export type OperationOutcome = { readonly result: CallToolResult; readonly status?: number };

/**
 * {@link callOperation}, returning the HTTP status of the API's response too (for the audit trail and
 * spans); `opts.onStatus` hears it as soon as the response's headers arrive.
 */
export async function sendOperation(tool: OperationTool, args: Record<string, unknown>, settings: Settings, opts: CallOptions = {}): Promise<OperationOutcome> {
  const secrets: string[] = [];
  const budget = opts.inFlight ?? new InFlightBudget(settings.maxInFlightBytes ?? DEFAULT_MAX_IN_FLIGHT_BYTES);
  const share = new InFlightShare(budget);
  const seen: { httpStatus?: number } = {};
  try {
    const result = await run(tool, args, settings, { ...opts, inFlight: budget }, secrets, share, seen);
    // what goes on the wire is bounded too: the body's bytes can grow when they are encoded
    const fallback =
      tool.strictOutput === true && tool.outputSchema !== undefined
        ? ({ kind: 'strict' } as const)
        : ({ kind: 'minimal', wrapped: tool.resultShape === 'wrapped' } as const);
    const bounded = await budget.turn(() => boundResult(scrubbed(result, secrets), settings.maxResponseBytes, fallback), share.bytes <= SMALL_BODY_BYTES);
    return seen.httpStatus !== undefined ? { result: bounded, status: seen.httpStatus } : { result: bounded };
  } finally {
    share.release();
  }
}

/** Whether an answer starts a long-running operation: `202` naming a status URL, or `200`/`201` with `Operation-Location` / `Azure-AsyncOperation` (a plain `Location` there is just the created resource). */
function longRunningAnswer(response: Response, requestUrl: string): boolean {
  if (response.status === 202) return pollUrl(response, requestUrl) !== undefined;
  return (response.status === 200 || response.status === 201) && (response.headers.has('operation-location') || response.headers.has('azure-asyncoperation'));
}

/** Why a call was refused for memory, naming the limit and its variable. */
function inFlightText(tool: OperationTool, settings: Settings, budget: InFlightBudget, sent: string | undefined): string {
  const limit = `maxInFlightBytes, ${budget.limit} bytes${settings.envPrefix !== undefined ? `, ${settingsVariables(settings.envPrefix).maxInFlightBytes}` : ''}`;
  const held = `the server holds ${budget.held} bytes of responses of other calls`;
  if (sent === undefined) {
    return `Tool ${tool.name} was not run: ${held}, and one more response of up to ${settings.maxResponseBytes} bytes would exceed the memory limit for responses in flight (${limit}). Nothing was sent; retry when fewer calls are running.`;
  }
  return `Tool ${tool.name}: the request was sent (${sent}), but its response was not read: ${held}, and it would exceed the memory limit for responses in flight (${limit}). Retry when fewer calls are running.`;
}

/** {@link callOperation}; `secrets` collects the credential values sent, to scrub the result, `seen` the HTTP status of the response once it arrives. */
async function run(
  tool: OperationTool,
  args: Record<string, unknown>,
  settings: Settings,
  opts: CallOptions & { inFlight: InFlightBudget },
  secrets: string[],
  share: InFlightShare,
  seen: { httpStatus?: number },
): Promise<CallToolResult> {
  if (settings.baseUrl === undefined) {
    return errorResult(
      `Tool ${tool.name} cannot run: no API base URL is configured. Set the environment variable ${variable(settings, 'baseUrl')} to the API's URL (e.g. https://api.example.com).`,
    );
  }

  // the projection argument is the server's, never the API's: taken out, and checked before anything is sent
  let callArgs = args;
  let projection: string | undefined;
  if (tool.projection !== undefined && Object.hasOwn(callArgs, tool.projection.arg)) {
    const { [tool.projection.arg]: expression, ...rest } = callArgs;
    callArgs = rest;
    if (expression !== undefined && expression !== null && expression !== '') {
      const projector = getProjector();
      const why =
        typeof expression !== 'string'
          ? 'it must be a string'
          : projector === undefined
            ? 'projection is not available in this server'
            : projector.check(expression);
      if (why !== undefined)
        return errorResult(`Invalid arguments for tool ${tool.name}: ${tool.projection.arg} is not a usable JMESPath expression: ${why}. Nothing was sent.`);
      projection = expression as string;
    }
  }
  const filled = fillArguments(tool.http, callArgs, opts.argumentEnv ?? new Map());
  if (!filled.ok)
    return errorResult(
      filled.invalid
        ? `Invalid arguments for tool ${tool.name}: ${filled.message}`
        : `Tool ${tool.name} cannot run: ${filled.message}, then restart the server.`,
    );
  secrets.push(...filled.secrets);

  const auth = opts.auth ?? NO_AUTH;
  const selection = auth.select(tool.security, opts.clientHeaders, opts.exchange !== undefined);
  if (!selection.ok) return errorResult(`Tool ${tool.name} cannot run: ${selection.message}, then restart the server.`);

  let req: BuiltRequest;
  try {
    const withFiles = await resolveUploads(tool.http, filled.args, settings);
    req = buildRequest(tool.http, withFiles, settings.baseUrl);
  } catch (err) {
    if (err instanceof RequestBuildError) return errorResult(`Invalid arguments for tool ${tool.name}: ${err.message}`);
    log('error', `cannot build request for ${tool.name}`, err);
    return errorResult(`Tool ${tool.name} cannot build its request: ${err instanceof Error ? err.message : String(err)}`);
  }

  // refused before anything is sent while the bodies held leave no room for one more
  if (!opts.inFlight.fits(settings.maxResponseBytes)) return errorResult(inFlightText(tool, settings, opts.inFlight, undefined));

  const { signal, timeout, clear } = deadline(settings.timeoutMs, opts.signal);
  const doFetch = opts.fetch ?? (settings.socketPath !== undefined ? socketFetch(settings.socketPath) : fetch);
  const started = Date.now();
  const sendOptions: SendOptions = {
    signal,
    auth,
    fetch: doFetch,
    timeoutMs: settings.timeoutMs,
    baseUrl: settings.baseUrl,
    // credentials of `fromClient` schemes come from these headers of the MCP request
    ...(opts.clientHeaders ? { clientHeaders: opts.clientHeaders } : {}),
    // an `exchange` scheme's token: exchanged for the call's OAuth access token, which itself never reaches the API
    ...(opts.exchange ? { exchange: opts.exchange } : {}),
    // values of hidden arguments from the environment: never carried to another origin
    secrets: filled.secrets,
    // messages describe the request as sent, and never show the credentials in it
    onApplied: (applied) => {
      req = applied.request;
      secrets.push(...applied.secrets);
    },
  };
  try {
    let response = await send(req, selection.schemes, sendOptions);
    // a long-running operation (tasks-poll.ts): its status URL is polled, with the same credentials, until it ends
    let failedAs: string | undefined;
    if (tool.longRunning !== undefined && longRunningAnswer(response, req.url)) {
      clear(); // each poll has its own deadline
      const pollSend: PollSend = (method, url, pollSignal) =>
        send({ method, url, headers: { accept: 'application/json' } }, selection.schemes, {
          ...sendOptions,
          signal: pollSignal,
          onApplied: (applied) => void secrets.push(...applied.secrets),
        });
      try {
        const end = await awaitOperation(response, req.url, {
          send: pollSend,
          signal: opts.signal ?? new AbortController().signal,
          baseUrl: settings.baseUrl,
          longRunning: tool.longRunning,
          timeoutMs: settings.timeoutMs,
        });
        response = end.response;
        failedAs = end.failed;
      } catch (err) {
        if (err instanceof PollError) return errorResult(`Tool ${tool.name}: ${err.message}`);
        throw err;
      }
    }
    seen.httpStatus = response.status;
    opts.onStatus?.(response.status);
    const body = await readBounded(response, settings.maxResponseBytes, share).catch((err: unknown) => {
      if (err instanceof InFlightLimitError) throw new InFlightRefusal(`${req.method} ${target(req.url).path}, ${statusLine(response)}`);
      throw err;
    });
    if (logsAt('debug')) {
      const { host, path } = target(req.url);
      // a hidden argument may be a path parameter: its value never reaches the log
      log('debug', 'tool call', {
        tool: tool.name,
        method: req.method,
        host,
        path: scrub(path, secrets),
        status: response.status,
        bytes: body.seenBytes,
        ms: Date.now() - started,
      });
    }
    // decoding, parsing and checking a large body takes a while: one call at a time
    const sent = req;
    return await opts.inFlight.turn(
      () => {
        if (!response.ok) {
          const text =
            body.bytes.byteLength > 0 || body.truncated
              ? `${statusLine(response)}\n${bodyText(body, response.headers.get('content-type'))}`
              : statusLine(response);
          return errorResult(text);
        }
        if (failedAs !== undefined)
          return errorResult(`The API's operation ended with status ${failedAs}:\n${bodyText(body, response.headers.get('content-type'))}`);
        return successResult(tool, sent, response, body, settings, {
          args: callArgs,
          ...(projection !== undefined ? { projection } : {}),
          ...(opts.keepResult ? { keep: opts.keepResult } : {}),
        });
      },
      body.bytes.byteLength <= SMALL_BODY_BYTES && !body.truncated,
    );
  } catch (err) {
    if (err instanceof InFlightRefusal) return errorResult(inFlightText(tool, settings, opts.inFlight, err.message));
    if (err instanceof AuthError) {
      const text = scrub(`Tool ${tool.name} cannot authenticate: ${err.message}`, secrets);
      log('warn', text);
      return errorResult(text);
    }
    const text = scrub(failureText(err, req, settings, timeout, opts.signal), secrets);
    log('warn', `tool ${tool.name}: ${text}`);
    return errorResult(text);
  } finally {
    clear();
  }
}

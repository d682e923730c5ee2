/**
 * Runs one operation tool: fills its arguments (hidden ones from the environment, the projection
 * taken out), picks its credentials, builds and sends the HTTP request within the time and memory
 * bounds (following a long-running operation to its end), reads the response and hands it to
 * response-result.ts to become the `CallToolResult`. Every expected failure becomes an `isError`
 * result the model can read; nothing here throws for bad input or a broken network.
 */

import type { CallToolResult } from '@modelcontextprotocol/server';
import { errorResult } from '../core/error-result.js';
import { log, logsAt } from '../core/log.js';
import type { OperationTool } from '../core/types.js';
import type { Settings } from '../process/settings.js';
import { settingsVariables } from '../process/settings.js';
import { DEFAULT_MAX_IN_FLIGHT_BYTES } from '../process/variables.js';
import type { ArgumentEnv } from './arguments.js';
import { fillArguments } from './arguments.js';
import type { ApplyContext } from './auth.js';
import { AuthError, Authenticator, scrub } from './auth.js';
import { readBounded } from './body.js';
import { InFlightBudget, InFlightLimitError, InFlightShare, SMALL_BODY_BYTES } from './in-flight.js';
import type { BuiltRequest } from './request.js';
import { buildRequest, RequestBuildError } from './request.js';
import type { ResponseCall } from './response-result.js';
import { failureText, requestTarget, responseResult, settingVariable, statusLine } from './response-result.js';
import { boundResult } from './result-size.js';
import { getProjector } from './results.js';
import type { SendOptions } from './send.js';
import { deadline, send } from './send.js';
import { socketFetch } from './socket.js';
import type { PollSend } from './tasks-poll.js';
import { awaitOperation, PollError, pollUrl } from './tasks-poll.js';
import { resolveUploads } from './uploads.js';

/** Options of {@link sendOperation}. */
export type CallOptions = {
  /** The fetch implementation (default: global `fetch`). */
  fetch?: typeof fetch;
  /** Told each time a request of the call is handed to fetch unaborted (code mode marks its call as sent: its outcome is unknown if the run stops it after). */
  onSend?: () => void;
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
  keepResult?: ResponseCall['keep'];
  /**
   * Told the HTTP status of the API's response the moment its headers arrive, before its body is
   * read: a call that a step ends early (the limits' timeout) still has the status it got.
   */
  onStatus?: (status: number) => void;
};

/** The authenticator of calls made without one: it knows no scheme. */
const NO_AUTH = new Authenticator([], {});

/** A body refused by the in-flight budget; `message` describes the request that was sent. */
class InFlightRefusal extends Error {}

/** `result` with every secret removed from its text when it is an error (success data is the API's answer, kept as is). */
function scrubbed(result: CallToolResult, secrets: readonly string[]): CallToolResult {
  if (!result.isError || secrets.length === 0) return result;
  return { ...result, content: result.content.map((c) => (c.type === 'text' ? { ...c, text: scrub(c.text, secrets) } : c)) };
}

/** What an operation call gave: its result, and the HTTP status of the API's response when one arrived. */
export type OperationOutcome = { readonly result: CallToolResult; readonly status?: number };

/**
 * Runs tool `tool` with `args`, which the server's pipeline has validated against the tool's input
 * schema (pipeline.ts checkArguments; validation happens there only): picks its credentials
 * (missing ⇒ `isError` naming the variables, no request sent), sends the request within
 * `settings.timeoutMs` (combined with `opts.signal`), reads at most `settings.maxResponseBytes` and
 * returns the response as MCP content, with the HTTP status of the API's response when one arrived
 * (for the audit trail and spans; `opts.onStatus` hears it as soon as the response's headers arrive).
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

/** {@link sendOperation}'s call; `secrets` collects the credential values sent, to scrub the result, `seen` the HTTP status of the response once it arrives. */
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
      `Tool ${tool.name} cannot run: no API base URL is configured. Set the environment variable ${settingVariable(settings, 'baseUrl')} to the API's URL (e.g. https://api.example.com).`,
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
  const baseFetch = opts.fetch ?? (settings.socketPath !== undefined ? socketFetch(settings.socketPath) : fetch);
  const onSend = opts.onSend;
  const doFetch: typeof fetch = onSend
    ? (input, init) => {
        if (!signal.aborted) onSend();
        return baseFetch(input, init);
      }
    : baseFetch;
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
      if (err instanceof InFlightLimitError) throw new InFlightRefusal(`${req.method} ${requestTarget(req.url).path}, ${statusLine(response)}`);
      throw err;
    });
    if (logsAt('debug')) {
      const { host, path } = requestTarget(req.url);
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
        const call: ResponseCall = {
          args: callArgs,
          ...(projection !== undefined ? { projection } : {}),
          ...(opts.keepResult ? { keep: opts.keepResult } : {}),
        };
        return responseResult(tool, sent, response, body, settings, call, failedAs);
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

/**
 * Waiting for an API's long-running operation: the first response accepted the work (`202` with
 * `Operation-Location`, `Azure-AsyncOperation` or `Location`) and the server polls that URL until
 * the operation ends, then hands the final response to operation-call.ts as if the API had answered it at
 * once.
 *
 * - The poll URL is resolved against the URL of the request that answered (RFC 9110), and must be
 *   of the same origin: the credentials go with every poll, so another origin is refused (a
 *   redirect-like hazard), never polled.
 * - The interval is the response's `Retry-After` (seconds or an HTTP date), else a backoff from
 *   1 s doubling to 30 s; never under 100 ms.
 * - A poll answer is running while it is `202`, or a 2xx JSON body whose `status` (any case: Azure
 *   says `Succeeded`) is a running word (`running`, `InProgress`, `NotStarted`, `pending`…); a
 *   succeeded status or a body without one ends the operation with that body; a failed or cancelled
 *   status ends it as an error; any other HTTP status is the final (error) answer.
 * - Cancelling (the call's signal aborts: `tasks/cancel`, or the client cancelling the request)
 *   stops polling, and, when the API declares `DELETE` on the poll URL's path (`cancelPaths`, from
 *   the spec), sends that `DELETE` so the API stops the work too.
 * - Polling has an overall deadline: `deadlineMs` after it starts (default 15 minutes, the default
 *   task ttl; a task's own ttl aborts it sooner) no further poll is sent — a {@link PollError} says
 *   so, after the cancelling `DELETE` when the API declares one.
 *
 * This file is copied verbatim into every generated project.
 */
import { log } from '../core/log.js';

/** What the build knows of a long-running operation (types.ts `OperationTool.longRunning`). */
export type LongRunning = {
  /** Path templates (relative to the API base URL) the API declares `DELETE` on: a poll URL matching one is cancelled with a `DELETE`. */
  readonly cancelPaths?: readonly string[];
};

/** How the poller reaches the API: a request with the tool's credentials, under `signal`. */
export type PollSend = (method: 'GET' | 'DELETE', url: string, signal: AbortSignal) => Promise<Response>;

/** The end of an operation: the response to hand on, and why it failed when its body says so. */
export type OperationEnd = { readonly response: Response; readonly failed?: string };

/** A poll that cannot go on (another origin, no answer, too long). */
export class PollError extends Error {}

const POLL_HEADERS = ['operation-location', 'azure-asyncoperation', 'location'] as const;
const RUNNING = new Set([
  'notstarted',
  'running',
  'inprogress',
  'accepted',
  'pending',
  'queued',
  'working',
  'started',
  'provisioning',
  'creating',
  'updating',
  'deleting',
  'waiting',
]);
const FAILED = new Set(['failed', 'failure', 'error', 'canceled', 'cancelled', 'aborted']);
const MIN_INTERVAL_MS = 100;
const MAX_INTERVAL_MS = 30_000;
/** How long polling goes on at most when the caller sets no deadline (the default task ttl, variables.ts `TASK_DEFAULTS`). */
export const DEFAULT_POLL_DEADLINE_MS = 900_000;
/** Largest poll body read to find its status. */
const MAX_POLL_BODY = 1024 * 1024;

/** The poll URL a response names, resolved against `requestUrl`; undefined when it names none. */
export function pollUrl(response: Response, requestUrl: string): string | undefined {
  for (const name of POLL_HEADERS) {
    const value = response.headers.get(name);
    if (value === null || value.trim() === '') continue;
    try {
      return new URL(value.trim(), requestUrl).href;
    } catch {
      continue;
    }
  }
  return undefined;
}

/** The wait a response asks for (`Retry-After`), else `fallback`, within bounds. */
export function retryAfterMs(response: Response, fallback: number, now = Date.now()): number {
  const raw = response.headers.get('retry-after')?.trim();
  let ms = fallback;
  if (raw !== undefined && raw !== '') {
    if (/^\d+$/.test(raw)) ms = Number(raw) * 1000;
    else if (!Number.isNaN(Date.parse(raw))) ms = Date.parse(raw) - now;
  }
  return Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, ms));
}

/** Whether `url`'s path (under `baseUrl`) matches one of `templates` (`/operations/{id}`). */
export function matchesTemplate(url: string, baseUrl: string, templates: readonly string[]): boolean {
  const base = new URL(baseUrl).pathname.replace(/\/+$/, '');
  const path = new URL(url).pathname;
  if (!path.startsWith(`${base}/`)) return false;
  const rest = path.slice(base.length);
  return templates.some((t) =>
    new RegExp(
      `^${t
        .split(/\{[^}]*\}/)
        .map((s) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
        .join('[^/]+')}/?$`,
    ).test(rest),
  );
}

/** Sleeps `ms`, or rejects when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The body of `response`, read whole (at most {@link MAX_POLL_BODY}), and a copy of the response to hand on. */
async function buffered(response: Response): Promise<{ copy: Response; bytes: Uint8Array }> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes.byteLength > MAX_POLL_BODY) throw new PollError(`the operation's status answer is over ${MAX_POLL_BODY} bytes`);
  // 204/205/304 have no body: keep them without one
  const copy = new Response([101, 204, 205, 304].includes(response.status) ? null : bytes, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  return { copy, bytes };
}

/** The `status` word of a JSON body, lower case without separators; undefined when none. */
function statusWord(bytes: Uint8Array, contentType: string | null): string | undefined {
  if (bytes.byteLength === 0 || (contentType !== null && !/json/i.test(contentType))) return undefined;
  try {
    const body = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    if (typeof body !== 'object' || body === null) return undefined;
    const status = (body as { status?: unknown }).status ?? (body as { state?: unknown }).state;
    return typeof status === 'string' ? status.toLowerCase().replace(/[\s_-]/g, '') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Polls the operation `accepted` started (the answer to a request for `requestUrl`) until it ends,
 * and returns its final answer. Throws {@link PollError} for what cannot be polled, and the
 * signal's reason once cancelled (after the cancelling `DELETE`, when the API declares one).
 */
export async function awaitOperation(
  accepted: Response,
  requestUrl: string,
  opts: { send: PollSend; signal: AbortSignal; baseUrl: string; longRunning: LongRunning; timeoutMs: number; deadlineMs?: number },
): Promise<OperationEnd> {
  let url = pollUrl(accepted, requestUrl);
  if (url === undefined)
    throw new PollError(
      `the API accepted the operation (HTTP ${accepted.status}) but names no URL to follow it (Operation-Location, Azure-AsyncOperation or Location)`,
    );
  const origin = new URL(requestUrl).origin;
  let previous = accepted;
  let fallback = 1000;
  await accepted.body?.cancel().catch(() => undefined);
  const limit = opts.deadlineMs ?? DEFAULT_POLL_DEADLINE_MS;
  const deadline = Date.now() + limit;
  try {
    for (;;) {
      if (new URL(url).origin !== origin)
        throw new PollError(
          `the API named a status URL on another origin (${new URL(url).origin}); it is not polled, since the API's credentials would go with it`,
        );
      const wait = retryAfterMs(previous, fallback);
      if (Date.now() + wait > deadline) {
        await cancelOperation(url, opts);
        throw new PollError(`the API's operation did not end within ${limit} ms of polling ${new URL(url).pathname}; it is no longer followed`);
      }
      await sleep(wait, opts.signal);
      fallback = Math.min(MAX_INTERVAL_MS, fallback * 2);
      const timeout = AbortSignal.timeout(opts.timeoutMs);
      const response = await opts.send('GET', url, AbortSignal.any([opts.signal, timeout]));
      const { copy, bytes } = await buffered(response);
      if (response.status === 202) {
        url = pollUrl(response, url) ?? url;
        previous = copy;
        continue;
      }
      if (!response.ok) return { response: copy };
      const word = statusWord(bytes, response.headers.get('content-type'));
      if (word !== undefined && RUNNING.has(word)) {
        previous = copy;
        continue;
      }
      if (word !== undefined && FAILED.has(word)) return { response: copy, failed: word };
      return { response: copy };
    }
  } catch (err) {
    if (opts.signal.aborted) await cancelOperation(url, opts);
    throw err;
  }
}

/** Sends the cancelling `DELETE` of a poll URL the API declares it on; failures are logged only. */
async function cancelOperation(url: string, opts: { send: PollSend; baseUrl: string; longRunning: LongRunning; timeoutMs: number }): Promise<void> {
  const paths = opts.longRunning.cancelPaths ?? [];
  if (paths.length === 0 || new URL(url).origin !== new URL(opts.baseUrl).origin || !matchesTemplate(url, opts.baseUrl, paths)) return;
  try {
    const response = await opts.send('DELETE', url, AbortSignal.timeout(opts.timeoutMs));
    await response.body?.cancel().catch(() => undefined);
    log('info', `cancelled the API's operation (DELETE ${new URL(url).pathname}: HTTP ${response.status})`);
  } catch (err) {
    log('warn', `could not cancel the API's operation (DELETE ${new URL(url).pathname})`, err);
  }
}

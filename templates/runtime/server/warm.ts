/**
 * Readies, in the background, what the first tool call would otherwise load on its own time:
 * Node's fetch with its HTTP client and response parser (by one request to a throw-away server of
 * this process on 127.0.0.1, closed at once: nothing is sent to the API or anywhere else), and
 * argument validation (loading Ajv, and its code generation).
 * Measured on a 2-core machine: a first request to a loopback API takes ~45 ms cold and ~5 ms
 * after it.
 *
 * It starts once the first `tools/list` answer has been written ({@link listAnswered}), so the
 * list a client waits for when it connects does not wait for it (~0.1 s of CPU with Ajv's
 * loading), or {@link FALLBACK_MS} after start-up when no list comes first. A call sent at once
 * after the list waits for what is left of it (a client's model usually takes longer to decide).
 *
 * This file is copied verbatim into every generated project.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { log } from '../core/log.js';
import { warmUpValidation } from '../validation/validate.js';

/** When the warm-up starts if no `tools/list` was answered before. */
export const FALLBACK_MS = 500;

let armed = false;
let started = false;
let fallback: NodeJS.Timeout | undefined;

/** Arms the warm-up (start-up, with tools to call); never throws, never keeps the process alive. */
export function warmUp(): void {
  armed = true;
  fallback = setTimeout(start, FALLBACK_MS).unref();
}

/**
 * A `tools/list` answer is being handed to the transport: the warm-up starts once it is written
 * (over stdio a long list is still queued on stdout after the handler returns, and the client
 * waits for all of it).
 */
export function listAnswered(): void {
  if (!armed || started) return;
  clearTimeout(fallback);
  setImmediate(() => {
    if (process.stdout.writableLength > 0) process.stdout.once('drain', start);
    else start();
  }).unref();
}

function start(): void {
  if (started) return;
  started = true;
  clearTimeout(fallback);
  try {
    warmUpValidation();
  } catch (err) {
    log('debug', 'warm-up: validation', err);
  }
  const local = createServer((_req, res) => res.end());
  local.unref();
  local.on('error', () => undefined);
  local.listen(0, '127.0.0.1', () => {
    const { port } = local.address() as AddressInfo;
    fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) })
      .then((r) => r.arrayBuffer())
      .catch((err: unknown) => log('debug', 'warm-up: fetch', err))
      .finally(() => {
        local.closeAllConnections();
        local.close();
      });
  });
}

/**
 * The worker thread side of code mode's sandbox (sandbox-host.ts starts it): runs each `execute`'s
 * code with sandbox.ts on this thread and passes its API calls to the main thread, which runs them
 * through the server's pipeline. Code that loops blocks only this thread: the main thread keeps
 * serving and stops the run through its shared stop flag, or ends the thread.
 *
 * Imported for its side effect by sandbox-host.ts (so the project ships it); it does nothing on the
 * main thread.
 *
 * This file is copied into generated projects that use code mode.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { HostCallOutcome, SandboxLimits } from './sandbox.js';
import { runSandbox } from './sandbox.js';

/** Messages from the main thread. */
export type ToWorker =
  | {
      readonly type: 'run';
      readonly run: number;
      readonly js: string;
      readonly limits: SandboxLimits;
      readonly flag: SharedArrayBuffer;
      readonly owner: string;
      readonly startedAt: number;
    }
  | { readonly type: 'result'; readonly run: number; readonly call: number; readonly outcome: HostCallOutcome }
  | { readonly type: 'cancel'; readonly run: number };

/** Marks the worker's `workerData`. */
export const SANDBOX_WORKER = 'mcpgen-sandbox';

if (!isMainThread && parentPort !== null && (workerData as { role?: unknown } | undefined)?.role === SANDBOX_WORKER) {
  const port = parentPort;
  const calls = new Map<string, (outcome: HostCallOutcome) => void>();
  const runs = new Map<number, AbortController>();
  let nextCall = 1;
  port.on('message', (m: ToWorker) => {
    if (m.type === 'result') {
      const key = `${m.run}:${m.call}`;
      calls.get(key)?.(m.outcome);
      calls.delete(key);
      return;
    }
    if (m.type === 'cancel') return void runs.get(m.run)?.abort();
    const controller = new AbortController();
    runs.set(m.run, controller);
    const host = (name: string, args: unknown, signal: AbortSignal): Promise<HostCallOutcome> =>
      new Promise((resolve) => {
        const call = nextCall++;
        calls.set(`${m.run}:${call}`, resolve);
        port.postMessage({ type: 'call', run: m.run, call, name, args });
        signal.addEventListener('abort', () => port.postMessage({ type: 'abort-call', run: m.run, call }), { once: true });
      });
    void runSandbox(m.js, host, m.limits, controller.signal, new Int32Array(m.flag), m.owner, m.startedAt)
      .then(
        (outcome) => port.postMessage({ type: 'done', run: m.run, outcome }),
        (err: unknown) =>
          port.postMessage({
            type: 'done',
            run: m.run,
            outcome: { kind: 'thrown', message: `InternalError: ${err instanceof Error ? err.message : String(err)}`, console: '' },
          }),
      )
      .finally(() => {
        runs.delete(m.run);
        for (const key of [...calls.keys()]) if (key.startsWith(`${m.run}:`)) calls.delete(key);
      });
  });
}

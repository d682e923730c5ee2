/**
 * Code mode's sandbox on worker threads: each `execute` runs (sandbox.ts, QuickJS) on a worker
 * thread (sandbox-worker.ts) of its own while no more runs are under way than code mode's bound
 * (<PREFIX>_CODE_MAX_RUNS, up to {@link MAX_WORKERS} threads), so code that loops holds up that
 * thread only, never another run (past 8 runs at once, runs share threads), nor the
 * server's event loop, its other clients or the run's own cancellation. Each API call of the code
 * comes back here as a message and runs through the server's pipeline on this thread (credentials
 * never reach the worker). A run is stopped through a shared flag its interrupt handler reads
 * (cancellation, the wall time); a worker that does not answer within a grace period after the
 * wall time is ended, with every run on it, and replaced.
 *
 * This file is copied into generated projects that use code mode.
 */
import { Worker } from 'node:worker_threads';
import './sandbox-worker.js';
import type { HostCallOutcome, SandboxLimits, SandboxOutcome } from './sandbox.js';
import { clockOf, countedMs } from './sandbox-clock.js';
import type { ToWorker } from './sandbox-worker.js';
import { SANDBOX_WORKER } from './sandbox-worker.js';

/**
 * Runs `work` (a question to the client: a reflection gate asking mid-run) with the run's wall
 * time stopped meanwhile (sandbox-clock.ts: up to MAX_PAUSE_MS per run in all).
 */
export type WaitForClient = <T>(work: () => Promise<T>) => Promise<T>;

/** Runs one API call of the code on this thread; `waiting` stops the run's clock while the call waits on the client. */
export type MainHostCall = (name: string, args: unknown, signal: AbortSignal, waiting: WaitForClient) => Promise<HostCallOutcome>;

/** Most worker threads runs are spread over: one per run under way up to this, then they share. */
export const MAX_WORKERS = 8;
/** How long after its wall time a run's worker may take to answer before it is ended. */
const GRACE_MS = 2000;

/** Messages from a worker. */
type FromWorker =
  | { readonly type: 'call'; readonly run: number; readonly call: number; readonly name: string; readonly args: unknown }
  | { readonly type: 'abort-call'; readonly run: number; readonly call: number }
  | { readonly type: 'done'; readonly run: number; readonly outcome: SandboxOutcome };

type Run = {
  readonly host: MainHostCall;
  readonly waiting: WaitForClient;
  readonly flag: Int32Array;
  readonly calls: Map<number, AbortController>;
  finish(outcome: SandboxOutcome): void;
};
type Slot = { readonly worker: Worker; readonly runs: Map<number, Run> };

const slots: Array<Slot | undefined> = [];
let nextRun = 1;
let turn = 0;

/**
 * The worker for a new run, of `workers` places: a started one with no run, else a free place
 * (which starts one, as after one was ended), else the one with the fewest runs. With a place per
 * run under way, no run ever shares its thread with one that loops.
 */
function slot(workers: number): Slot {
  let i = -1;
  let free = -1;
  for (let k = 0; k < workers; k++) {
    const at = (turn + k) % workers;
    if (slots[at] === undefined) {
      if (free === -1) free = at;
      continue;
    }
    if (i === -1 || slots[at]!.runs.size < slots[i]!.runs.size) i = at;
  }
  if (free !== -1 && (i === -1 || slots[i]!.runs.size > 0)) i = free;
  turn++;
  const existing = slots[i];
  if (existing) return existing;
  const worker = new Worker(new URL('./sandbox-worker.js', import.meta.url), { workerData: { role: SANDBOX_WORKER }, stdout: true, stderr: true });
  // a worker never keeps the process alive on its own, and its output never reaches stdout (the protocol's over stdio)
  worker.unref();
  worker.stdout.resume();
  worker.stderr.resume();
  const s: Slot = { worker, runs: new Map() };
  slots[i] = s;
  const lost = (why: string) => {
    if (slots[i] === s) slots[i] = undefined;
    for (const run of s.runs.values()) run.finish({ kind: 'thrown', message: `InternalError: the sandbox's thread ended (${why})`, console: '' });
    s.runs.clear();
  };
  worker.on('error', (err) => lost(err instanceof Error ? err.message : String(err)));
  worker.on('exit', (code) => lost(`exit code ${code}`));
  worker.on('message', (m: FromWorker) => {
    const run = s.runs.get(m.run);
    if (!run) return;
    if (m.type === 'done') return run.finish(m.outcome);
    if (m.type === 'abort-call') return void run.calls.get(m.call)?.abort();
    const controller = new AbortController();
    run.calls.set(m.call, controller);
    void run.host(m.name, m.args, controller.signal, run.waiting).then(
      (outcome) => {
        run.calls.delete(m.call);
        if (s.runs.has(m.run)) s.worker.postMessage({ type: 'result', run: m.run, call: m.call, outcome } satisfies ToWorker);
      },
      () => undefined,
    );
  });
  return s;
}

/**
 * Runs `js` on a worker thread for `owner` (the client identity); the same contract as sandbox.ts's
 * `runSandbox`. `workers`: the most runs under way at once (code mode's bound), so the threads
 * kept (up to {@link MAX_WORKERS}) give each run one of its own.
 */
export function runIsolated(js: string, host: MainHostCall, limits: SandboxLimits, signal: AbortSignal, owner = '', workers = 2): Promise<SandboxOutcome> {
  return new Promise<SandboxOutcome>((resolve) => {
    const s = slot(Math.min(MAX_WORKERS, Math.max(1, workers)));
    const id = nextRun++;
    // the stop flag (bytes 0–3) and the run's clock (8–23: waiting for the client, sandbox-clock.ts)
    const shared = new SharedArrayBuffer(24);
    const flag = new Int32Array(shared, 0, 1);
    const clock = clockOf(new Int32Array(shared))!;
    const started = Date.now();
    let waits = 0;
    const waiting: WaitForClient = async (work) => {
      if (waits++ === 0) Atomics.store(clock, 0, BigInt(Date.now()));
      try {
        return await work();
      } finally {
        if (--waits === 0) {
          // the wait is added before it ends: a reader in between counts it twice (leniently), never not at all
          Atomics.add(clock, 1, BigInt(Math.max(0, Date.now() - Number(Atomics.load(clock, 0)))));
          Atomics.store(clock, 0, 0n);
        }
      }
    };
    let grace: NodeJS.Timeout | undefined;
    let timedOut = false;
    const stop = () => {
      Atomics.store(flag, 0, 1);
      s.worker.postMessage({ type: 'cancel', run: id } satisfies ToWorker);
    };
    const onAbort = () => {
      stop();
      grace ??= setTimeout(() => void s.worker.terminate(), GRACE_MS);
    };
    // past the wall time and the grace period, the worker is stuck (native code that never reaches the interrupt handler): ended
    // (waiting for the client moves the deadline: checked again then)
    let deadline: NodeJS.Timeout;
    const arm = (): void => {
      deadline = setTimeout(
        () => {
          if (countedMs(started, Date.now(), clock) <= limits.timeoutMs + 250) return arm();
          timedOut = true;
          stop();
          grace ??= setTimeout(() => void s.worker.terminate(), GRACE_MS);
        },
        Math.max(20, limits.timeoutMs + 251 - countedMs(started, Date.now(), clock)),
      );
    };
    arm();
    const run: Run = {
      host,
      waiting,
      flag,
      calls: new Map(),
      finish: (outcome) => {
        if (!s.runs.delete(id)) return;
        clearTimeout(deadline);
        if (grace) clearTimeout(grace);
        signal.removeEventListener('abort', onAbort);
        for (const c of run.calls.values()) c.abort();
        if (signal.aborted && outcome.kind !== 'returned') return resolve({ kind: 'cancelled', console: outcome.console });
        // stopped here at the wall time (the worker's own timer had not fired yet: a busy thread, a
        // slow start), the worker reports a cancellation: the run crossed the time bound all the same
        if (timedOut && outcome.kind === 'cancelled')
          return resolve({
            kind: 'bound',
            bound: 'time',
            message: `wall time bound: the code ran longer than ${limits.timeoutMs} ms and was stopped`,
            console: outcome.console,
          });
        // a worker ended past the wall time: the run crossed that bound
        if (timedOut && outcome.kind === 'thrown' && outcome.message.includes("the sandbox's thread ended")) {
          return resolve({
            kind: 'bound',
            bound: 'time',
            message: `wall time bound: the code ran longer than ${limits.timeoutMs} ms and was stopped (its thread was ended)`,
            console: outcome.console,
          });
        }
        resolve(outcome);
      },
    };
    s.runs.set(id, run);
    signal.addEventListener('abort', onAbort, { once: true });
    s.worker.postMessage({ type: 'run', run: id, js, limits, flag: shared, owner, startedAt: started } satisfies ToWorker);
    if (signal.aborted) onAbort();
  });
}

/**
 * The sandbox of code mode's `execute`: JavaScript run by QuickJS compiled to WebAssembly
 * (quickjs-emscripten), never by the host's V8. The code sees the language, `api` and `console`
 * only: no `process`, `require`, `import()`, timers, network or file system exist inside.
 *
 * Each run gets a WebAssembly instance of its own with a `WebAssembly.Memory` whose maximum is the
 * memory bound: that is the outer bound. QuickJS's own memory limit alone does not hold —
 * `a.push("y".repeat(1e6))` in a loop grew a process to 2.2 GB before QuickJS said "out of
 * memory", and calls the interrupt handler too seldom for a check there — but a WASM memory
 * cannot grow past its maximum, so the allocation fails inside QuickJS and the run ends with
 * "out of memory". Two concurrent `execute` calls never share an instance, and every run has a
 * QuickJS runtime of its own, so no run sees another's globals. An instance is used again only
 * after a run that returned and was freed whole without growing its memory, and only by a run of
 * the same owner (client identity); any other is dropped.
 * The compiled module is shared.
 *
 * Time: the interrupt handler stops the code at the deadline (or when cancelled, or when a bound
 * was crossed); a run that waits on the host (an API call) is ended by a timer. Time the run
 * spends waiting for the client to answer a reflection gate's question (legacy era: a sampling
 * request or a form sent mid-run) does not count against the wall time, up to
 * MAX_PAUSE_MS per run in all (the host marks it in the run's shared clock: sandbox-clock.ts). Stack: 256 KiB
 * (at 512 KiB deep recursion overflowed the host stack and killed the process in a trial).
 *
 * This file is copied into generated projects that use code mode.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import { clockOf, countedMs } from './sandbox-clock.js';
import { boundedQuickJS, release } from './sandbox-instances.js';

/** Bounds of one run. */
export type SandboxLimits = {
  /** Wall time of the whole run, API calls included, in milliseconds. */
  readonly timeoutMs: number;
  /** Memory of the run's WebAssembly instance (QuickJS heap and all), in bytes. */
  readonly memoryBytes: number;
  /** API calls the code may make. */
  readonly maxCalls: number;
  /** Bytes of the returned value as JSON. */
  readonly maxOutputBytes: number;
  /** Bytes of captured console output. */
  readonly maxConsoleBytes: number;
};

/** Stack of the QuickJS runtime: 256 KiB (512 KiB crashed the host in a trial). */
export const SANDBOX_STACK_BYTES = 256 * 1024;

/** What one API call from the code gave: its data, or why it failed (status and a bounded body when the API answered). */
export type HostCallOutcome =
  | { readonly ok: true; readonly data: unknown }
  | { readonly ok: false; readonly message: string; readonly status?: number; readonly body?: string };

/** Runs one API call of the code (`api.<name>(args)`); never throws. */
export type HostCall = (name: string, args: unknown, signal: AbortSignal) => Promise<HostCallOutcome>;

/** Which bound ended a run. */
export type BoundName = 'time' | 'memory' | 'calls' | 'output' | 'console';

/** How a run ended. `console`: what the code logged (within its bound). */
export type SandboxOutcome =
  | { readonly kind: 'returned'; readonly json: string; readonly console: string }
  | { readonly kind: 'syntax'; readonly message: string; readonly console: string }
  | { readonly kind: 'thrown'; readonly message: string; readonly stack?: string; readonly console: string }
  | { readonly kind: 'bound'; readonly bound: BoundName; readonly message: string; readonly console: string }
  | { readonly kind: 'cancelled'; readonly console: string };

/** Name of the user's code in stack traces. */
const CODE_FILE = 'code.js';
/** Lines the wrapper adds before the user's first line. */
const WRAPPER_LINES = 1;

/**
 * The prelude every run evaluates first: `api` (a proxy: any property is an operation, called
 * through the one host function, which it then removes from the globals) and `console`.
 */
const PRELUDE = `(() => {
  const call = globalThis.__mcpgen_call, log = globalThis.__mcpgen_log;
  delete globalThis.__mcpgen_call; delete globalThis.__mcpgen_log;
  const show = (v) => { if (typeof v === 'string') return v; try { const s = JSON.stringify(v); return s === undefined ? String(v) : s; } catch { return String(v); } };
  const write = (level) => (...args) => { log(level, args.map(show).join(' ')); };
  const c = { log: write('log'), info: write('info'), warn: write('warn'), error: write('error'), debug: write('debug') };
  Object.defineProperty(globalThis, 'console', { value: Object.freeze(c), enumerable: false });
  const op = (name) => async (args) => {
    const r = JSON.parse(await call(name, JSON.stringify(args === undefined ? {} : args)));
    if (r.ok) return r.data;
    const e = new Error(r.message);
    e.operation = name;
    if (r.status !== undefined) e.status = r.status;
    if (r.body !== undefined) e.body = r.body;
    throw e;
  };
  const api = new Proxy(Object.freeze(Object.create(null)), {
    get: (_t, name) => (typeof name === 'string' && name !== 'then' ? op(name) : undefined),
    set: () => false, defineProperty: () => false, deleteProperty: () => false,
  });
  Object.defineProperty(globalThis, 'api', { value: api, enumerable: false });
})();`;

/** A stack trace with only the user's frames, line numbers as the user wrote them. */
function userStack(stack: unknown): string | undefined {
  if (typeof stack !== 'string') return undefined;
  const lines = stack
    .split('\n')
    .filter((l) => l.includes(`${CODE_FILE}:`) && !l.includes('<eval>'))
    .map((l) => l.trim().replace(/code\.js:(\d+):(\d+)/, (_m, line: string, col: string) => `line ${Math.max(1, Number(line) - WRAPPER_LINES)}:${col}`));
  return lines.length > 0 ? lines.slice(0, 10).join('\n') : undefined;
}

/**
 * Runs `js` (already plain JavaScript: the body of an async function) in a fresh sandbox, on this
 * thread (sandbox-host.ts runs it on a worker thread, so that code that loops cannot hold up the
 * server's event loop). Resolves
 * once the code's promise settles, a bound is crossed, or `signal` aborts; never rejects for
 * anything the code does. `owner` (the client identity): only its runs reuse this run's instance.
 * `startedAt`: when the wall time began (default: now).
 */
export async function runSandbox(
  js: string,
  host: HostCall,
  limits: SandboxLimits,
  signal: AbortSignal,
  stopFlag?: Int32Array,
  owner = '',
  startedAt?: number,
): Promise<SandboxOutcome> {
  // the wall time counts from when the run was asked for (the host's clock: sandbox-host.ts stops it at the same moment, plus a margin)
  const runStart = startedAt ?? Date.now();
  const instance = await boundedQuickJS(limits.memoryBytes, owner);
  const runtime: QuickJSRuntime = instance.quickjs.newRuntime();
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(SANDBOX_STACK_BYTES);
  const clock = clockOf(stopFlag);
  const overTime = (): boolean => countedMs(runStart, Date.now(), clock) > limits.timeoutMs;
  let stop: BoundName | 'cancelled' | undefined;
  let ended = false;
  const inFlight = new AbortController();
  // stopFlag: set by another thread (sandbox-host.ts) to stop code that never yields to this thread's event loop
  runtime.setInterruptHandler(() => stop !== undefined || signal.aborted || overTime() || (stopFlag !== undefined && Atomics.load(stopFlag, 0) !== 0));
  const vm: QuickJSContext = runtime.newContext();
  let out = '';
  let calls = 0;
  let wake: (() => void) | undefined;
  const halt = (why: BoundName | 'cancelled') => {
    stop ??= why;
    wake?.();
  };

  const logFn = vm.newFunction('__mcpgen_log', (levelH, textH) => {
    const level = vm.getString(levelH);
    const text = vm.getString(textH);
    const line = `${level === 'log' ? '' : `[${level}] `}${text}\n`;
    if (Buffer.byteLength(out) + Buffer.byteLength(line) > limits.maxConsoleBytes) {
      out += line.slice(0, Math.max(0, limits.maxConsoleBytes - Buffer.byteLength(out)));
      halt('console');
      return vm.newError(`console output is over its bound of ${limits.maxConsoleBytes} bytes`);
    }
    out += line;
    return undefined;
  });
  vm.setProp(vm.global, '__mcpgen_log', logFn);
  logFn.dispose();

  const callFn = vm.newFunction('__mcpgen_call', (nameH, argsH) => {
    const name = vm.getString(nameH);
    const argsText = vm.getString(argsH);
    const deferred = vm.newPromise();
    const settle = (outcome: HostCallOutcome) => {
      if (ended) return;
      let text: string;
      try {
        text = JSON.stringify(outcome);
      } catch {
        text = JSON.stringify({ ok: false, message: `${name}: its result cannot be passed to the code` });
      }
      const s = vm.newString(text);
      deferred.resolve(s);
      s.dispose();
      deferred.dispose();
      runtime.executePendingJobs();
      wake?.();
    };
    calls += 1;
    if (calls > limits.maxCalls) {
      halt('calls');
      settle({ ok: false, message: `the API call bound of ${limits.maxCalls} calls per execute is reached` });
      return deferred.handle;
    }
    let args: unknown;
    try {
      args = JSON.parse(argsText);
    } catch {
      args = {};
    }
    void host(name, args, inFlight.signal).then(settle, (err: unknown) => settle({ ok: false, message: err instanceof Error ? err.message : String(err) }));
    return deferred.handle;
  });
  vm.setProp(vm.global, '__mcpgen_call', callFn);
  callFn.dispose();

  const finish = (outcome: SandboxOutcome): SandboxOutcome => {
    ended = true;
    inFlight.abort();
    // only a run that returned is torn down piece by piece; any other may hold live objects (a
    // pending promise, a half-built value) that QuickJS asserts on: its WebAssembly instance,
    // memory and all, is dropped whole and collected
    if (outcome.kind === 'returned') {
      try {
        vm.dispose();
        runtime.dispose();
        release(instance, owner);
      } catch {
        // dropped whole all the same
      }
    }
    return outcome;
  };
  const boundOutcome = (bound: BoundName): SandboxOutcome => ({ kind: 'bound', bound, message: boundMessage(bound, limits), console: out });
  const ending = (): SandboxOutcome | undefined => {
    if (signal.aborted) return { kind: 'cancelled', console: out };
    if (stop === 'cancelled') return { kind: 'cancelled', console: out };
    if (stop !== undefined) return boundOutcome(stop);
    if (overTime()) return boundOutcome('time');
    return undefined;
  };
  /** An error of the code (or of QuickJS) as an outcome. */
  const errorOutcome = (handle: QuickJSHandle): SandboxOutcome => {
    let message = 'the code failed';
    let stack: string | undefined;
    try {
      const e = vm.dump(handle) as { name?: unknown; message?: unknown; stack?: unknown } | unknown;
      if (typeof e === 'object' && e !== null) {
        const err = e as { name?: unknown; message?: unknown; stack?: unknown };
        message = `${typeof err.name === 'string' ? `${err.name}: ` : ''}${String(err.message ?? '')}`;
        stack = userStack(err.stack);
      } else message = e === null || e === undefined ? 'InternalError: an error QuickJS could not describe (its stack or memory was exhausted)' : String(e);
    } catch {
      message = 'InternalError: out of memory';
    }
    handle.dispose();
    const early = ending();
    if (early) return early;
    if (/out of memory/.test(message) || message === 'InternalError: ' || message === '') return boundOutcome('memory');
    if (/interrupted/.test(message)) return boundOutcome('time');
    return { kind: 'thrown', message, ...(stack !== undefined ? { stack } : {}), console: out };
  };

  try {
    const prelude = vm.evalCode(PRELUDE, 'prelude.js');
    if (prelude.error) return finish(errorOutcome(prelude.error));
    prelude.value.dispose();
    const wrapped = `(async () => {\n${js}\n})().then((v) => { const s = JSON.stringify(v === undefined ? null : v); return s === undefined ? 'null' : s; })`;
    const started = vm.evalCode(wrapped, CODE_FILE);
    if (started.error) return finish(errorOutcome(started.error));
    const promise = started.value;
    let settled: { value?: QuickJSHandle; error?: QuickJSHandle } | undefined;
    void vm.resolvePromise(promise).then((r) => {
      settled = r.error ? { error: r.error } : { value: r.value };
      wake?.();
    });
    promise.dispose();
    runtime.executePendingJobs();
    const onAbort = () => halt('cancelled');
    signal.addEventListener('abort', onAbort, { once: true });
    // at the deadline, unless waiting for the client moved it: then again at the new one
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      timer = setTimeout(() => (overTime() ? halt('time') : arm()), Math.max(20, limits.timeoutMs - countedMs(runStart, Date.now(), clock) + 1));
    };
    arm();
    try {
      while (settled === undefined && ending() === undefined) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (settled !== undefined || stop !== undefined || signal.aborted) resolve();
        });
        wake = undefined;
      }
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
    const early = ending();
    if (early) {
      settled?.value?.dispose();
      settled?.error?.dispose();
      return finish(early);
    }
    if (settled!.error) return finish(errorOutcome(settled!.error));
    const json = vm.getString(settled!.value!);
    settled!.value!.dispose();
    if (Buffer.byteLength(json) > limits.maxOutputBytes) return finish(boundOutcome('output'));
    return finish({ kind: 'returned', json, console: out });
  } catch (err) {
    // QuickJS itself failed (its memory exhausted mid-call): the run is over, the instance dropped
    ended = true;
    inFlight.abort();
    const early = ending();
    if (early) return early;
    const message = err instanceof Error ? err.message : String(err);
    return /memory|out of bounds|unreachable/i.test(message) ? boundOutcome('memory') : { kind: 'thrown', message: `InternalError: ${message}`, console: out };
  }
}

/** What a crossed bound is called in the answer, with its value and the setting that tunes it. */
function boundMessage(bound: BoundName, limits: SandboxLimits): string {
  switch (bound) {
    case 'time':
      return `wall time bound: the code ran longer than ${limits.timeoutMs} ms and was stopped`;
    case 'memory':
      return `memory bound: the code used more than ${Math.round(limits.memoryBytes / 1048576)} MiB and was stopped`;
    case 'calls':
      return `API call bound: the code made more than ${limits.maxCalls} API calls and was stopped`;
    case 'output':
      return `output bound: the returned value is more than ${limits.maxOutputBytes} bytes of JSON; return less (filter, count or summarise in the code)`;
    case 'console':
      return `console bound: the code logged more than ${limits.maxConsoleBytes} bytes and was stopped`;
  }
}

/**
 * The QuickJS WebAssembly instances code mode's sandbox runs in (sandbox.ts). Each has a
 * `WebAssembly.Memory` whose maximum is the run's memory bound: the outer bound QuickJS's own heap
 * limit lacks (`a.push("y".repeat(1e6))` in a loop grew a process to 2.2 GB under that limit alone).
 * The module is compiled once per thread; an instance is taken by one run at a time and used
 * again only after a run that returned, was freed whole (its QuickJS runtime disposed, so no
 * object of it is left) and never grew its memory; any other is dropped and collected. A freed
 * run's bytes stay in its instance's memory (its allocator's free blocks, which cannot be zeroed
 * without breaking the instance), so an instance is used again only by a run of the same owner
 * (the client identity): another client's run never gets memory that held someone else's data.
 *
 * This file is copied into generated projects that use code mode.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { QuickJSWASMModule } from 'quickjs-emscripten';
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } from 'quickjs-emscripten';

let compiled: Promise<WebAssembly.Module | undefined> | undefined;

/** The QuickJS WebAssembly module, compiled once per process (undefined: let emscripten load it each time). */
function wasmModule(): Promise<WebAssembly.Module | undefined> {
  compiled ??= (async () => {
    try {
      const file = createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
      return await WebAssembly.compile(readFileSync(file));
    } catch {
      return undefined;
    }
  })();
  return compiled;
}

/** One QuickJS WebAssembly instance and its memory. */
export type Instance = { readonly quickjs: QuickJSWASMModule; readonly memory: WebAssembly.Memory; readonly maximum: number };

/** WebAssembly pages (64 KiB) an instance starts with: 16 MiB, what the module declares. */
const INITIAL_PAGES = 256;

/**
 * Instances whose last run returned and was torn down whole (its QuickJS runtime freed, so no
 * object of it is left) and whose memory never grew, with the owner of that run: the owner's next
 * run takes one instead of instantiating (the bulk of a run's start). Any other run's instance is
 * dropped; past {@link MAX_IDLE}, the oldest idle one.
 */
const idle: Array<{ readonly instance: Instance; readonly owner: string }> = [];
const MAX_IDLE = 2;

/** A QuickJS instance whose WebAssembly memory cannot grow past `memoryBytes` (plus the engine's own 16 MiB floor): an idle one `owner`'s earlier run left, else a new one. */
export async function boundedQuickJS(memoryBytes: number, owner = ''): Promise<Instance> {
  const page = 65536;
  const initial = INITIAL_PAGES;
  const maximum = Math.max(initial, Math.ceil(memoryBytes / page) + 64);
  const reused = idle.findIndex((i) => i.owner === owner && i.instance.maximum === maximum);
  if (reused !== -1) return idle.splice(reused, 1)[0]!.instance;
  const wasmMemory = new WebAssembly.Memory({ initial, maximum });
  const module = await wasmModule();
  // emscripten's own messages (an abort's) are dropped: stdout belongs to the protocol over stdio
  // (print and printErr are emscripten Module options its loader type does not declare)
  const quiet = { print: () => undefined, printErr: () => undefined } as Record<string, unknown>;
  const quickjs = await newQuickJSWASMModuleFromVariant(
    newVariant(RELEASE_SYNC, { wasmMemory, emscriptenModule: quiet, ...(module ? { wasmModule: module } : {}) }),
  );
  return { quickjs, memory: wasmMemory, maximum };
}

/** Gives back the instance of a run of `owner` that returned and was freed whole: kept for `owner`'s next run if its memory never grew. */
export function release(instance: Instance, owner = ''): void {
  if (instance.memory.buffer.byteLength !== INITIAL_PAGES * 65536) return;
  if (idle.length >= MAX_IDLE) idle.shift();
  idle.push({ instance, owner });
}

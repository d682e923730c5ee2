/**
 * Code mode's sandbox instances (templates/runtime/code/sandbox-instances.ts): a freed run's data stays
 * in its WebAssembly memory, so an idle instance goes back only to runs of the same owner (client
 * identity) — another client's run gets memory that never held it. Checked from the host side on
 * the instances' memory itself.
 */
import { describe, expect, it } from 'vitest';
import { boundedQuickJS, release } from '../../../templates/runtime/code/sandbox-instances.js';

const MEMORY = 64 * 1024 * 1024;

describe('sandbox instances', () => {
  it("an instance alice's run used (and freed) is never given to bob's run; alice's next run gets it again", async () => {
    const marker = 'mcpgen-marker-of-alice-7c1e9';
    const alice = await boundedQuickJS(MEMORY, 'alice');
    const runtime = alice.quickjs.newRuntime();
    const vm = runtime.newContext();
    // built inside QuickJS, then freed with the runtime as a run that returned is
    const made = vm.evalCode(`globalThis.secret = ['mcpgen-marker', 'of', 'alice', '7c1e9'].join('-'); secret.length`);
    made.unwrap().dispose();
    vm.dispose();
    runtime.dispose();
    // the freed memory still holds it: what a reused instance would carry to its next run
    expect(Buffer.from(alice.memory.buffer).includes(marker)).toBe(true);
    release(alice, 'alice');
    const bob = await boundedQuickJS(MEMORY, 'bob');
    expect(bob).not.toBe(alice);
    expect(Buffer.from(bob.memory.buffer).includes(marker)).toBe(false);
    expect(await boundedQuickJS(MEMORY, 'alice')).toBe(alice);
  });
});

/**
 * The runtime shims: real TypeScript modules of mcpgen (templates/runtime, type-checked and
 * unit-tested here) copied verbatim into `src/runtime/` of every generated project, with the
 * generated-file header put in front.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { TS_HEADER } from './header.js';

const RUNTIME_DIR = new URL('../../templates/runtime/', import.meta.url);

let cache: Map<string, string> | undefined;

/** Runtime files keyed by their path in the generated project (`src/runtime/<file>.ts`). */
export function runtimeFiles(): Map<string, string> {
  if (!cache) {
    cache = new Map();
    const names = readdirSync(RUNTIME_DIR)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
      .sort();
    for (const name of names) cache.set(`src/runtime/${name}`, TS_HEADER + '\n' + readFileSync(new URL(name, RUNTIME_DIR), 'utf8'));
  }
  return cache;
}

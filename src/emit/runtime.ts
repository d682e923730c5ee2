/**
 * The runtime shims: real TypeScript modules of mcpgen (templates/runtime, type-checked and
 * unit-tested here) copied verbatim into `src/runtime/` of every generated project, with the
 * generated-file header put in front. Only the modules a project needs are copied: those its
 * generated files import, and everything they import in turn, so a server without prompts
 * carries no prompt code (and no dependency it would need).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sha256 } from '../core/cache-entry.js';
import { moduleSpecifiers } from '../core/import-specifiers.js';
import { packageFile } from '../core/paths.js';
import { TS_HEADER } from './header.js';
import type { RuntimeImportMemo } from './runtime-memo.js';

const RUNTIME_DIR = packageFile('templates/runtime/');

let cache: Map<string, string> | undefined;

/** Every runtime module by its path under templates/runtime (`server/server.ts`, `main.ts`), as source. */
function modules(): Map<string, string> {
  if (!cache) {
    cache = new Map();
    const names = readdirSync(RUNTIME_DIR, { recursive: true, encoding: 'utf8' })
      .map((f) => f.split(path.sep).join('/'))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
      .sort();
    for (const name of names) cache.set(name, readFileSync(new URL(name, RUNTIME_DIR), 'utf8'));
  }
  return cache;
}

/**
 * Runtime modules a source file imports or re-exports by a relative `.js` specifier (type-only,
 * side-effect-only and dynamic imports included; core/import-specifiers.ts reads them), as paths
 * under the runtime folder. `from` is the importer's folder there (`''` for the runtime's root,
 * `server` for `server/server.ts`); `prefix` is what the specifiers start with (`./runtime/` in
 * generated code, `./` or `../` in the runtime itself).
 */
function localImports(source: string, from: string, prefix: string): string[] {
  // no such import opens after the last mention of the prefix, so the scan stops there (read as in
  // the whole source): GitHub's 4.5 MB tools file is not read to its end for the two imports at its top
  const last = source.lastIndexOf(prefix);
  if (last < 0) return [];
  return moduleSpecifiers(source, last)
    .map((s) => s.specifier)
    .filter((s) => s.startsWith(prefix) && /^[A-Za-z0-9_./-]+\.js$/.test(s))
    .map((s) => path.posix.normalize(path.posix.join(from, s.slice(prefix === './runtime/' ? './runtime/'.length : 0, -'.js'.length))) + '.ts');
}

/** The runtime modules the runtime module `name` (source `source`) imports: from `memo` when it has them for this exact source, else read (and remembered in it). */
function runtimeImports(name: string, source: string, memo: RuntimeImportMemo | undefined): string[] {
  if (!memo) return localImports(source, path.posix.dirname(name), '.');
  const hash = sha256(source);
  const known = memo.known.get(name);
  if (known?.sha256 === hash) return known.imports;
  const imports = localImports(source, path.posix.dirname(name), '.');
  memo.known.set(name, { sha256: hash, imports });
  memo.changed = true;
  return imports;
}

/**
 * Runtime files for a project whose generated sources are `generated`, keyed by their path in
 * the project (`src/runtime/<folder>/<file>.ts`, the folders of templates/runtime), in path order.
 * `alsoShip` names modules to copy although nothing generated imports them (e.g.
 * `preprocessors/preprocessors-host.ts`, for the user's host). `memo`: the runtime's imports
 * remembered by the build cache (./runtime-memo.ts); the same files either way.
 */
export function runtimeFiles(generated: Iterable<string>, alsoShip: readonly string[] = [], memo?: RuntimeImportMemo): Map<string, string> {
  const all = modules();
  const needed = new Set<string>();
  const queue = [...[...generated].flatMap((src) => localImports(src, '', './runtime/')), ...alsoShip];
  while (queue.length) {
    const name = queue.pop()!;
    if (needed.has(name)) continue;
    const source = all.get(name);
    if (source === undefined || name.startsWith('../')) throw new Error(`generated code imports runtime module ${name}, which templates/runtime does not have`);
    needed.add(name);
    queue.push(...runtimeImports(name, source, memo));
  }
  return new Map([...needed].sort().map((name) => [`src/runtime/${name}`, TS_HEADER + '\n' + all.get(name)!]));
}

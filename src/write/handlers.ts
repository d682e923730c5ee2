/**
 * User handler files in the output directory: which exist, and whether they export what the
 * manifest names. They are the user's files (never in `.mcpgen.json`): mcpgen only reads them,
 * and writes a stub where one is missing (see `emit/ts/stubs.ts` and `writeTree`).
 *
 * The export check reads the source text, not a TypeScript program (cheap, and independent of
 * whether the project compiles yet): `export [async] function NAME`, `export const|let|var NAME`
 * and `export { …, x as NAME, … }` count. `tsc` then checks the signatures.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Diagnostics, Location } from '../core/diagnostics.js';
import { emitHandlerStubs, handlerExports } from '../emit/ts/stubs.js';
import { generatedPath } from '../ir/features/handlers.js';
import type { IrServer } from '../ir/types.js';
import { checkDependencies } from './dependencies.js';
import { exportedNames } from './exported-names.js';
import { staleRuntimeImports } from './runtime-imports.js';
import { checkUserEntry } from './user-entry.js';

/** Options of {@link checkHandlers}. */
export type CheckHandlersOptions = {
  ir: IrServer;
  /** Absolute output directory (the project root). */
  outDir: string;
  /** Output directory as shown to the user. */
  displayOut: string;
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
};

/**
 * Reports missing handler files (warning: build writes a stub), missing exports (error, located
 * at the manifest's `handler` value) and manifest dependencies for handlers that collide with
 * the generated project's (./dependencies.ts), and imports of runtime paths that no longer exist
 * (warning, located in the handler file: ./runtime-imports.ts). Returns the stubs of the missing files, keyed by
 * project path.
 */
export async function checkHandlers(opts: CheckHandlersOptions): Promise<Map<string, string>> {
  const { ir, diagnostics } = opts;
  checkDependencies({ ir, locateManifest: opts.locateManifest, diagnostics });
  const missing = new Map<string, string>();
  // `entry: custom`: the user's src/main.ts, written once as a stub
  await checkUserEntry(opts, missing);
  const wanted = handlerExports(ir);
  if (wanted.size === 0) return missing;
  const stubs = emitHandlerStubs(ir);
  for (const [file, exports] of wanted) {
    if (generatedPath(file.slice('src/'.length))) continue; // already an error (MCPGEN_HANDLER_INVALID)
    const shown = path.posix.join(opts.displayOut, file);
    let source: string;
    try {
      const abs = path.join(opts.outDir, ...file.split('/'));
      // a FIFO or device would block the read forever; a folder fails it
      if (!(await stat(abs)).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'not a regular file' });
      source = await readFile(abs, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') {
        diagnostics.error(
          'MCPGEN_HANDLER_EXPORT_MISSING',
          `handler file ${shown} cannot be read: ${code ?? String(err)}`,
          'make it a readable file',
          opts.locateManifest(exports[0]!.ref.origin.pointer),
        );
        continue;
      }
      diagnostics.warn(
        'MCPGEN_HANDLER_MISSING',
        `handler file ${shown} does not exist yet; \`mcpgen build\` writes a typed stub there, once`,
        "implement the stub's functions (mcpgen never overwrites the file) and commit it",
        opts.locateManifest(exports[0]!.ref.origin.pointer),
      );
      missing.set(file, stubs.get(file)!);
      continue;
    }
    for (const stale of staleRuntimeImports(file.slice('src/'.length), source)) {
      diagnostics.warn(
        'MCPGEN_HANDLER_RUNTIME_IMPORT',
        `handler file ${shown} imports ${stale.specifier}, a runtime module that no longer exists (the runtime's modules are in folders now); the project will not compile`,
        `import from '${stale.replacement}' instead: it exports every type and function handlers use, and its path stays the same (mcpgen does not edit your file)`,
        { file: shown, pointer: '', line: stale.line, col: stale.col },
      );
    }
    const exported = exportedNames(source);
    for (const { exportName, ref } of exports) {
      if (exported.has(exportName)) continue;
      diagnostics.error(
        'MCPGEN_HANDLER_EXPORT_MISSING',
        `handler file ${shown} does not export "${exportName}"`,
        `add \`export async function ${exportName}(…)\` to the file, or fix the name after \`#\``,
        opts.locateManifest(ref.origin.pointer),
      );
    }
  }
  return missing;
}

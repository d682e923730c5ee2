/**
 * The user's registration file of an `entry: custom` project (`src/main.ts`): written once as a
 * stub when missing, never overwritten, and checked to export `register` (as handler files are,
 * ./handlers.ts).
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Diagnostics, Location } from '../core/diagnostics.js';
import { emitUserEntryStub, USER_ENTRY } from '../emit/ts/library.js';
import type { IrServer } from '../ir/types.js';
import { exportedNames } from './exported-names.js';

/** Adds the stub of `src/main.ts` to `missing` when the file does not exist; reports a file that does not export `register`. */
export async function checkUserEntry(
  opts: { ir: IrServer; outDir: string; displayOut: string; locateManifest: (pointer: string) => Location; diagnostics: Diagnostics },
  missing: Map<string, string>,
): Promise<void> {
  if (opts.ir.entry !== 'custom') return;
  const shown = path.posix.join(opts.displayOut, USER_ENTRY.file);
  let source: string;
  try {
    const abs = path.join(opts.outDir, ...USER_ENTRY.file.split('/'));
    if (!(await stat(abs)).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'not a regular file' });
    source = await readFile(abs, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') {
      opts.diagnostics.error(
        'MCPGEN_HANDLER_EXPORT_MISSING',
        `entry file ${shown} cannot be read: ${code ?? String(err)}`,
        'make it a readable file',
        opts.locateManifest('/entry'),
      );
      return;
    }
    opts.diagnostics.warn(
      'MCPGEN_HANDLER_MISSING',
      `entry file ${shown} does not exist yet; \`mcpgen build\` writes a stub there, once`,
      'register your tools, prompts and resources in its `register` function (mcpgen never overwrites the file) and commit it',
      opts.locateManifest('/entry'),
    );
    missing.set(USER_ENTRY.file, emitUserEntryStub());
    return;
  }
  if (!exportedNames(source).has(USER_ENTRY.export)) {
    opts.diagnostics.error(
      'MCPGEN_HANDLER_EXPORT_MISSING',
      `entry file ${shown} does not export "${USER_ENTRY.export}"`,
      'add `export async function register(server: LibraryServer)` to the file',
      opts.locateManifest('/entry'),
    );
  }
}

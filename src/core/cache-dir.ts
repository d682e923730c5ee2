/**
 * The build cache's folder: `.cache/mcpgen/` in the manifest's folder (the project's root, never
 * the generated output folder). It carries a `.gitignore` of `*` and a `CACHEDIR.TAG`, so it is
 * never committed or backed up, whatever the project's own `.gitignore` says. What is in it: the
 * loaded spec (`spec-*.entry`, ../openapi/cache.ts), the token counts (`tokens.entry`,
 * ./token-memo.ts), the runtime's import graph (`runtime-imports.entry`, ../emit/runtime-memo.ts)
 * and the operation tools (`operations-*.entry`, ../ir/model-memo.ts); all but the token counts
 * are sealed whole by ./cache-entry.ts.
 */
import { mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The cache folder of a manifest in `manifestDir`. */
export const cacheDir = (manifestDir: string) => path.join(manifestDir, '.cache', 'mcpgen');

/** Creates the folder with its `.gitignore` and `CACHEDIR.TAG` (each written once); throws when it cannot. */
export async function prepareCacheDir(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  await Promise.all([
    writeIfMissing(path.join(dir, '.gitignore'), '# written by mcpgen: its build cache, safe to delete\n*\n'),
    writeIfMissing(
      path.join(dir, 'CACHEDIR.TAG'),
      "Signature: 8a477f597d28d172789f06886806bc55\n# This file marks mcpgen's build cache: safe to delete, not worth backing up.\n",
    ),
  ]);
}

async function writeIfMissing(file: string, content: string): Promise<void> {
  await writeFile(file, content, { flag: 'wx' }).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'EEXIST') throw e;
  });
}

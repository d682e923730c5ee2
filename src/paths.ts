/**
 * Where mcpgen's own files are: the package root holds `schemas/`, `templates/` and
 * `package.json`. Found by walking up from this module, so it is the same whether the code runs
 * from `src/` (tests) or from the compiled `dist/src/`.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'templates'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('mcpgen: cannot find its package root (package.json beside templates/)');
    dir = up;
  }
}

/** Absolute path of mcpgen's package root. */
export const PACKAGE_ROOT = findRoot();

/** A file of mcpgen's package, as a file URL. */
export function packageFile(relative: string): URL {
  const url = new URL(`file://${PACKAGE_ROOT.split(path.sep).map(encodeURIComponent).join('/')}/`);
  return new URL(relative, url);
}

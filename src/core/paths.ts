/**
 * Where mcpgen's own files are: the package root holds `schemas/`, `templates/` and
 * `package.json`. Found by walking up from this module, so it is the same whether the code runs
 * from `src/` (tests) or from the compiled `dist/src/`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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

/**
 * The package.json text of `pkg` as this mcpgen resolves it — wherever npm put it (nested in
 * mcpgen's own node_modules, or hoisted beside mcpgen in a project that depends on it) — or
 * undefined when it cannot be resolved. Found from the package's entry upwards, so packages whose
 * `exports` do not list `./package.json` are found too.
 */
export function installedPackageJson(pkg: string): string | undefined {
  let entry: string | undefined;
  try {
    entry = fileURLToPath(import.meta.resolve(pkg));
  } catch {
    try {
      entry = createRequire(import.meta.url).resolve(pkg);
    } catch {
      return undefined;
    }
  }
  for (let dir = path.dirname(entry); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const text = readFileSync(file, 'utf8');
        // a folder's own package.json (`{"type":"module"}`, even with the name) has no version
        const json = JSON.parse(text) as { name?: unknown; version?: unknown };
        if (json.name === pkg && typeof json.version === 'string') return text;
      } catch {
        // not this one: keep looking upwards
      }
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

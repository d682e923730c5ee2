/**
 * Imports of the runtime in the user's handler files that point where no runtime module is any
 * longer: before the runtime had folders its modules were `src/runtime/<name>.ts`, and handlers
 * imported them there (`'../runtime/extra-tools.js'`). Those handlers would fail `tsc` after a
 * build; this names each such import, with the stable module that replaces it
 * (`runtime/handlers.ts`). The user's file is only read, never rewritten.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { moduleSpecifiers } from '../core/import-specifiers.js';
import { packageFile } from '../core/paths.js';

/** One import of a runtime module that does not exist. */
export type StaleRuntimeImport = {
  /** 1-based line and column of the specifier's opening quote. */
  line: number;
  col: number;
  /** The specifier as written (`../runtime/extra-tools.js`). */
  specifier: string;
  /** What to write instead, relative to the same file (`../runtime/handlers.js`). */
  replacement: string;
};

let topLevel: ReadonlySet<string> | undefined;

/** The modules at the top of the runtime (`main`, `library`, `handlers`): the flat paths that still exist. */
function topLevelModules(): ReadonlySet<string> {
  topLevel ??= new Set(
    readdirSync(packageFile('templates/runtime/'), { withFileTypes: true }).flatMap((e) =>
      e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [e.name.slice(0, -3)] : [],
    ),
  );
  return topLevel;
}

/**
 * The imports in `source` (a handler file at `file`, relative to the project's `src/`, e.g.
 * `handlers/tools.ts`) of a flat runtime path that is no module: `runtime/<name>.js` right under
 * `src/`, where `<name>` is not one of the runtime's top-level modules (specifiers as
 * core/import-specifiers.ts reads them).
 */
export function staleRuntimeImports(file: string, source: string): StaleRuntimeImport[] {
  const dir = path.posix.dirname(file);
  const out: StaleRuntimeImport[] = [];
  for (const { specifier, index } of moduleSpecifiers(source)) {
    if (!specifier.startsWith('.')) continue;
    const flat = /^runtime\/([^/]+?)(?:\.[cm]?js|\.[cm]?ts)?$/.exec(path.posix.normalize(path.posix.join(dir, specifier)));
    if (flat === null || topLevelModules().has(flat[1]!)) continue;
    const before = source.slice(0, index);
    const up = path.posix.relative(dir, 'runtime/handlers.js');
    out.push({ line: before.split('\n').length, col: index - before.lastIndexOf('\n'), specifier, replacement: up.startsWith('.') ? up : `./${up}` });
  }
  return out;
}

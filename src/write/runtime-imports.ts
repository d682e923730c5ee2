/**
 * Imports of the runtime in the user's handler files that point where no runtime module is any
 * longer: before the runtime had folders its modules were `src/runtime/<name>.ts`, and handlers
 * imported them there (`'../runtime/extra-tools.js'`). Those handlers would fail `tsc` after a
 * build; this names each such import, with the stable module that replaces it
 * (`runtime/handlers.ts`). The user's file is only read, never rewritten.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
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

// what comes right before a module specifier: `import … from`, `export … from`, `import`, `import(`
const BEFORE_SPECIFIER = /(?:(?<![.\w$])from\s*|(?<![.\w$])import\s*(?:\(\s*)?)$/;

// a comment or a string literal, scanned left to right (so `//` inside a string is no comment, and a quote inside a comment opens no string)
const COMMENT_OR_STRING = /\/\*[\s\S]*?(?:\*\/|$)|\/\/[^\n]*|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\[\s\S]|[^`\\])*`/g;

/**
 * The imports in `source` (a handler file at `file`, relative to the project's `src/`, e.g.
 * `handlers/tools.ts`) of a flat runtime path that is no module: `runtime/<name>.js` right under
 * `src/`, where `<name>` is not one of the runtime's top-level modules. Specifiers are the string
 * literals right after `from` or `import` (comments and other strings do not count).
 */
export function staleRuntimeImports(file: string, source: string): StaleRuntimeImport[] {
  const dir = path.posix.dirname(file);
  const out: StaleRuntimeImport[] = [];
  let last = 0;
  let code = '';
  for (const m of source.matchAll(COMMENT_OR_STRING)) {
    const token = m[0];
    code += source.slice(last, m.index);
    last = m.index + token.length;
    if (token.startsWith('/') || token.startsWith('`')) {
      code = `${code.slice(-200)} `;
      continue;
    }
    const isSpecifier = BEFORE_SPECIFIER.test(code);
    // only the end of the code so far is kept: a file of many strings stays linear
    code = `${code.slice(-200)}""`;
    const specifier = token.slice(1, -1);
    if (!isSpecifier || !specifier.startsWith('.')) continue;
    const flat = /^runtime\/([^/]+?)(?:\.[cm]?js|\.[cm]?ts)?$/.exec(path.posix.normalize(path.posix.join(dir, specifier)));
    if (flat === null || topLevelModules().has(flat[1]!)) continue;
    const before = source.slice(0, m.index);
    const up = path.posix.relative(dir, 'runtime/handlers.js');
    out.push({ line: before.split('\n').length, col: m.index - before.lastIndexOf('\n'), specifier, replacement: up.startsWith('.') ? up : `./${up}` });
  }
  return out;
}

/**
 * The module specifiers of a TypeScript or JavaScript source, read the one way mcpgen reads them
 * everywhere (the runtime copier, the check of handler files' runtime imports, the import-direction
 * test): the string literals right after `from` (`import … from`, `import type … from`,
 * `export … from`), after `import` (a side-effect import) and after `import(` (a dynamic import of a
 * literal). Comments, other strings, template literals and regular expression literals are skipped,
 * so a commented-out import or a string that looks like one is none; `x.from('…')` and
 * `x.import('…')` are calls, not imports. A scanner, not a parser: enough for the code mcpgen
 * writes and reads, linear in the length of the source.
 */

/** One module specifier of a source. */
export type ModuleSpecifier = {
  /** The specifier as written, without its quotes. */
  readonly specifier: string;
  /** Offset of its opening quote in the source. */
  readonly index: number;
  /** Whether it is the literal of a dynamic `import(…)`. */
  readonly dynamic: boolean;
};

// what comes right before a module specifier: `import … from`, `export … from`, `import`, `import(`
const BEFORE_SPECIFIER = /(?:(?<![.\w$])from\s*|(?<![.\w$])import\s*(\(\s*)?)$/;

// a comment, a string literal, the start of a template literal (templateEnd finds its end) or a regular expression literal (a `/` where an expression starts),
// scanned left to right: `//` inside a string is no comment, a quote inside a comment or a regular
// expression opens no string
const SKIPPED =
  /\/\*[\s\S]*?(?:\*\/|$)|\/\/[^\n]*|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\[\s\S]|[^`\\])*`|(?<=(?:^|[(,=:[!&|?{};]|\breturn)\s*)\/(?![*/])(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n[])+\/[a-z]*/g;

/** The end (exclusive) of the template literal whose backtick is at `start`, its `${…}` parts included (templates nest). */
function templateEnd(source: string, start: number): number {
  let i = start + 1;
  while (i < source.length) {
    const c = source[i];
    if (c === '\\') i += 2;
    else if (c === '`') return i + 1;
    else if (c === '$' && source[i + 1] === '{') i = expressionEnd(source, i + 2);
    else i++;
  }
  return source.length;
}

/** The end (exclusive) of a template's `${…}` part whose code starts at `start`: past its closing brace. */
function expressionEnd(source: string, start: number): number {
  let depth = 1;
  let i = start;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '`') {
      i = templateEnd(source, i);
      continue;
    }
    if (c === "'" || c === '"') {
      i++;
      while (i < source.length && source[i] !== c && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
    } else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i + 1;
    i++;
  }
  return source.length;
}

/**
 * The module specifiers of `source`, in order (see the module comment). With `until`, only those
 * whose quote opens before that offset, read as in the whole source (a template literal or comment
 * open at `until` still ends where it ends), and the scan stops there.
 */
export function moduleSpecifiers(source: string, until = source.length): ModuleSpecifier[] {
  const out: ModuleSpecifier[] = [];
  const skipped = new RegExp(SKIPPED.source, 'g');
  let last = 0;
  let code = '';
  for (let m = skipped.exec(source); m !== null && m.index < until; m = skipped.exec(source)) {
    code += source.slice(last, m.index);
    // a template literal ends where its own backtick closes, past any template nested in it
    const end = m[0].startsWith('`') ? templateEnd(source, m.index) : m.index + m[0].length;
    const token = source.slice(m.index, end);
    skipped.lastIndex = last = end;
    if (token.startsWith('/') || token.startsWith('`')) {
      code = `${code.slice(-200)} `;
      continue;
    }
    const before = BEFORE_SPECIFIER.exec(code);
    // only the end of the code so far is kept (a file of many strings stays linear); the string
    // stands in it, so that a second string is not read as following `from`
    code = `${code.slice(-200)}""`;
    if (before !== null) out.push({ specifier: token.slice(1, -1), index: m.index, dynamic: before[1] !== undefined });
  }
  return out;
}

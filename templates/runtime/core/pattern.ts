/**
 * The regular-expression engine of schema `pattern`s and `patternProperties`: RE2 (the `re2js`
 * port, pure JavaScript), which matches in time linear in the input. JavaScript's own engine
 * backtracks: a pattern such as `^(a+)+$` against "aaa…a!" takes exponential time, and since
 * validation runs on the server's only thread, one such argument would stall every other call
 * and even `ping`. RE2 cannot run lookaround or backreferences; mcpgen drops such patterns at
 * build time (with a warning) using {@link patternProblem}, the same check as here.
 */
import { RE2JS } from 're2js';

/** What Ajv needs of a compiled pattern. */
export type LinearRegExp = { test(input: string): boolean; toString(): string };

const compiled = new Map<string, RE2JS>();

/** Compiles an ECMAScript pattern for RE2 (named groups and `\u` escapes translated); throws when RE2 cannot run it. */
function compile(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (re === undefined) {
    re = RE2JS.compile(RE2JS.translateRegExp(pattern));
    compiled.set(pattern, re);
  }
  return re;
}

/**
 * Why `pattern` cannot be enforced by a generated server, or `undefined` when it can: it must be
 * a valid ECMAScript regular expression (with the `u` flag, as JSON Schema validators compile
 * them) and one RE2 can run in linear time.
 */
export function patternProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
  } catch {
    return 'it is not a valid ECMAScript regular expression';
  }
  try {
    compile(pattern);
    return undefined;
  } catch (err) {
    const detail = err instanceof Error ? err.message.replace(/^error parsing regexp: /, '') : String(err);
    return `it cannot be matched in linear time (${detail}); lookaround and backreferences are not supported`;
  }
}

/**
 * Ajv's `code.regExp` engine: compiles with RE2. `toString` must differ per pattern, because
 * Ajv de-duplicates compiled patterns by it.
 */
export const linearRegExp = Object.assign(
  (pattern: string, _flags: string): LinearRegExp => {
    const re = compile(pattern);
    return { test: (input: string) => re.test(input), toString: () => `re2:${pattern}` };
  },
  { code: 'linearRegExp' },
);

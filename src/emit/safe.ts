/**
 * The only place where text from a spec or a manifest is turned into TypeScript source.
 *
 * Every string that reaches generated code goes through one of these helpers; nothing else
 * in mcpgen concatenates spec text into code. What each helper guards against:
 * - {@link tsString} / {@link tsLiteral}: quotes, backslashes, `${`, U+2028/U+2029 and `</script>`
 *   can never end the literal or start code — output is JSON with the line separators escaped.
 * - {@link docText}: `*\/` can never close the doc comment; line terminators are normalised.
 * - {@link identifier} (made in identifiers.ts, which the IR builder uses too): the result is always
 *   a valid, non-reserved identifier.
 * - {@link propKey}: a property name is an identifier or a string literal, never raw text.
 * - {@link lineText}: text for one line of a line-based file (a `#` comment of `.env.example`,
 *   a Dockerfile): no line terminator or control character can start a line of its own.
 */

import { isIdentifierName } from '../core/identifiers.js';

/** Identifiers are made by identifiers.ts (the IR names with them too); emitters take them from here as before. */
export { camelCase, identifier, isIdentifierName, pascalCase } from '../core/identifiers.js';

/** A TypeScript string literal for any string (double-quoted JSON with U+2028/U+2029 and `<` escaped). */
export function tsString(value: string): string {
  return tsLiteral(value);
}

/**
 * A TypeScript expression for a JSON value (object, array, string, number, boolean, null).
 * Output is JSON-shaped, which is valid TS expression syntax, with two differences that make
 * it mean exactly what `JSON.parse` would: a `__proto__` key is written as a computed key
 * (`["__proto__"]`), because a plain `"__proto__":` in an object literal sets the prototype
 * instead of creating a property; and `<`, U+2028 and U+2029 are escaped so the text is also
 * safe in HTML/script contexts and in older parsers.
 */
export function tsLiteral(value: unknown, indent?: number): string {
  // JSON.stringify writes exactly the literal below, natively; `<`, U+2028 and U+2029 can only
  // occur inside its strings, so they are escaped on the whole text. A `"__proto__":` key (or
  // text that looks like one) takes the careful printer.
  let json: string | undefined;
  try {
    json = JSON.stringify(value, jsonOnly, indent || undefined) as string | undefined;
  } catch (e) {
    if (e !== NOT_PLAIN) throw e;
    return printLiteral(value, indent);
  }
  if (json === undefined) throw new TypeError('tsLiteral: value is not JSON-serialisable');
  if (!json.includes('"__proto__"')) return UNSAFE_IN_STRINGS.test(json) ? json.replace(UNSAFE_IN_STRINGS_ALL, escapeChar) : json;
  return printLiteral(value, indent);
}

/** Thrown by {@link jsonOnly} for an object that is not a plain object or array (YAML's `!!timestamp` gives a Date): the careful printer decides. */
const NOT_PLAIN = Symbol('not a plain object');

const UNSAFE_IN_STRINGS = /[\u2028\u2029<]/;
const UNSAFE_IN_STRINGS_ALL = /[\u2028\u2029<]/g;
const escapeChar = (c: string) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');

/**
 * JSON.stringify replacer: refuses what {@link printLiteral} refuses (non-finite numbers,
 * functions, symbols), and hands anything but plain objects and arrays (seen before `toJSON`
 * changed them) to the careful printer.
 */
function jsonOnly(this: unknown, key: string, v: unknown): unknown {
  const original = (this as Record<string, unknown>)[key];
  if (typeof original === 'object' && original !== null && !Array.isArray(original)) {
    const proto = Object.getPrototypeOf(original) as unknown;
    if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) throw new TypeError('tsLiteral: non-finite number');
  if (typeof v === 'function' || typeof v === 'symbol') throw new TypeError('tsLiteral: value is not JSON-serialisable');
  return v;
}

/** {@link tsLiteral}, printed value by value (exported for the test that compares the two). */
export function printLiteral(value: unknown, indent?: number): string {
  const pad = indent ? ' '.repeat(indent) : '';
  const str = (v: string) => JSON.stringify(v).replace(/[\u2028\u2029<]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  const print = (v: unknown, depth: string): string => {
    if (v === null || typeof v === 'boolean') return String(v);
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new TypeError('tsLiteral: non-finite number');
      return JSON.stringify(v);
    }
    if (typeof v === 'string') return str(v);
    const inner = depth + pad;
    const nl = pad ? '\n' : '';
    const sep = pad ? ': ' : ':';
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      return `[${nl}${v.map((x) => inner + print(x === undefined ? null : x, inner)).join(',' + nl)}${nl}${depth}]`;
    }
    if (typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
      if (entries.length === 0) return '{}';
      const key = (k: string) => (k === '__proto__' ? `[${str(k)}]` : str(k));
      return `{${nl}${entries.map(([k, x]) => inner + key(k) + sep + print(x, inner)).join(',' + nl)}${nl}${depth}}`;
    }
    throw new TypeError('tsLiteral: value is not JSON-serialisable');
  };
  return print(value, '');
}

/**
 * Text for a JSDoc comment body: `*\/` is broken up, every line terminator (CR, LF, CRLF,
 * U+2028, U+2029) becomes `\n`, trailing spaces are trimmed and leading/trailing blank lines dropped.
 */
export function docText(value: string): string {
  return value
    .replace(/\r\n?|[\u2028\u2029\u0085]/g, '\n')
    .replace(/\*\//g, '*\\/')
    .replace(/[^\S\n]+$/gm, '')
    .replace(/^\n+|\n+$/g, '');
}

/** One line for any text: line terminators, tabs and other control characters become spaces, runs of spaces one space. */
export function lineText(value: string): string {
  return value
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
}

/** A JSDoc block (`/** … *\/`) for a text, or `''` when the text is empty. */
export function docComment(value: string | undefined, indent = ''): string {
  const text = value === undefined ? '' : docText(value);
  if (text === '') return '';
  const lines = text.split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ' ' + l : ''}`).join('\n')}\n${indent} */\n`;
}

/** A property key: bare when it is an identifier name, otherwise a string literal. */
export function propKey(value: string): string {
  return isIdentifierName(value) ? value : tsString(value);
}

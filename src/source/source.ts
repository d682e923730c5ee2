/**
 * Parsed YAML/JSON text that remembers where every node came from.
 *
 * Parsed objects alone lose positions, so a {@link YamlSource} keeps what is needed to turn a
 * JSON pointer back into a line and column. YAML is parsed once into a yaml `Document` (with a
 * `LineCounter`). JSON takes a fast path: `JSON.parse` for the value and a lazy text index
 * (./json-index.ts) for positions, built on the first `locate` call only.
 */
import { type Document, isAlias, isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, visit } from 'yaml';
import { Diagnostics, type Location, parsePointer, pointer } from '../core/diagnostics.js';
import { findDuplicateKeys, JsonIndex } from './json-index.js';

/** A parsed file plus a way back from JSON pointers to source positions. */
export type YamlSource = {
  /** File name used in locations (as given to {@link parseYamlSource}). */
  file: string;
  /** The source text (without a leading byte-order mark). */
  text: string;
  /** The parsed value, as plain JSON-compatible data. */
  value: unknown;
  /** Set when the text was read as JSON (`value` is then `JSON.parse(text)`), not by the YAML parser. */
  json?: true;
  /**
   * Location of the node at `pointer` (RFC 6901). With `key: true`, of the mapping key instead
   * of the value (for unknown keys). A pointer that does not exist resolves to the position of
   * its nearest existing ancestor; the returned `pointer` is always the one asked for.
   */
  locate(pointer: string, opts?: { key?: boolean }): Location;
};

/** Options of {@link parseYamlSource}. */
export type ParseYamlSourceOptions = {
  /** File name used in locations, typically relative to the working directory. */
  file: string;
  text: string;
  /** Syntax errors (and duplicate keys) are added here. */
  diagnostics: Diagnostics;
  /** Code of syntax errors, e.g. `MCPGEN_MANIFEST_SYNTAX` or `MCPGEN_SPEC_SYNTAX`. */
  syntaxCode: 'MCPGEN_MANIFEST_SYNTAX' | 'MCPGEN_SPEC_SYNTAX';
};

type Pos = { line: number; col: number };

/**
 * Parses YAML or JSON text. Every syntax error and duplicate key becomes a diagnostic with its
 * position, and the result is `undefined` then.
 *
 * @example
 * const src = parseYamlSource({ file: 'mcpgen.yaml', text, diagnostics, syntaxCode: 'MCPGEN_MANIFEST_SYNTAX' });
 * if (src) src.locate('/include/0/tag'); // { file: 'mcpgen.yaml', pointer: '/include/0/tag', line: 4, col: 10 }
 */
export function parseYamlSource(opts: ParseYamlSourceOptions): YamlSource | undefined {
  const text = opts.text.charCodeAt(0) === 0xfeff ? opts.text.slice(1) : opts.text;
  const isJsonFile = opts.file.toLowerCase().endsWith('.json');
  if (isJsonFile || /^\s*[[{]/.test(text)) {
    const json = parseJson(opts, text);
    // Not JSON after all (YAML flow syntax, or broken JSON): the YAML parser reports the errors.
    if (json !== NOT_JSON) return json;
    if (isJsonFile) {
      // a .json file that is not YAML either: JSON's own message says what is wrong, where
      const scratch = new Diagnostics();
      const yaml = parseYaml({ ...opts, diagnostics: scratch }, text);
      if (yaml) {
        for (const d of scratch.items) opts.diagnostics.add(d);
        return yaml;
      }
      reportJsonError(opts, text);
      return undefined;
    }
  }
  return parseYaml(opts, text);
}

/** The error of `JSON.parse(text)` as one diagnostic at its position (V8: "… in JSON at position N"). */
function reportJsonError(opts: ParseYamlSourceOptions, text: string): void {
  try {
    JSON.parse(text);
  } catch (e) {
    const raw = e instanceof Error ? e.message : String(e);
    const at = /\bat position (\d+)/.exec(raw);
    const offset = at ? Math.min(Number(at[1]), text.length) : text.length;
    const message = lowerFirst(raw.replace(/\s*(?:in JSON )?at position \d+.*$/, '').replace(/ in JSON$/, '')) || 'not well-formed JSON';
    const help = /string/i.test(message)
      ? 'check for a missing closing quote, or a line break inside a string'
      : 'check for a missing comma, quote, bracket or brace just before this position';
    opts.diagnostics.error(opts.syntaxCode, message, help, { file: opts.file, pointer: '', ...linePos(countLines(text), offset) });
  }
}

const NOT_JSON = Symbol('not JSON');

function parseJson(opts: ParseYamlSourceOptions, text: string): YamlSource | undefined | typeof NOT_JSON {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
  let index: JsonIndex | undefined;
  let lines: LineCounter | undefined;
  const idx = () => (index ??= new JsonIndex(text));
  const pos = (offset: number) => linePos((lines ??= countLines(text)), offset);
  const duplicates = findDuplicateKeys(text, value);
  for (const offset of duplicates) {
    const tokens = idx().tokensAt(offset);
    opts.diagnostics.error(opts.syntaxCode, `duplicate key ${JSON.stringify(tokens.at(-1) ?? '')}`, HELP.DUPLICATE_KEY!, {
      file: opts.file,
      pointer: pointer(tokens),
      ...pos(offset),
    });
  }
  if (duplicates.length > 0) return undefined;
  return {
    file: opts.file,
    text,
    value,
    json: true,
    locate(ptr, o) {
      return { file: opts.file, pointer: ptr, ...pos(idx().find(parsePointer(ptr), o).offset) };
    },
  };
}

function countLines(text: string): LineCounter {
  const lc = new LineCounter();
  lc.addNewLine(0);
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lc.addNewLine(i + 1);
  return lc;
}

function linePos(lc: LineCounter, offset: number): Pos {
  const p = lc.linePos(offset);
  return p.line === 0 ? { line: 1, col: offset + 1 } : { line: p.line, col: p.col };
}

const HELP: Partial<Record<string, string>> = {
  DUPLICATE_KEY: 'remove or rename one of the duplicate keys',
  TAB_AS_INDENT: 'indent with spaces, not tabs',
  MULTIPLE_DOCS: 'keep one YAML document in the file (remove the extra `---`)',
  BAD_INDENT: 'check the indentation: entries of one mapping or list must start in the same column',
  MISSING_CHAR: 'check for a missing quote, bracket or `:`',
  ALIAS: 'define the anchor (`&name`) before using the alias (`*name`)',
  TAG_RESOLVE_FAILED: 'remove the `!tag` or quote the value',
};
const DEFAULT_HELP = 'fix the YAML syntax at this position (check indentation, quotes and `:` after keys)';

function parseYaml(opts: ParseYamlSourceOptions, text: string): YamlSource | undefined {
  const { diagnostics, syntaxCode, file } = opts;
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, merge: true, uniqueKeys: true });
  const at = (offset: number, tokens: string[] = []): Location => ({ file, pointer: pointer(tokens), ...linePos(lineCounter, offset) });
  const report = (e: { code: string; message: string; pos: [number, number] }, warning = false) => {
    // yaml puts indentation errors at the start of the line; point at the offending token instead
    let offset = e.pos[0];
    while (text[offset] === ' ') offset++;
    // The tree around most syntax errors is a guess of the parser's recovery, so only duplicate
    // keys (whose tree is sound) get a pointer.
    const tokens = e.code === 'DUPLICATE_KEY' ? tokensAt(doc, offset) : [];
    const loc = at(offset, tokens);
    const message =
      e.code === 'DUPLICATE_KEY'
        ? `duplicate key ${JSON.stringify(tokens.at(-1) ?? '')}`
        : e.code === 'MULTIPLE_DOCS'
          ? 'the file holds more than one YAML document'
          : lowerFirst(e.message);
    const help = HELP[e.code] ?? DEFAULT_HELP;
    if (warning) diagnostics.warn(syntaxCode, message, help, loc);
    else diagnostics.error(syntaxCode, message, help, loc);
  };
  // After the first syntax error the parser's tree is a guess, and what it reports next is
  // mostly that guess unravelling (one unclosed bracket gave dozens of errors): report errors up
  // to the first one that is not a duplicate key (those are found on a sound tree).
  const errors = [...doc.errors].sort((x, y) => x.pos[0] - y.pos[0]);
  const first = errors.findIndex((e) => e.code !== 'DUPLICATE_KEY');
  for (const e of first < 0 ? errors : errors.slice(0, first + 1)) report(e);
  for (const w of doc.warnings) report(w, true);
  if (doc.errors.length > 0) return undefined;
  const unresolved = unresolvedAliases(doc);
  for (const a of unresolved) {
    report({ code: 'ALIAS', message: `unknown alias *${a.source}`, pos: [a.offset, a.offset] });
  }
  if (unresolved.length > 0) return undefined;
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (e) {
    // e.g. yaml's guard against alias bombs ("Excessive alias count …")
    report({ code: 'TO_JS', message: e instanceof Error ? e.message : String(e), pos: [0, 0] });
    return undefined;
  }
  return {
    file,
    text,
    value,
    locate(ptr, o) {
      return { file, pointer: ptr, ...linePos(lineCounter, locateYaml(doc, parsePointer(ptr), o?.key === true)) };
    },
  };
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

function unresolvedAliases(doc: Document): Array<{ source: string; offset: number }> {
  const out: Array<{ source: string; offset: number }> = [];
  visit(doc, {
    Alias(_, node) {
      if (node.resolve(doc) === undefined) out.push({ source: node.source, offset: node.range?.[0] ?? 0 });
    },
  });
  return out;
}

/** The key of a mapping pair as `toJS` turns it into a property name. */
function keyText(key: unknown): string {
  if (isScalar(key)) return key.value === null ? '' : String(key.value);
  return String(key);
}

function start(node: unknown): number | undefined {
  return isNode(node) ? node.range?.[0] : undefined;
}

/** An empty value (`key:` with nothing after it) has no useful position of its own. */
function isEmpty(node: unknown): boolean {
  return node === null || node === undefined || (isScalar(node) && node.value === null && node.source === '');
}

/** Offset of the node at `tokens` in a YAML document, or of its nearest existing ancestor. */
function locateYaml(doc: Document, tokens: readonly string[], wantKey: boolean): number {
  let node: unknown = doc.contents;
  let offset = start(node) ?? 0;
  for (const [i, token] of tokens.entries()) {
    if (isAlias(node)) node = node.resolve(doc);
    const last = i === tokens.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === token);
      if (!pair) break;
      const keyOffset = start(pair.key) ?? offset;
      if (last && wantKey) return keyOffset;
      node = pair.value;
      offset = isEmpty(pair.value) ? keyOffset : (start(pair.value) ?? keyOffset);
    } else if (isSeq(node)) {
      const item = /^(0|[1-9][0-9]*)$/.test(token) ? node.items[Number(token)] : undefined;
      if (item === undefined) break;
      node = item;
      offset = start(item) ?? offset;
    } else {
      break;
    }
  }
  return offset;
}

/** Pointer tokens of the deepest node whose source range holds `offset` (for syntax errors). */
function tokensAt(doc: Document, offset: number): string[] {
  const tokens: string[] = [];
  const holds = (n: unknown) => isNode(n) && n.range !== undefined && n.range !== null && offset >= n.range[0] && offset < n.range[2];
  let node: unknown = doc.contents;
  for (let depth = 0; depth < 1000; depth++) {
    let next: unknown;
    if (isMap(node)) {
      for (const p of node.items) {
        if (holds(p.key)) return isScalar(p.key) ? [...tokens, keyText(p.key)] : tokens;
        if (holds(p.value)) {
          tokens.push(keyText(p.key));
          next = p.value;
          break;
        }
      }
    } else if (isSeq(node)) {
      const i = node.items.findIndex(holds);
      if (i >= 0) {
        tokens.push(String(i));
        next = node.items[i];
      }
    }
    if (next === undefined) return tokens;
    node = next;
  }
  return tokens;
}

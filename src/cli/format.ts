/**
 * Renders diagnostics for people (`text`), for tools (`json`: the document of
 * docs/cli.md, here without summary and drift; `report.ts` adds them) and for GitHub
 * Actions (`github`: workflow commands that annotate the files of a pull request).
 */
import type { Diagnostic } from '../core/diagnostics.js';
import { type Paint, paint } from './terminal.js';

/** Output formats of {@link formatDiagnostics}. */
export type DiagnosticsFormat = 'text' | 'json' | 'github';

/**
 * Formats diagnostics, in the order given (pass `Diagnostics.sorted()` for a stable order).
 * Every format ends with a newline.
 *
 * @example
 * formatDiagnostics(list, 'text');
 * // mcpgen.yaml:3:1 error MCPGEN_MANIFEST_UNKNOWN_KEY unknown key "nmae"
 * //   at /nmae
 * //   help: did you mean "name"?
 * // 1 error, 0 warnings
 */
export function formatDiagnostics(list: Diagnostic[], format: DiagnosticsFormat, colors: Paint = paint(false)): string {
  switch (format) {
    case 'json':
      return formatJson(list);
    case 'github':
      return list.map(formatGithub).join('');
    default:
      return formatText(list, colors);
  }
}

/**
 * Beyond this column a position means little to a reader (a minified JSON spec is one line of
 * hundreds of kilobytes: `asana.json:1:375401`), so the place is given as `file#pointer` instead.
 */
export const MAX_SHOWN_COLUMN = 200;

/** Whether `d` is located far along a very long line and has a pointer to name the place by. */
function byPointer(d: Diagnostic): boolean {
  return d.location.col > MAX_SHOWN_COLUMN && d.location.pointer !== '';
}

/** `file:line:col`, leaving out the parts that are unknown (0); `file#pointer` far along a long line. */
function position(d: Diagnostic): string {
  const { file, line, col, pointer } = d.location;
  if (byPointer(d)) return `${file}#${pointer}`;
  if (line <= 0) return file;
  return col > 0 ? `${file}:${line}:${col}` : `${file}:${line}`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Plain text; with colours (a TTY), the severity is red or yellow and the location lines dim.
 * A message's further lines (a list) and a help's keep their line breaks, indented under the
 * diagnostic so that the next one still starts at the margin.
 */
function formatText(list: Diagnostic[], c: Paint): string {
  const lines: string[] = [];
  for (const d of list) {
    const severity = d.severity === 'error' ? c.bold(c.red(d.severity)) : c.bold(c.yellow(d.severity));
    const [first = '', ...more] = splitLines(d.message);
    lines.push(`${c.bold(position(d))} ${severity} ${c.dim(d.code)} ${first}`);
    for (const l of more) lines.push(`  ${l}`);
    if (d.location.pointer !== '' && !byPointer(d)) lines.push(c.dim(`  at ${d.location.pointer}`));
    if (d.help !== '') {
      const [h = '', ...rest] = splitLines(d.help);
      lines.push(`  ${c.cyan('help:')} ${h}`);
      for (const l of rest) lines.push(`        ${l}`);
    }
  }
  const errors = list.filter((d) => d.severity === 'error').length;
  const counts = `${plural(errors, 'error')}, ${plural(list.length - errors, 'warning')}`;
  lines.push(errors > 0 ? c.red(counts) : list.length > 0 ? c.yellow(counts) : counts);
  return lines.join('\n') + '\n';
}

/** The lines of a message or help (any line break), without trailing spaces. */
function splitLines(s: string): string[] {
  return s.split(/\r\n|\r|\n|\u2028|\u2029/).map((l) => l.trimEnd());
}

/** A diagnostic as `--format json` prints it. */
export type DiagnosticJson = Pick<Diagnostic, 'code' | 'severity' | 'message' | 'help' | 'location'>;

/** A diagnostic rebuilt field by field, so the key order is fixed whatever order the object was made in. */
export function diagnosticJson(d: Diagnostic): DiagnosticJson {
  return {
    code: d.code,
    severity: d.severity,
    message: d.message,
    help: d.help,
    location: { file: d.location.file, pointer: d.location.pointer, line: d.location.line, col: d.location.col },
  };
}

/** The `--format json` document with diagnostics only (no summary, no drift): the shape is in docs/cli.md. */
function formatJson(list: Diagnostic[]): string {
  return JSON.stringify({ diagnostics: list.map(diagnosticJson), summary: null, drift: [] }, null, 2) + '\n';
}

/** Escapes the message part of a workflow command (what follows `::`). */
export function escapeGithubData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Escapes a property value of a workflow command (`file=…`, `title=…`). */
export function escapeGithubProperty(s: string): string {
  return escapeGithubData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

function formatGithub(d: Diagnostic): string {
  const props = [`file=${escapeGithubProperty(d.location.file)}`];
  if (d.location.line > 0) props.push(`line=${d.location.line}`);
  // far along a long line the column is noise: the annotation keeps the line and names the pointer
  const far = byPointer(d);
  if (d.location.line > 0 && d.location.col > 0 && !far) props.push(`col=${d.location.col}`);
  props.push(`title=${escapeGithubProperty(d.code)}`);
  const message = far ? `${d.message} (at ${d.location.pointer})` : d.message;
  const text = d.help !== '' ? `${message} (help: ${d.help})` : message;
  return `::${d.severity} ${props.join(',')}::${escapeGithubData(text)}\n`;
}

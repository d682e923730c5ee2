/**
 * A POSIX shell word for any text: the one quoting of every command line mcpgen prints (client
 * lines, `mcpgen fix <file>`, `mcpgen init … --tag <tag>`), so a printed line runs as shown.
 */

/** `value` itself when it is plainly safe, else single-quoted (a `'` inside as `'\''`). */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * One-line structured logging to stderr. stdout belongs to the stdio JSON-RPC stream, so
 * nothing in the runtime may ever write to it (no `console.log`).
 */

/** Severity of a log line, lowest first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

let threshold: LogLevel = 'info';

/** Where log lines go; replaceable for tests. Defaults to `process.stderr`. */
export type LogSink = (line: string) => void;

let sink: LogSink = (line) => {
  process.stderr.write(line);
};

/** Parses a level name (case-insensitive); `undefined` when the text names no level. */
export function parseLogLevel(value: string | undefined): LogLevel | undefined {
  const v = value?.trim().toLowerCase();
  return v === 'debug' || v === 'info' || v === 'warn' || v === 'error' ? v : undefined;
}

/** Sets the lowest level that is written (default `info`). */
export function setLogLevel(level: LogLevel): void {
  threshold = level;
}

/** Whether a line of `level` is written now (to skip building data for one that is not). */
export function logsAt(level: LogLevel): boolean {
  return RANK[level] >= RANK[threshold];
}

/** Current threshold. */
export function getLogLevel(): LogLevel {
  return threshold;
}

/** Redirects log output (tests); returns the previous sink so it can be restored. */
export function setLogSink(next: LogSink): LogSink {
  const prev = sink;
  sink = next;
  return prev;
}

/** Renders `data` as compact JSON; errors keep their name, message and code; never throws. */
function render(data: unknown): string {
  try {
    const text = JSON.stringify(data, (_key, value: unknown) => {
      if (value instanceof Error) {
        const out: Record<string, unknown> = { name: value.name, message: value.message };
        const code = (value as { code?: unknown }).code;
        if (code !== undefined) out.code = code;
        return out;
      }
      return typeof value === 'bigint' ? value.toString() : value;
    });
    return text ?? String(data);
  } catch {
    return String(data);
  }
}

/**
 * Writes ONE line `<ISO time> <LEVEL> <message> <data as JSON>` to stderr, if `level` reaches
 * the threshold. Line breaks in the message are escaped so every entry stays on one line.
 */
export function log(level: LogLevel, message: string, data?: unknown): void {
  if (RANK[level] < RANK[threshold]) return;
  let line = `${new Date().toISOString()} ${level.toUpperCase()} ${message.replace(/\r\n|\r|\n|\u2028|\u2029/g, '\\n')}`;
  if (data !== undefined) line += ' ' + render(data).replace(/\u2028|\u2029/g, '\\n');
  try {
    sink(line + '\n');
  } catch {
    // Logging must never break a tool call (e.g. stderr closed).
  }
}

/**
 * Where the audit trail's lines go ({@link AuditSink}): a JSON Lines file ({@link FileSink}, the
 * chained store, whose end is read back to continue the chain and to find a line torn by a crash or
 * a full disk), stderr ({@link StderrSink}); a shared store can be one too. And which file: the
 * configured one, `<PREFIX>_AUDIT_FILE`, or an instance's own beside it ({@link instanceFile}).
 *
 * This file is copied into every generated project that has `policy.audit`.
 */
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { AuditConfig } from './policy-types.js';

/** What a sink holds at its end: its last whole line, and the bytes of a torn one after it (a write cut short). */
export type SinkTail = { readonly last?: string; readonly tornBytes?: number };

/** Where lines go: the file and stderr by default; a shared store can be one too. */
export interface AuditSink {
  /** Appends one line (`line` has no trailing newline). */
  append(line: string): Promise<void>;
  /** Appends several lines at once, in order (none has a trailing newline); optional: else each goes through `append`. */
  appendLines?(lines: readonly string[]): Promise<void>;
  close(): Promise<void>;
  /** The last line already stored (no newline), so that a chain continues; `undefined` when empty. Optional. */
  lastLine?(): Promise<string | undefined>;
  /** The last whole line and the size of a torn line after it; the chained store's, read at start and after a failed write. Optional. */
  tail?(): Promise<SinkTail>;
}

/**
 * Appends to a JSON Lines file (created with its directory on first use), one write per group of
 * lines. A file that ends in a torn line (no newline: a crash mid-write, or a write cut short by a
 * full disk) gets the next line on a line of its own; after a failed write the end of the file is
 * looked at again before the next, so a partial line never merges into the next one.
 */
export class FileSink implements AuditSink {
  private handle: Promise<FileHandle> | undefined;
  /** Whether the file's end is known: false at start and after a failed write. */
  private known = false;
  private torn = false;
  constructor(readonly path: string) {}

  private opened(): Promise<FileHandle> {
    if (this.handle === undefined) {
      const handle = (async () => {
        await mkdir(dirname(this.path), { recursive: true });
        return open(this.path, 'a+');
      })();
      // a failed open is tried again at the next line
      handle.catch(() => this.handle === handle && (this.handle = undefined));
      this.handle = handle;
    }
    return this.handle;
  }

  append(line: string): Promise<void> {
    return this.appendLines([line]);
  }

  async appendLines(lines: readonly string[]): Promise<void> {
    const handle = await this.opened();
    if (!this.known) await this.tail();
    try {
      // one write call per group (appendFile's general machinery costs several times more per call)
      const data = Buffer.from((this.torn ? '\n' : '') + lines.join('\n') + '\n', 'utf8');
      for (let at = 0; at < data.length; ) at += (await handle.write(data, at, data.length - at)).bytesWritten;
    } catch (err) {
      // part of it may be in the file: look again before the next write
      this.known = false;
      throw err;
    }
    this.torn = false;
  }

  async lastLine(): Promise<string | undefined> {
    return (await this.tail()).last;
  }

  /** Reads the end of the file backwards: the last whole line, and the size of a torn line after it. */
  async tail(): Promise<SinkTail> {
    const handle = await this.opened();
    let pos = (await handle.stat()).size;
    const size = pos;
    let buf = Buffer.alloc(0);
    // the newline ending the last whole line, and the one before it
    let end = -1;
    while (pos > 0) {
      const n = Math.min(65_536, pos);
      pos -= n;
      buf = Buffer.concat([(await handle.read(Buffer.alloc(n), 0, n, pos)).buffer, buf]);
      // what was found stands n bytes further on in the longer buffer
      end = end >= 0 ? end + n : buf.lastIndexOf(0x0a);
      if (end < 0) continue;
      const start = end > 0 ? buf.lastIndexOf(0x0a, end - 1) : -1;
      if (start >= 0 || pos === 0) {
        const torn = buf.length - end - 1;
        this.known = true;
        this.torn = torn > 0;
        return { last: buf.subarray(start + 1, end).toString('utf8'), ...(torn > 0 ? { tornBytes: torn } : {}) };
      }
    }
    this.known = true;
    this.torn = size > 0;
    return size > 0 ? { tornBytes: size } : {};
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    if (handle) await (await handle.catch(() => undefined))?.close();
  }
}

/** Writes each line to stderr as `audit <json>` (never to stdout: it belongs to stdio's protocol stream). */
export class StderrSink implements AuditSink {
  append(line: string): Promise<void> {
    return this.appendLines([line]);
  }
  appendLines(lines: readonly string[]): Promise<void> {
    return new Promise((done, fail) => {
      process.stderr.write(lines.map((line) => `audit ${line}\n`).join(''), (err) => (err ? fail(err) : done()));
    });
  }
  async close(): Promise<void> {}
}

/** The audit file: `<PREFIX>_AUDIT_FILE` (when set) overrides `config.file`; resolved against the working directory. */
export function auditFile(config: AuditConfig, envPrefix: string, env: NodeJS.ProcessEnv): string | undefined {
  const fromEnv = env[`${envPrefix}_AUDIT_FILE`]?.trim();
  const file = fromEnv !== undefined && fromEnv !== '' ? fromEnv : config.file;
  return file === undefined ? undefined : resolve(file);
}

/** The audit file of instance `instance`: `<dir>/<name>.<instance>.<ext>` beside `file` (`<name>.<instance>` when it has no extension). */
export function instanceFile(file: string, instance: string): string {
  const m = /^(.*?)(\.[A-Za-z0-9]{1,8})?$/.exec(file)!;
  return `${m[1]}.${instance}${m[2] ?? ''}`;
}

/**
 * The audit trail (manifest `policy.audit`): every tool invocation and completion, refusal,
 * session, prompt, resource read… is one JSON line, appended to a file, to stderr, or both — and emitted as an
 * OpenTelemetry log record (audit-otel.ts; a no-op without a LoggerProvider).
 *
 * - One line per event, keys in a fixed order: `time`, `id`, `instance` (several instances only), `event`, `session`, `client`, `oauthClient`, `era`,
 *   `primitive`, `callId`, `parentCallId`, `arguments`, `outcome`, `httpStatus`, `durationMs`, `detail`, and with
 *   `chain: true` `prev` = hex SHA-256 of the previous line's exact text (without its newline; the
 *   first line of a file has 64 zeros). A file that already exists continues its chain.
 * - Arguments are summarised and redacted once, when the event is recorded: configured field
 *   names at any depth (case-insensitive) and every secret value inside strings become
 *   `"[redacted]"`, and what is past {@link AUDIT_ARGUMENT_BYTES} bytes (or 16 levels deep) is
 *   left out, with `argumentsCut: {bytes, cap}` saying how large the arguments were.
 * - Appends go through one bounded queue per log, written in groups (one write for every line
 *   waiting): concurrent events never interleave or get lost, and the chain is in file order. A
 *   line is written before {@link AuditLog.record} resolves. While {@link MAX_PENDING_EVENTS}
 *   events wait, a new call is refused (its `tool.invoked` cannot be queued) instead of memory
 *   growing with the queue; the terminal events of calls that ran are always queued.
 * - When a `tool.invoked` line cannot be written, `record` rejects ({@link AuditWriteError}) and
 *   the call is refused with -32603 before it runs, unless `onWriteError: continue` (then the
 *   failure is logged to stderr). A terminal line that cannot be written never turns a call that
 *   ran into an error: the failure is logged and the result returned.
 *
 * Per instance: the queue and the chain's last hash live in this process. Two processes appending
 * to one chained file break the chain, so each instance keeps its own: with `<PREFIX>_REDIS_URL`
 * (several instances sharing state) the file is `<name>.<instance id>.<ext>` beside the configured
 * one ({@link instanceFile}) and every line carries `instance` after `id`; merging the instances'
 * trails into one order is the log collector's job, and `verify-audit` checks every file.
 *
 * This file is copied into every generated project that has `policy.audit`.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { scrub } from '../operation/auth.js';
import { OtelLogSink } from './audit-otel.js';

export { redact } from './redact.js';

import { log as logLine } from '../core/log.js';
import type { AuditConfig, AuditEventName } from './policy-types.js';

/**
 * One event, as the pipeline and the server report it. `session`: the legacy session id (`null`
 * for modern requests, which have none); `client`: the client identity; `primitive`: tool or
 * prompt name, resource URI, preprocessor name; `callId`: the logical call (tool events);
 * `arguments` are redacted before writing; `outcome`: `ok` | `error` | `denied` | `limited` |
 * `opened` | `closed` …; `detail`: why denied/limited/failed, never a secret (scrubbed anyway).
 */
export type AuditInput = {
  readonly name: AuditEventName;
  readonly session?: string | null;
  readonly client: string;
  /** The OAuth client (`client_id`) of the access token the call came with, beside `client` (its `sub`); tool events of OAuth requests only. */
  readonly oauthClient?: string;
  readonly era: 'legacy' | 'modern';
  readonly primitive?: string;
  readonly callId?: string;
  /** A nested call's (an operation a handler called through `ctx.api`): the `callId` of the handler's call. */
  readonly parentCallId?: string;
  readonly arguments?: unknown;
  /** Size of `arguments` as JSON, when known (tool calls measure it): written with `argumentsCut` when the summary leaves part out. */
  readonly argumentBytes?: number;
  readonly outcome?: string;
  readonly httpStatus?: number;
  readonly durationMs?: number;
  readonly detail?: string;
};

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

/** An audit line could not be written. */
export class AuditWriteError extends Error {
  override name = 'AuditWriteError';
}

const ZERO_HASH = '0'.repeat(64);
const REDACTED = '[redacted]';
const MAX_DEPTH = 64;
/** Most bytes of JSON an event's `arguments` take in its line; the rest is left out (and said so). */
export const AUDIT_ARGUMENT_BYTES = 4096;
/** Deepest level of arguments written to a line; deeper values are `"[too deep]"`. */
const SUMMARY_DEPTH = 16;
/** Events waiting to be written beyond which a new call is refused (the terminal events of running calls are still queued). */
export const MAX_PENDING_EVENTS = 1024;
/** Most events, and bytes, written in one write (a group): a shutdown waits for the write under way, even on a slow disk or pipe. */
const MAX_GROUP_EVENTS = 256;
const MAX_GROUP_BYTES = 65_536;

/** Hex SHA-256 of a line's text (UTF-8), as `prev` carries it. */
export function lineHash(line: string): string {
  return createHash('sha256').update(line, 'utf8').digest('hex');
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

/** A summary of arguments for an audit line: the redacted value, and whether part of it was left out. */
export type ArgumentSummary = { readonly value: unknown; readonly cut: boolean };

/**
 * A redacted copy of `value` of at most about `cap` bytes of JSON, made in one walk that stops
 * there: like {@link redact} (fields by name, secrets inside strings and keys), but a string
 * longer than what is left is shortened (`…[+N characters]`), an object or array that does not
 * fit ends with a `"…"` entry counting what was left out, and nesting past 16 levels is
 * `"[too deep]"`. Its cost is bounded by `cap`, whatever the size of `value`.
 */
export function summarize(value: unknown, fields: readonly string[], secrets: readonly string[], cap: number = AUDIT_ARGUMENT_BYTES): ArgumentSummary {
  const names = new Set(fields.map((f) => f.toLowerCase()));
  // a secret that straddles the cut is scrubbed whole before the cut is made
  const longest = secrets.reduce((n, s) => Math.max(n, s.length), 0);
  let left = cap;
  let cut = false;
  const text = (s: string): string => {
    const room = Math.max(16, left - 2);
    if (s.length <= room) {
      const out = scrub(s, secrets);
      left -= out.length + 2;
      return out;
    }
    cut = true;
    const out = `${scrub(s.slice(0, room + longest), secrets).slice(0, room)}…[+${s.length - room} characters]`;
    left -= out.length + 2;
    return out;
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return text(v);
    if (typeof v === 'bigint') return text(v.toString());
    if (v === null || typeof v !== 'object') {
      left -= typeof v === 'number' ? String(v).length : 5;
      return v;
    }
    if (depth >= SUMMARY_DEPTH) {
      cut = true;
      left -= 12;
      return '[too deep]';
    }
    left -= 2;
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (let i = 0; i < v.length; i++) {
        if (left <= 0) {
          cut = true;
          out.push(`…[+${v.length - i} items]`);
          break;
        }
        out.push(walk(v[i], depth + 1));
        left -= 1;
      }
      return out;
    }
    const keys = Object.keys(v);
    const out: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      if (left <= 0) {
        cut = true;
        out['…'] = `+${keys.length - i} keys`;
        break;
      }
      const k = keys[i]!;
      const key = text(k);
      // defineProperty: a "__proto__" key stays a key
      Object.defineProperty(out, key, {
        value: names.has(k.toLowerCase()) ? ((left -= REDACTED.length + 2), REDACTED) : walk((v as Record<string, unknown>)[k], depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      left -= 2;
    }
    return out;
  };
  const summary = walk(value, 0);
  return { value: summary, cut };
}

/** Every string and number under `value` (a redacted field's value may be an array or object). */
function leaves(value: unknown, out: string[], depth: number): void {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint') out.push(String(value));
  else if (value !== null && typeof value === 'object' && depth <= MAX_DEPTH) for (const v of Object.values(value)) leaves(v, out, depth + 1);
}

/** String values of `fields` anywhere in `value` (to scrub them from error texts too). */
function fieldValues(value: unknown, fields: ReadonlySet<string>, out: string[] = [], depth = 0): string[] {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return out;
  for (const [k, v] of Object.entries(value)) {
    if (fields.has(k.toLowerCase())) leaves(v, out, depth + 1);
    else fieldValues(v, fields, out, depth + 1);
  }
  return out;
}

/** Options of {@link AuditLog}: `file` (resolved) overrides `config.file`; `sinks` replace the file and stderr sinks (tests, shared stores); `secrets` are read at each event. */
export type AuditLogOptions = { file?: string; sinks?: AuditSink[]; secrets?: () => readonly string[]; now?: () => Date; instance?: string };

/** An event rendered and waiting in the queue. */
type Pending = { readonly text: string; readonly done: (err?: unknown) => void };

/** A line's text with `prev` added as its last key (what `JSON.stringify({...fields, prev})` gives). */
function withPrev(text: string, prev: string): string {
  return `${text.slice(0, -1)},"prev":"${prev}"}`;
}

/** The audit trail of one server process. */
export class AuditLog {
  /** Whether a call is refused (-32603) when its `tool.invoked` event cannot be written (`onWriteError: fail`, the default). */
  readonly failClosed: boolean;
  private readonly sinks: readonly AuditSink[];
  private readonly fields: readonly string[];
  private readonly secrets: () => readonly string[];
  private readonly now: () => Date;
  private readonly chain: boolean;
  /** This instance's id, in every line (several instances sharing state through Redis). */
  private readonly instance: string | undefined;
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  /** Hash of the last line the chained store holds (valid while `synced`). */
  private prev: string | undefined;
  /** Whether the end of the chained store is known: false at start and after a failed write. */
  private synced = false;
  /** A look at the store's end was asked for (`open`), with or without events to write. */
  private wantSync = false;
  /** Events of failed writes not yet noted in the trail. */
  private lost = 0;
  private closed = false;

  constructor(config: AuditConfig, options: AuditLogOptions = {}) {
    this.failClosed = config.onWriteError !== 'continue';
    this.fields = config.redact ?? [];
    this.secrets = options.secrets ?? (() => []);
    this.now = options.now ?? (() => new Date());
    this.chain = config.chain === true;
    this.instance = options.instance;
    const file = options.file ?? (config.file === undefined ? undefined : resolve(config.file));
    // and every line as an OpenTelemetry log record too (a no-op without a LoggerProvider): collectors merge the instances' trails
    this.sinks = options.sinks ?? [
      ...(file !== undefined ? [new FileSink(file)] : []),
      ...(config.stderr === true || file === undefined ? [new StderrSink()] : []),
      new OtelLogSink(),
    ];
  }

  /** `text` without secrets nor the values `args` has in redacted fields (for `detail`). */
  hide(text: string, args?: unknown): string {
    const secrets = this.secrets();
    if (this.fields.length === 0) return scrub(text, secrets);
    return scrub(text, [...secrets, ...fieldValues(args, new Set(this.fields.map((f) => f.toLowerCase())))]);
  }

  /** The line of `input` (without `prev`), keys in the fixed order, undefined ones left out; arguments summarised once. */
  private render(input: AuditInput): Record<string, unknown> {
    const secrets = this.secrets();
    const summary = input.arguments === undefined ? undefined : summarize(input.arguments, this.fields, secrets);
    const line: Record<string, unknown> = {
      time: this.now().toISOString(),
      id: randomUUID(),
      instance: this.instance,
      event: input.name,
      session: input.session ?? null,
      client: input.client,
      oauthClient: input.oauthClient,
      era: input.era,
      primitive: input.primitive,
      callId: input.callId,
      parentCallId: input.parentCallId,
      arguments: summary?.value,
      argumentsCut:
        summary?.cut === true ? { ...(input.argumentBytes !== undefined ? { bytes: input.argumentBytes } : {}), cap: AUDIT_ARGUMENT_BYTES } : undefined,
      outcome: input.outcome,
      httpStatus: input.httpStatus,
      durationMs: input.durationMs,
      detail: input.detail === undefined ? undefined : scrub(input.detail, secrets),
    };
    for (const k of Object.keys(line)) if (line[k] === undefined) delete line[k];
    return line;
  }

  /** Writes every waiting event in one go per sink, in order, until none waits. */
  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0 || this.wantSync) {
        this.wantSync = false;
        // a group is bounded, so that one write finishes soon even on a slow disk or pipe (a shutdown waits for it)
        let count = 0;
        for (
          let bytes = 0;
          count < this.pending.length && count < MAX_GROUP_EVENTS && (count === 0 || bytes + this.pending[count]!.text.length <= MAX_GROUP_BYTES);
          count++
        )
          bytes += this.pending[count]!.text.length;
        const batch = this.pending.splice(0, count);
        this.writing = batch.length;
        try {
          await this.writeBatch(batch);
          for (const p of batch) p.done();
        } catch (err) {
          // the store's end is unknown now (part of the group may be in it): looked at before the next write
          this.synced = false;
          this.lost += batch.length;
          for (const p of batch) p.done(err);
        } finally {
          this.writing = 0;
        }
      }
    } finally {
      // cleared in the same turn as the last look at the queue: an event queued after it starts a new flush
      this.flushing = undefined;
    }
  }

  /** The `trail.repaired` line's fields: what was found at the store's end, and what could not be written since. */
  private repairFields(tornBytes: number | undefined): Record<string, unknown> {
    const what = [
      tornBytes !== undefined
        ? `a torn line of ${tornBytes} bytes (a write cut short by a crash or a full disk) was left in place; the chain continues from the whole line before it`
        : '',
      this.lost > 0 ? `${this.lost} event${this.lost === 1 ? '' : 's'} could not be written since the last line` : '',
    ].filter((w) => w !== '');
    return {
      time: this.now().toISOString(),
      id: randomUUID(),
      ...(this.instance !== undefined ? { instance: this.instance } : {}),
      event: 'trail.repaired',
      session: null,
      client: 'server',
      outcome: 'repaired',
      detail: what.join('; '),
      ...(tornBytes !== undefined ? { torn: { bytes: tornBytes } } : {}),
      ...(this.lost > 0 ? { lost: this.lost } : {}),
    };
  }

  private async writeBatch(batch: readonly Pending[]): Promise<void> {
    const keeper = this.sinks.findIndex((s) => s.tail !== undefined || s.lastLine !== undefined);
    let prev = this.prev;
    const records = batch.map((p) => p.text);
    if (!this.synced) {
      const sink = keeper >= 0 ? this.sinks[keeper]! : undefined;
      const tail: SinkTail = sink === undefined ? {} : sink.tail ? await sink.tail() : { last: await sink.lastLine!() };
      prev = tail.last === undefined ? ZERO_HASH : lineHash(tail.last);
      if (tail.tornBytes !== undefined || this.lost > 0) records.unshift(JSON.stringify(this.repairFields(tail.tornBytes)));
    }
    if (records.length === 0) {
      this.prev = prev;
      this.synced = true;
      return;
    }
    const lines = records.map((text) => {
      if (!this.chain) return text;
      const line = withPrev(text, prev!);
      prev = lineHash(line);
      return line;
    });
    const results = await Promise.allSettled(
      this.sinks.map((s) =>
        s.appendLines ? s.appendLines(lines) : lines.reduce((chain: Promise<void>, l) => chain.then(() => s.append(l)), Promise.resolve()),
      ),
    );
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    // the chain follows what the chained store (the file) holds: lines it did not take are not
    // part of it, even when another sink (stderr) took them
    const stored = keeper >= 0 ? results[keeper]!.status === 'fulfilled' : failed.length < results.length;
    if (stored) {
      this.prev = prev;
      this.synced = true;
      this.lost = 0;
    }
    if (failed.length > 0) {
      const reason = failed[0]!.reason;
      throw new AuditWriteError(reason instanceof Error ? reason.message : String(reason));
    }
  }

  /** Whether {@link close} was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Events in the group being written now. */
  private writing = 0;

  /** Events waiting to be written. */
  get backlog(): number {
    return this.pending.length;
  }

  /**
   * Writes one event line; resolves once every sink has it. Rejects with {@link AuditWriteError}
   * when it cannot be written (or, `essential` aside, while {@link MAX_PENDING_EVENTS} events
   * wait) and `onWriteError` is `fail`; with `continue` logs the failure and resolves.
   * `essential`: the terminal event of a call that ran, queued whatever the backlog.
   */
  record(input: AuditInput, options: { readonly essential?: boolean } = {}): Promise<void> {
    let done: Promise<void>;
    if (this.closed) done = Promise.reject(new AuditWriteError('the audit log is closed'));
    else if (options.essential !== true && this.pending.length >= MAX_PENDING_EVENTS) {
      done = Promise.reject(new AuditWriteError(`the audit trail is behind: ${this.pending.length} events wait to be written; retry shortly`));
    } else {
      // rendered and serialised once, now: what waits in the queue is the line's text alone
      const text = JSON.stringify(this.render(input));
      done = new Promise<void>((ok, fail) => this.pending.push({ text, done: (err) => (err === undefined ? ok() : fail(err)) }));
      this.flushing ??= this.flush();
    }
    return done.catch((err: unknown) => {
      const failure = err instanceof AuditWriteError ? err : new AuditWriteError(err instanceof Error ? err.message : String(err));
      if (this.failClosed) throw failure;
      logLine('error', `audit event ${input.name} could not be written`, { message: failure.message });
    });
  }

  /**
   * Looks at the end of the store now (at start), so that a torn last line left by a crash is
   * repaired at once with a `trail.repaired` event rather than at the first event. Never rejects.
   */
  async open(): Promise<void> {
    if (this.closed || this.synced) return;
    this.wantSync = true;
    this.flushing ??= this.flush();
    await this.flushing;
    if (!this.synced) logLine('error', 'audit: cannot open the audit trail; every event will be tried again');
  }

  /**
   * Waits for pending lines (at most `timeoutMs`), then closes the sinks; later events fail to
   * write. Resolves with how many events were left unwritten when time ran out (also logged).
   */
  async close(timeoutMs: number = Number.POSITIVE_INFINITY): Promise<{ readonly unwritten: number }> {
    if (this.closed) return { unwritten: 0 };
    this.closed = true;
    let timer: NodeJS.Timeout | undefined;
    const late = Number.isFinite(timeoutMs) ? new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), Math.max(0, timeoutMs)))) : undefined;
    const drained = (async () => {
      while (this.flushing) await this.flushing;
      return 'drained' as const;
    })();
    const outcome = await (late ? Promise.race([drained, late]) : drained);
    clearTimeout(timer);
    if (outcome === 'late') {
      const unwritten = this.pending.length + this.writing;
      logLine('error', `audit: ${unwritten} event${unwritten === 1 ? '' : 's'} could not be written before the server exits (the drain time ran out)`, {
        unwritten,
      });
      return { unwritten };
    }
    await Promise.all(this.sinks.map((s) => s.close()));
    return { unwritten: 0 };
  }
}

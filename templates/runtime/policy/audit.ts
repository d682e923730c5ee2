/**
 * The audit trail (manifest `policy.audit`): every tool invocation and completion, refusal,
 * session, prompt, resource read… is one JSON line, appended to a file, to stderr, or both — and emitted as an
 * OpenTelemetry log record (audit-otel.ts; a no-op without a LoggerProvider).
 *
 * - One line per event, keys in a fixed order: `time`, `id`, `instance` (several instances only), `event`, `session`, `client`, `oauthClient`, `era`,
 *   `primitive`, `callId`, `parentCallId`, `arguments`, `outcome`, `httpStatus`, `durationMs`, `detail`, and with
 *   `chain: true` `prev` = hex SHA-256 of the previous line's exact text (without its newline; the
 *   first line of a file has 64 zeros). A file that already exists continues its chain.
 * - Arguments are summarised and redacted once, when the event is recorded (audit-summary.ts),
 *   with `argumentsCut: {bytes, cap}` saying how large the arguments were when part is left out.
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
 * Where the lines go is audit-sinks.ts, the hash chain audit-chain.ts; the events of a request
 * are made in observed.ts and written by audit-step.ts.
 *
 * This file is copied into every generated project that has `policy.audit`.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { log as logLine } from '../core/log.js';
import { scrub } from '../operation/auth.js';
import type { Repair } from './audit-chain.js';
import { chained, chainFrom, repairFields } from './audit-chain.js';
import { OtelLogSink } from './audit-otel.js';
import type { AuditSink, SinkTail } from './audit-sinks.js';
import { FileSink, StderrSink } from './audit-sinks.js';
import { AUDIT_ARGUMENT_BYTES, fieldValues, summarize } from './audit-summary.js';
import type { AuditConfig, AuditEventName } from './policy-types.js';

export { redact } from './redact.js';

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

/** An audit line could not be written. */
export class AuditWriteError extends Error {
  override name = 'AuditWriteError';
}

/** Events waiting to be written beyond which a new call is refused (the terminal events of running calls are still queued). */
export const MAX_PENDING_EVENTS = 1024;
/** Most events, and bytes, written in one write (a group): a shutdown waits for the write under way, even on a slow disk or pipe. */
const MAX_GROUP_EVENTS = 256;
const MAX_GROUP_BYTES = 65_536;

/** Options of {@link AuditLog}: `file` (resolved) overrides `config.file`; `sinks` replace the file and stderr sinks (tests, shared stores); `secrets` are read at each event. */
export type AuditLogOptions = { file?: string; sinks?: AuditSink[]; secrets?: () => readonly string[]; now?: () => Date; instance?: string };

/** An event rendered and waiting in the queue. */
type Pending = { readonly text: string; readonly done: (err?: unknown) => void };

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

  private async writeBatch(batch: readonly Pending[]): Promise<void> {
    const keeper = this.sinks.findIndex((s) => s.tail !== undefined || s.lastLine !== undefined);
    let prev = this.prev;
    const records = batch.map((p) => p.text);
    if (!this.synced) {
      const sink = keeper >= 0 ? this.sinks[keeper]! : undefined;
      const tail: SinkTail = sink === undefined ? {} : sink.tail ? await sink.tail() : { last: await sink.lastLine!() };
      prev = chainFrom(tail.last);
      if (tail.tornBytes !== undefined || this.lost > 0) {
        const repair: Repair = {
          lost: this.lost,
          now: this.now(),
          ...(tail.tornBytes !== undefined ? { tornBytes: tail.tornBytes } : {}),
          ...(this.instance !== undefined ? { instance: this.instance } : {}),
        };
        records.unshift(JSON.stringify(repairFields(repair)));
      }
    }
    if (records.length === 0) {
      this.prev = prev;
      this.synced = true;
      return;
    }
    let lines = records;
    if (this.chain) ({ lines, prev } = chained(records, prev!));
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

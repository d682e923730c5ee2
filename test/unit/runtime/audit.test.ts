import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { CallToolResult, InputRequiredResult, Server, ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError } from '@modelcontextprotocol/server';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { Outcome, Step, ToolCall, ToolResult } from '../../../templates/runtime/pipeline/pipeline.js';
import { refuse, runPipeline } from '../../../templates/runtime/pipeline/pipeline.js';
import { AuditLog, AuditWriteError, MAX_PENDING_EVENTS, redact } from '../../../templates/runtime/policy/audit.js';
import { lineHash } from '../../../templates/runtime/policy/audit-chain.js';
import type { AuditSink } from '../../../templates/runtime/policy/audit-sinks.js';
import { auditFile, FileSink } from '../../../templates/runtime/policy/audit-sinks.js';
import { auditStep } from '../../../templates/runtime/policy/audit-step.js';
import { AUDIT_ARGUMENT_BYTES, summarize } from '../../../templates/runtime/policy/audit-summary.js';
import { verifyAuditFile } from '../../../templates/runtime/policy/verify-audit.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../../..');
const logged: string[] = [];
setLogSink((line) => void logged.push(line));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mcpgen-audit-'));
  logged.length = 0;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A sink keeping lines in memory. */
function memory(): AuditSink & { lines: string[] } {
  const lines: string[] = [];
  return { lines, append: async (l) => void lines.push(l), close: async () => undefined };
}
const failing: AuditSink = { append: () => Promise.reject(new Error('disk full')), close: async () => undefined };

const ok = (text = 'done'): CallToolResult => ({ content: [{ type: 'text', text }] });
const asks: InputRequiredResult = { resultType: 'input_required', inputRequests: {} } as unknown as InputRequiredResult;

/** A tool call built by hand. */
function toolCall(over: Partial<ToolCall> = {}): ToolCall {
  return {
    name: 'create_pet',
    target: { kind: 'persist', name: 'create_pet' },
    args: { name: 'Rex', owner: { Password: 'hunter22', ssn: '123-45-6789' } },
    argumentBytes: 62,
    server: {} as Server,
    ctx: { sessionId: 'sess-1' } as unknown as ServerContext,
    era: 'legacy',
    identity: 'alice',
    callId: 'call-1',
    firstRound: true,
    state: {},
    signal: new AbortController().signal,
    gate: {} as ToolCall['gate'],
    ...over,
  };
}

/** Runs `call` through `steps` and a dispatch answering with a result alone; resolves with the result. */
async function runSteps(steps: Step[], dispatch: (call: ToolCall) => Promise<ToolResult>, call: ToolCall): Promise<ToolResult> {
  return (await runPipeline(steps, async (c) => ({ result: await dispatch(c) }), call)).result;
}

const parse = (lines: readonly string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('AuditLog', () => {
  it('writes one line per event, keys in a fixed order, undefined left out, session null by default', async () => {
    const sink = memory();
    const log = new AuditLog({}, { sinks: [sink], now: () => new Date('2026-01-02T03:04:05.000Z') });
    await log.record({
      name: 'tool.completed',
      client: 'alice',
      era: 'modern',
      primitive: 'get_pet',
      callId: 'c1',
      outcome: 'ok',
      httpStatus: 200,
      durationMs: 12,
    });
    await log.record({ name: 'session.opened', session: 's1', client: 'bob', era: 'legacy', outcome: 'opened' });
    const [a, b] = parse(sink.lines);
    expect(Object.keys(a!)).toEqual(['time', 'id', 'event', 'session', 'client', 'era', 'primitive', 'callId', 'outcome', 'httpStatus', 'durationMs']);
    expect(a).toMatchObject({ time: '2026-01-02T03:04:05.000Z', event: 'tool.completed', session: null, client: 'alice', era: 'modern' });
    expect(a!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(b).toEqual({ time: '2026-01-02T03:04:05.000Z', id: b!.id, event: 'session.opened', session: 's1', client: 'bob', era: 'legacy', outcome: 'opened' });
    expect(a!.id).not.toBe(b!.id);
  });

  it('redacts arguments and scrubs secrets from arguments and detail', async () => {
    const sink = memory();
    const log = new AuditLog({ redact: ['password', 'SSN'] }, { sinks: [sink], secrets: () => ['sk-live-123456'] });
    await log.record({
      name: 'tool.failed',
      client: 'a',
      era: 'modern',
      arguments: { q: 'key sk-live-123456 here', deep: [{ PASSWORD: { x: 1 } }] },
      detail: 'upstream said sk-live-123456',
    });
    expect(sink.lines[0]).not.toContain('sk-live-123456');
    expect(JSON.parse(sink.lines[0]!)).toMatchObject({
      arguments: { q: 'key [redacted] here', deep: [{ PASSWORD: '[redacted]' }] },
      detail: 'upstream said [redacted]',
    });
  });

  it('appends 200 concurrent events as 200 whole JSON lines, chained in file order, and verify-audit accepts them', async () => {
    const file = path.join(dir, 'nested', 'audit.jsonl');
    const log = new AuditLog({ chain: true }, { file });
    const big = 'x'.repeat(70_000); // longer than PIPE_BUF: appends must still not interleave
    const pending = Array.from({ length: 200 }, (_, i) =>
      log.record({ name: 'tool.invoked', client: `c${i % 4}`, era: 'modern', callId: String(i), arguments: { i, big: i % 50 === 0 ? big : 'small' } }),
    );
    await log.close(); // waits for the pending lines
    await Promise.all(pending);
    await expect(log.record({ name: 'tool.invoked', client: 'late', era: 'modern' })).rejects.toBeInstanceOf(AuditWriteError);
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(200);
    const events = parse(lines);
    expect(new Set(events.map((e) => e.callId)).size).toBe(200);
    expect(events[0]!.prev).toBe('0'.repeat(64));
    for (let i = 1; i < 200; i++) expect(events[i]!.prev).toBe(lineHash(lines[i - 1]!));
    expect(Object.keys(events[0]!).at(-1)).toBe('prev');
    await expect(verifyAuditFile(file)).resolves.toEqual({ ok: true, lines: 200, breaks: [], verified: [[1, 200]] });
  });

  it('continues the chain of an existing file across instances', async () => {
    const file = path.join(dir, 'audit.jsonl');
    const first = new AuditLog({ chain: true }, { file });
    await first.record({ name: 'session.opened', session: 's', client: 'a', era: 'legacy' });
    await first.record({ name: 'session.closed', session: 's', client: 'a', era: 'legacy' });
    await first.close();
    const second = new AuditLog({ chain: true }, { file });
    await second.record({ name: 'prompt.get', client: 'a', era: 'modern', primitive: 'p' });
    await second.close();
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    expect(JSON.parse(lines[2]!).prev).toBe(lineHash(lines[1]!));
    await expect(verifyAuditFile(file)).resolves.toEqual({ ok: true, lines: 3, breaks: [], verified: [[1, 3]] });
  });

  it('repairs a torn last line: a trail.repaired event on a line of its own, chained over it to the whole line before, and verify-audit goes on past it', async () => {
    const file = path.join(dir, 'audit.jsonl');
    const first = new AuditLog({ chain: true }, { file });
    for (let i = 0; i < 3; i++) await first.record({ name: 'tool.invoked', client: 'a', era: 'modern', callId: `c${i}` });
    await first.close();
    const whole = await readFile(file, 'utf8');
    // a crash mid-write leaves part of a line, without its newline
    const torn = '{"time":"2026-11-26T12:00:00.000Z","id":"x","ev';
    await writeFile(file, whole + torn);
    const log = new AuditLog({ chain: true }, { file });
    await log.open();
    await log.record({ name: 'tool.invoked', client: 'a', era: 'modern', callId: 'after' });
    await log.close();
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines).toHaveLength(7);
    expect(lines[3]).toBe(torn);
    const repaired = JSON.parse(lines[4]!) as Record<string, unknown>;
    expect(repaired).toMatchObject({
      event: 'trail.repaired',
      client: 'server',
      session: null,
      outcome: 'repaired',
      torn: { bytes: torn.length },
      prev: lineHash(lines[2]!),
    });
    expect(repaired.detail).toMatch(/^a torn line of \d+ bytes \(a write cut short by a crash or a full disk\) was left in place/);
    expect(JSON.parse(lines[5]!).prev).toBe(lineHash(lines[4]!));
    await expect(verifyAuditFile(file)).resolves.toEqual({
      ok: true,
      lines: 6,
      breaks: [
        {
          line: 4,
          reason: `a torn line of ${torn.length} bytes (a write cut short by a crash or a full disk), repaired by the trail.repaired event on line 5`,
          repaired: true,
        },
      ],
      verified: [
        [1, 3],
        [5, 6],
      ],
    });
    // a file that is nothing but a torn line
    const only = path.join(dir, 'only.jsonl');
    await writeFile(only, '{"time":"2026');
    const again = new AuditLog({ chain: true }, { file: only });
    await again.record({ name: 'tool.invoked', client: 'a', era: 'modern' });
    await again.close();
    const two = (await readFile(only, 'utf8')).trimEnd().split('\n');
    expect(two).toHaveLength(3);
    expect(JSON.parse(two[1]!)).toMatchObject({ event: 'trail.repaired', prev: '0'.repeat(64), torn: { bytes: 13 } });
    await expect(verifyAuditFile(only)).resolves.toMatchObject({ ok: true, breaks: [{ line: 1, repaired: true }] });
  });

  it('a write cut short (a full disk) never merges into the next line: the next write looks at the end first, and the trail says what was lost', async () => {
    const file = path.join(dir, 'audit.jsonl');
    const log = new AuditLog({ chain: true, onWriteError: 'continue' }, { file });
    await log.record({ name: 'tool.invoked', client: 'a', era: 'modern', callId: 'before' });
    // the disk fills: the next write leaves part of a line and fails
    const sink = (log as unknown as { sinks: FileSink[] }).sinks[0]!;
    const original = sink.appendLines.bind(sink);
    sink.appendLines = async (ls) => {
      const { appendFile } = await import('node:fs/promises');
      await appendFile(file, ls.join('\n').slice(0, 25));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    await log.record({ name: 'tool.invoked', client: 'a', era: 'modern', callId: 'lost' });
    sink.appendLines = original;
    await log.record({ name: 'tool.invoked', client: 'a', era: 'modern', callId: 'after' });
    await log.close();
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[1]).toHaveLength(25);
    expect(JSON.parse(lines[2]!)).toMatchObject({
      event: 'trail.repaired',
      torn: { bytes: 25 },
      lost: 1,
      prev: lineHash(lines[0]!),
      detail: expect.stringContaining('1 event could not be written since the last line'),
    });
    expect(JSON.parse(lines[3]!)).toMatchObject({ callId: 'after', prev: lineHash(lines[2]!) });
    await expect(verifyAuditFile(file)).resolves.toMatchObject({
      ok: true,
      breaks: [{ line: 2, repaired: true }],
      verified: [
        [1, 1],
        [3, 4],
      ],
    });
  });

  it('writes to stderr as "audit <json>" when no file is configured, never to stdout', async () => {
    const err: string[] = [];
    const out: string[] = [];
    const spyErr = vi
      .spyOn(process.stderr, 'write')
      .mockImplementation(((chunk: string, cb?: (e?: Error | null) => void) => (err.push(chunk), cb?.(), true)) as typeof process.stderr.write);
    const spyOut = vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string) => (out.push(chunk), true)) as typeof process.stdout.write);
    try {
      await new AuditLog({}).record({ name: 'resource.read', client: 'a', era: 'modern', primitive: 'pets://1', outcome: 'ok' });
    } finally {
      spyErr.mockRestore();
      spyOut.mockRestore();
    }
    expect(out).toEqual([]);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^audit \{"time":.*"event":"resource.read".*\}\n$/);
  });

  it('names each broken line and goes on past it: an edited line, a torn line, a removed one; the CLI prints them with the lines verified and exits 1', async () => {
    const file = path.join(dir, 'audit.jsonl');
    const log = new AuditLog({ chain: true }, { file });
    for (let i = 0; i < 6; i++) await log.record({ name: 'tool.invoked', client: 'a', era: 'modern', callId: `c${i}`, arguments: { n: i } });
    await log.close();
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    const cli = (f: string) =>
      run(process.execPath, ['--import', 'tsx', path.join(root, 'templates/runtime/policy/verify-audit.ts'), f], { cwd: root }).then(
        (r) => ({ code: 0, out: r.stdout }),
        (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
      );
    expect(await cli(file)).toEqual({ code: 0, out: 'ok: 6 lines\n' });
    expect((await cli(path.join(dir, 'missing.jsonl'))).code).toBe(2);

    const edited = path.join(dir, 'edited.jsonl');
    await writeFile(edited, lines.map((l, i) => (i === 3 ? l.replace('"n":3', '"n":33') : l)).join('\n') + '\n');
    await expect(verifyAuditFile(edited)).resolves.toMatchObject({
      ok: false,
      breaks: [{ line: 4, repaired: false }],
      verified: [
        [1, 3],
        [5, 6],
      ],
    });
    const printed = await cli(edited);
    expect(printed.code).toBe(1);
    expect(printed.out).toMatch(/^line 4: .*edited.*\nbroken: 6 lines; verified lines 1-3, 5-6\n$/);

    // a torn line nobody repaired, and an edit further on: both named, the rest verified
    await writeFile(edited, lines.map((l, i) => (i === 2 ? l.slice(0, 20) : i === 4 ? l.replace('"n":4', '"n":44') : l)).join('\n') + '\n');
    await expect(verifyAuditFile(edited)).resolves.toEqual({
      ok: false,
      lines: 6,
      breaks: [
        { line: 3, reason: 'not valid JSON', repaired: false },
        {
          line: 5,
          reason: 'its hash is not the "prev" of line 6: this line was edited (or the line after it removed, or a line inserted after it)',
          repaired: false,
        },
      ],
      verified: [
        [1, 2],
        [4, 4],
        [6, 6],
      ],
    });
    await writeFile(edited, lines.filter((_, i) => i !== 0).join('\n') + '\n');
    await expect(verifyAuditFile(edited)).resolves.toMatchObject({ ok: false, breaks: [{ line: 1 }] });
    await writeFile(edited, lines.map((l, i) => (i === 1 ? l.replace(/,"prev":"[0-9a-f]+"/, '') : l)).join('\n') + '\n');
    await expect(verifyAuditFile(edited)).resolves.toMatchObject({ ok: false, breaks: [{ line: 2, reason: expect.stringContaining('"prev"') }] });
    // a trail.repaired line that does not match the torn line (another size) repairs nothing
    const fake = JSON.stringify({
      time: '2026-11-26T12:00:00.000Z',
      id: 'f',
      event: 'trail.repaired',
      session: null,
      client: 'server',
      torn: { bytes: 3 },
      prev: lineHash(lines[1]!),
    });
    await writeFile(edited, [lines[0], lines[1], lines[2]!.slice(0, 20), fake].join('\n') + '\n');
    await expect(verifyAuditFile(edited)).resolves.toMatchObject({ ok: false, breaks: [{ line: 3, repaired: false }] });
  });

  it('fails closed: a sink that rejects makes record reject; with onWriteError continue it logs and resolves', async () => {
    const closed = new AuditLog({}, { sinks: [failing] });
    expect(closed.failClosed).toBe(true);
    await expect(closed.record({ name: 'tool.invoked', client: 'a', era: 'modern' })).rejects.toBeInstanceOf(AuditWriteError);
    const open = new AuditLog({ onWriteError: 'continue' }, { sinks: [failing] });
    expect(open.failClosed).toBe(false);
    await expect(open.record({ name: 'tool.invoked', client: 'a', era: 'modern' })).resolves.toBeUndefined();
    expect(logged.join('')).toContain('disk full');
    // a real file that cannot be opened (a directory)
    await expect(new AuditLog({ chain: true }, { file: dir }).record({ name: 'tool.invoked', client: 'a', era: 'modern' })).rejects.toBeInstanceOf(
      AuditWriteError,
    );
  });

  it('takes the file from <PREFIX>_AUDIT_FILE over the manifest, resolved', () => {
    expect(auditFile({ file: 'a.jsonl' }, 'PET', {})).toBe(path.resolve('a.jsonl'));
    expect(auditFile({ file: 'a.jsonl' }, 'PET', { PET_AUDIT_FILE: '/var/log/b.jsonl' })).toBe('/var/log/b.jsonl');
    expect(auditFile({}, 'PET', { PET_AUDIT_FILE: ' ' })).toBeUndefined();
  });
});

describe('redact', () => {
  it('replaces configured fields at any depth, case-insensitively, and secrets inside strings, without mutating', () => {
    const input = { user: { Password: 'p', profile: { SSN: { a: 1 }, note: 'token=abcd1234 ok' } }, list: [{ password: 'x' }, 'abcd1234'] };
    const copy = structuredClone(input);
    expect(redact(input, ['password', 'ssn'], ['abcd1234'])).toEqual({
      user: { Password: '[redacted]', profile: { SSN: '[redacted]', note: 'token=[redacted] ok' } },
      list: [{ password: '[redacted]' }, '[redacted]'],
    });
    expect(input).toEqual(copy);
  });

  it('is safe with cycles, very deep values and __proto__ keys', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(redact(cyclic, [], [])).toEqual({ a: 1, self: '[circular]' });
    let deep: unknown = 'bottom';
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    expect(JSON.stringify(redact(deep, [], []))).toContain('[too deep]');
    const evil = JSON.parse('{"__proto__": {"polluted": true}, "password": "x"}') as unknown;
    const out = redact(evil, ['password'], []) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(out))).toEqual(JSON.parse('{"__proto__": {"polluted": true}, "password": "[redacted]"}'));
    const shared = { x: 1 };
    expect(redact({ a: shared, b: shared }, [], [])).toEqual({ a: { x: 1 }, b: { x: 1 } });
  });
});

describe('argument summaries', () => {
  it('small arguments are written whole, redacted as before', () => {
    const args = { name: 'Rex', owner: { Password: 'hunter22', note: 'key sk-live-123456' }, tags: ['a', 'b'] };
    expect(summarize(args, ['password'], ['sk-live-123456'])).toEqual({ value: redact(args, ['password'], ['sk-live-123456']), cut: false });
  });

  it('a huge argument costs the cap, not its size: the line says how large it was', async () => {
    const sink = memory();
    const log = new AuditLog({ redact: ['password'] }, { sinks: [sink] });
    const wide = { password: 'p4ssw0rd!', list: Array.from({ length: 1_300_000 }, () => ({})), after: 'never reached' };
    await log.record({ name: 'tool.invoked', client: 'a', era: 'modern', arguments: wide, argumentBytes: 3_900_015 });
    const line = sink.lines[0]!;
    expect(Buffer.byteLength(line)).toBeLessThan(AUDIT_ARGUMENT_BYTES + 1024);
    const event = JSON.parse(line) as { arguments: { password: string; list: unknown[]; '…'?: string }; argumentsCut: unknown };
    expect(event.arguments.password).toBe('[redacted]');
    expect(event.arguments.list.at(-1)).toMatch(/^…\[\+\d+ items\]$/);
    expect(event.arguments['…']).toBe('+1 keys');
    expect(event.argumentsCut).toEqual({ bytes: 3_900_015, cap: AUDIT_ARGUMENT_BYTES });
    expect(Object.keys(event).indexOf('argumentsCut')).toBe(Object.keys(event).indexOf('arguments') + 1);
  });

  it('a long string is cut with a count, and a secret straddling the cut is redacted whole', () => {
    const secret = 'sk-live-ABCDEFGHIJKLMNOP';
    const cap = 100;
    const s = `${'x'.repeat(90)}${secret}${'y'.repeat(5000)}`;
    const { value, cut } = summarize({ s }, [], [secret], cap);
    expect(cut).toBe(true);
    const text = (value as { s: string }).s;
    expect(text).not.toContain('sk-live-ABC');
    expect(text).toMatch(/…\[\+\d+ characters\]$/);
    expect(text.length).toBeLessThan(200);
  });

  it('nesting past 16 levels is "[too deep]", and __proto__ stays a key', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100; i++) deep = { d: deep };
    const { value, cut } = summarize(deep, [], []);
    expect(cut).toBe(true);
    expect(JSON.stringify(value)).toContain('[too deep]');
    const evil = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
    const out = summarize(evil, [], []).value as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true}}');
  });
});

describe('the write queue', () => {
  it('writes concurrent events in groups: far fewer writes than events, every line whole and in order', async () => {
    const writes: number[] = [];
    const lines: string[] = [];
    const sink: AuditSink = {
      append: async (l) => void lines.push(l),
      appendLines: async (ls) => void (writes.push(ls.length), lines.push(...ls)),
      close: async () => undefined,
    };
    const log = new AuditLog({ chain: true }, { sinks: [sink] });
    await Promise.all(Array.from({ length: 300 }, (_, i) => log.record({ name: 'tool.invoked', client: 'a', era: 'modern', callId: String(i) })));
    expect(lines).toHaveLength(300);
    expect(parse(lines).map((e) => e.callId)).toEqual(Array.from({ length: 300 }, (_, i) => String(i)));
    expect(writes.length).toBeLessThan(10);
    for (let i = 1; i < 300; i++) expect(parse([lines[i]!])[0]!.prev).toBe(lineHash(lines[i - 1]!));
  });

  it('is bounded: while MAX_PENDING_EVENTS wait, a new call is refused and memory does not grow; terminal events still queue', async () => {
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const lines: string[] = [];
    const sink: AuditSink = {
      append: async (l) => void lines.push(l),
      appendLines: async (ls) => (await stuck, void lines.push(...ls)),
      close: async () => undefined,
    };
    const log = new AuditLog({}, { sinks: [sink] });
    // the first event is being written (stuck); the queue fills behind it
    const waiting = Array.from({ length: MAX_PENDING_EVENTS + 1 }, (_, i) =>
      log.record({ name: 'tool.invoked', client: 'a', era: 'modern', callId: String(i) }),
    );
    await new Promise((r) => setImmediate(r));
    expect(log.backlog).toBe(MAX_PENDING_EVENTS);
    await expect(log.record({ name: 'tool.invoked', client: 'a', era: 'modern', callId: 'refused' })).rejects.toThrow(
      /the audit trail is behind: 1024 events wait to be written/,
    );
    const terminal = log.record({ name: 'tool.completed', client: 'a', era: 'modern', callId: '0', outcome: 'ok' }, { essential: true });
    expect(log.backlog).toBe(MAX_PENDING_EVENTS + 1);
    release();
    await Promise.all([...waiting, terminal]);
    expect(lines).toHaveLength(MAX_PENDING_EVENTS + 2);
    expect(lines.some((l) => l.includes('"refused"'))).toBe(false);
  });

  it('close keeps its time bound whatever the queue holds: what is left is counted and logged', async () => {
    const sink: AuditSink = { append: async () => undefined, appendLines: () => new Promise(() => undefined), close: async () => undefined };
    const log = new AuditLog({ onWriteError: 'continue' }, { sinks: [sink] });
    for (let i = 0; i < 50; i++) void log.record({ name: 'tool.invoked', client: 'a', era: 'modern', callId: String(i) });
    await new Promise((r) => setImmediate(r));
    expect(await log.close(50)).toEqual({ unwritten: 50 });
    expect(logged.join('\n')).toMatch(/audit: 50 events could not be written before the server exits \(the drain time ran out\)/);
  });

  it('a refused invoked event refuses the call before it runs (-32603), naming the backlog', async () => {
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const sink: AuditSink = { append: async () => undefined, appendLines: async () => stuck, close: async () => undefined };
    const log = new AuditLog({}, { sinks: [sink] });
    const waiting = Array.from({ length: MAX_PENDING_EVENTS + 1 }, (_, i) =>
      log.record({ name: 'session.opened', client: 'a', era: 'legacy', session: String(i) }),
    );
    await new Promise((r) => setImmediate(r));
    let ran = false;
    const err = await runSteps([auditStep(log)], async () => ((ran = true), ok()), toolCall()).catch((e: unknown) => e);
    expect(ran).toBe(false);
    expect(err).toMatchObject({ code: -32603, message: expect.stringContaining('the audit trail is behind') });
    release();
    await Promise.all(waiting);
  });
});

describe('auditStep', () => {
  const events = (sink: { lines: string[] }) => parse(sink.lines);

  it('writes tool.invoked (redacted) before dispatch and tool.completed after, with status and duration', async () => {
    const sink = memory();
    const log = new AuditLog({ redact: ['password', 'ssn'] }, { sinks: [sink] });
    const outcome = await runPipeline(
      [auditStep(log)],
      async () => {
        expect(events(sink).map((e) => e.event)).toEqual(['tool.invoked']);
        return { result: ok(), status: 201 };
      },
      toolCall(),
    );
    expect(outcome).toEqual({ result: ok(), status: 201 });
    const [invoked, completed] = events(sink);
    expect(invoked).toMatchObject({
      event: 'tool.invoked',
      session: 'sess-1',
      client: 'alice',
      era: 'legacy',
      primitive: 'create_pet',
      callId: 'call-1',
      arguments: { name: 'Rex', owner: { Password: '[redacted]', ssn: '[redacted]' } },
    });
    expect(completed).toMatchObject({ event: 'tool.completed', callId: 'call-1', outcome: 'ok', httpStatus: 201 });
    expect(completed!.durationMs).toBeGreaterThanOrEqual(0);
    expect(completed).not.toHaveProperty('arguments');
    expect(sink.lines.join('\n')).not.toMatch(/hunter22|123-45-6789/);
  });

  it('modern requests have session null', async () => {
    const sink = memory();
    await runSteps([auditStep(new AuditLog({}, { sinks: [sink] }))], async () => ok(), toolCall({ era: 'modern', ctx: {} as ServerContext }));
    expect(events(sink).map((e) => e.session)).toEqual([null, null]);
  });

  it('one logical call across an input round: invoked once, the terminal event once, duration spanning the rounds', async () => {
    const sink = memory();
    const step = auditStep(new AuditLog({}, { sinks: [sink] }));
    const state: Record<string, unknown> = {};
    let round = 0;
    const dispatch = async (): Promise<ToolResult> => (++round === 1 ? asks : ok());
    expect(await runSteps([step], dispatch, toolCall({ state }))).toBe(asks);
    expect(events(sink).map((e) => e.event)).toEqual(['tool.invoked']);
    await new Promise((r) => setTimeout(r, 30));
    await runSteps([step], dispatch, toolCall({ state: JSON.parse(JSON.stringify(state)) as Record<string, unknown>, firstRound: false }));
    const all = events(sink);
    expect(all.map((e) => e.event)).toEqual(['tool.invoked', 'tool.completed']);
    expect(all[1]!.durationMs).toBeGreaterThanOrEqual(25);
  });

  it('refusals are tool.denied / tool.limited with their reason', async () => {
    for (const kind of ['denied', 'limited'] as const) {
      const sink = memory();
      const refusing = async (): Promise<Outcome> => ({
        result: { isError: true, content: [{ type: 'text' as const, text: 'refused' }] },
        refusal: { kind, reason: `${kind} by policy.access.rules[0]` },
      });
      await runPipeline([auditStep(new AuditLog({}, { sinks: [sink] }))], refusing, toolCall());
      expect(events(sink)[1]).toMatchObject({ event: `tool.${kind}`, outcome: kind, detail: `${kind} by policy.access.rules[0]` });
    }
    // a refusal thrown as a JSON-RPC error (access control): tool.denied, the error rethrown unchanged
    const sink = memory();
    const error = refuse(new ProtocolError(-32602, 'Tool create_pet is not available'), { kind: 'denied', reason: 'policy.access.default (deny)' });
    const thrown = await runPipeline([auditStep(new AuditLog({}, { sinks: [sink] }))], () => Promise.reject(error), toolCall()).catch((e: unknown) => e);
    expect(thrown).toBe(error);
    expect(events(sink)[1]).toMatchObject({ event: 'tool.denied', outcome: 'denied', detail: 'policy.access.default (deny)' });
  });

  it('an isError result and a thrown error are tool.failed; the error is rethrown; detail never holds a secret or redacted value', async () => {
    const sink = memory();
    const log = new AuditLog({ redact: ['password'] }, { sinks: [sink], secrets: () => ['sk-secret-999'] });
    await runPipeline(
      [auditStep(log)],
      async () => ({ result: { isError: true, content: [{ type: 'text', text: 'HTTP 500: bad password hunter22 with sk-secret-999' }] }, status: 500 }),
      toolCall({ args: { password: 'hunter22' } }),
    );
    await expect(runSteps([auditStep(log)], () => Promise.reject(new Error('socket hang up sk-secret-999')), toolCall({ callId: 'call-2' }))).rejects.toThrow(
      'socket hang up',
    );
    const [, failed, , thrown] = events(sink);
    expect(failed).toMatchObject({ event: 'tool.failed', outcome: 'error', httpStatus: 500, detail: 'HTTP 500: bad password [redacted] with [redacted]' });
    expect(thrown).toMatchObject({ event: 'tool.failed', outcome: 'error', callId: 'call-2', detail: 'socket hang up [redacted]' });
    expect(sink.lines.join('\n')).not.toMatch(/hunter22|sk-secret-999/);
  });

  it('fails closed: an unwritable invoked event is -32603 and the call does not run', async () => {
    let ran = false;
    const call = runSteps([auditStep(new AuditLog({}, { sinks: [failing] }))], async () => ((ran = true), ok()), toolCall());
    const err = await call.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err).toMatchObject({ code: -32603, message: expect.stringContaining('audit trail cannot be written: disk full') });
    expect(ran).toBe(false);
  });

  it('never reports a call that ran as failed when only its terminal event cannot be written: the result comes back, the failure is logged', async () => {
    let n = 0;
    const flaky: AuditSink = { append: () => (++n === 1 ? Promise.resolve() : Promise.reject(new Error('quota'))), close: async () => undefined };
    let ran = false;
    const result = await runSteps([auditStep(new AuditLog({}, { sinks: [flaky] }))], async () => ((ran = true), ok()), toolCall());
    expect(ran).toBe(true);
    expect(result).toEqual(ok());
    expect(logged.join('\n')).toMatch(/the tool\.completed event of a call that ran could not be written; its result is returned all the same.*quota/);
  });

  it('with onWriteError continue the call runs and returns its result', async () => {
    let ran = false;
    const result = await runSteps([auditStep(new AuditLog({ onWriteError: 'continue' }, { sinks: [failing] }))], async () => ((ran = true), ok()), toolCall());
    expect(ran).toBe(true);
    expect(result).toEqual(ok());
  });
});

describe('review fixes', () => {
  it('hides the values of a redacted field in error texts when they are arrays or objects', () => {
    const log = new AuditLog({ stderr: true, redact: ['password'] }, { sinks: [{ append: async () => undefined, close: async () => undefined }] });
    const args = { password: ['hunter22'], nested: { password: { value: 'sekrit99' } }, plain: { password: 'abc123' } };
    const hidden = log.hide('echoed hunter22 / sekrit99 / abc123 back', args);
    expect(hidden).not.toContain('hunter22');
    expect(hidden).not.toContain('sekrit99');
    expect(hidden).not.toContain('abc123');
  });

  it('chains from the file: a line the file did not take is not part of its chain, even when stderr took it; the trail says one was lost', async () => {
    const file: string[] = [];
    let failNext = false;
    const fileSink: AuditSink = {
      append: async (line) => {
        if (failNext) {
          failNext = false;
          throw new Error('disk full');
        }
        file.push(line);
      },
      close: async () => undefined,
      lastLine: async () => file.at(-1),
    };
    const stderrSink: AuditSink = { append: async () => undefined, close: async () => undefined };
    const log = new AuditLog({ file: 'x.jsonl', stderr: true, chain: true, onWriteError: 'continue' }, { sinks: [fileSink, stderrSink] });
    const event = { name: 'prompt.get' as const, client: 'c', era: 'legacy' as const };
    await log.record(event);
    failNext = true;
    await log.record(event);
    await log.record(event);
    expect(file).toHaveLength(3);
    expect(JSON.parse(file[1]!) as unknown).toMatchObject({ event: 'trail.repaired', lost: 1, prev: lineHash(file[0]!) });
    expect((JSON.parse(file[2]!) as { prev: string }).prev).toBe(lineHash(file[1]!));
  });
});

/**
 * Checks a chained audit trail (`policy.audit.chain: true`):
 *
 *   node dist/runtime/policy/verify-audit.js <audit file> [<audit file>…]
 *
 * Several instances sharing state (`<PREFIX>_REDIS_URL`) each keep their own file,
 * `<name>.<instance id>.<ext>` beside the configured `<name>.<ext>`: naming the configured file
 * checks it (when it exists) and every instance's file beside it, each chain on its own, under a
 * `== <file>` heading; the exit code is the worst of them.
 *
 * Every line must be a JSON object with the audit fields (`time`, `id`, `event`, `session`,
 * `client`, `era` — `null` for the trail's own `trail.*` events — and `prev`), and its `prev` must
 * be the hex SHA-256 of the previous line's exact bytes (64 zeros for the first line). When line
 * K+1's `prev` is not the hash of line K, line K is named: it was edited (the usual case), or the
 * line after it was removed, or one was inserted after it. A line that is not a well-formed audit
 * line is itself broken — unless it is a torn line (a write cut short by a crash or a full disk)
 * that the server found and repaired: the next line is then a `trail.repaired` event whose `torn`
 * size is that line's and whose `prev` links to the whole line before it. The check goes on past
 * every break and says which lines it verified. A chain alone cannot tell an edit of the very
 * LAST line: keep its hash elsewhere (`sha256sum` of `tail -n1`) to anchor it.
 *
 * Prints one `line K: <reason>` line per break (repaired ones say so), then `ok: N lines` (exit 0)
 * when there is no break but repaired ones, else `broken: N lines` (exit 1), each followed by the
 * ranges of lines verified when there was a break. Exit 2 when the file cannot be read.
 *
 * Only node: built-ins, so it runs without the server's dependencies. This file is copied into
 * every generated project whose audit trail is chained.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** One break of the chain: the line, why, and whether the trail itself records its repair. */
export type AuditBreak = { readonly line: number; readonly reason: string; readonly repaired: boolean };

/** The result of {@link verifyAuditFile}: `ok` when every break (if any) is a repaired one; `verified` as ranges of line numbers. */
export type AuditVerdict = {
  readonly ok: boolean;
  readonly lines: number;
  readonly breaks: readonly AuditBreak[];
  readonly verified: ReadonlyArray<readonly [number, number]>;
};

const ZERO_HASH = '0'.repeat(64);
const ERAS = new Set(['legacy', 'modern']);

/** A line parsed: its fields, or why it is not a well-formed audit line. */
function parseLine(text: string): { fields: Record<string, unknown> } | { why: string } {
  let line: unknown;
  try {
    line = JSON.parse(text);
  } catch {
    return { why: 'not valid JSON' };
  }
  if (line === null || typeof line !== 'object' || Array.isArray(line)) return { why: 'not a JSON object' };
  const f = line as Record<string, unknown>;
  for (const key of ['time', 'id', 'event', 'client'] as const) {
    if (typeof f[key] !== 'string' || f[key] === '') return { why: `field "${key}" is missing or not a string` };
  }
  if (Number.isNaN(Date.parse(f.time as string))) return { why: 'field "time" is not a date' };
  if (!('session' in f) || (f.session !== null && typeof f.session !== 'string')) return { why: 'field "session" is missing or neither a string nor null' };
  const trail = (f.event as string).startsWith('trail.');
  if (!(trail && (f.era === undefined || f.era === null)) && (typeof f.era !== 'string' || !ERAS.has(f.era)))
    return { why: 'field "era" is missing or not legacy/modern' };
  if (typeof f.prev !== 'string' || !/^[0-9a-f]{64}$/.test(f.prev)) return { why: 'field "prev" is missing or not a SHA-256 hex digest' };
  return { fields: f };
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Verifies the chain of the audit file at `path`, streaming it, past every break; rejects when the file cannot be read. */
export async function verifyAuditFile(path: string): Promise<AuditVerdict> {
  /** What the next line's `prev` must be; `undefined` right after an unrepaired break (the chain starts again). */
  let prev: string | undefined = ZERO_HASH;
  let n = 0;
  const breaks: AuditBreak[] = [];
  const good = new Set<number>();
  /** A malformed line waiting to learn whether the next line repairs it. */
  let broken: { line: number; bytes: number; why: string } | undefined;

  const check = (bytes: Buffer): void => {
    n++;
    const parsed = parseLine(bytes.toString('utf8'));
    if (broken !== undefined) {
      const f = 'fields' in parsed ? parsed.fields : undefined;
      const torn = f?.torn as { bytes?: unknown } | undefined;
      if (f !== undefined && f.event === 'trail.repaired' && torn?.bytes === broken.bytes && (prev === undefined || f.prev === prev)) {
        breaks.push({
          line: broken.line,
          reason: `a torn line of ${broken.bytes} bytes (a write cut short by a crash or a full disk), repaired by the trail.repaired event on line ${n}`,
          repaired: true,
        });
      } else {
        breaks.push({ line: broken.line, reason: broken.why, repaired: false });
        prev = undefined;
      }
      broken = undefined;
    }
    if ('why' in parsed) {
      // the chain goes on from the last whole line, should the next line repair this one
      broken = { line: n, bytes: bytes.length, why: parsed.why };
      return;
    }
    if (prev !== undefined && parsed.fields.prev !== prev) {
      if (n === 1) breaks.push({ line: 1, reason: '"prev" of the first line is not 64 zeros (lines before it were removed?)', repaired: false });
      else {
        breaks.push({
          line: n - 1,
          reason: `its hash is not the "prev" of line ${n}: this line was edited (or the line after it removed, or a line inserted after it)`,
          repaired: false,
        });
        good.delete(n - 1);
      }
    }
    good.add(n);
    prev = sha256(bytes);
  };

  let rest = Buffer.alloc(0);
  for await (const chunk of createReadStream(path)) {
    let data = Buffer.concat([rest, chunk as Buffer]);
    let nl: number;
    while ((nl = data.indexOf(0x0a)) >= 0) {
      check(data.subarray(0, nl));
      data = data.subarray(nl + 1);
    }
    rest = Buffer.from(data);
  }
  // a last line without its newline: a torn write, or an edit
  if (rest.length > 0) check(rest);
  if (broken !== undefined)
    breaks.push({ line: broken.line, reason: `${broken.why} (the last line: a torn write not yet repaired, or an edit)`, repaired: false });
  breaks.sort((a, b) => a.line - b.line);
  return { ok: breaks.every((b) => b.repaired), lines: n, breaks, verified: ranges([...good].sort((a, b) => a - b)) };
}

/** Consecutive numbers as [first, last] ranges. */
function ranges(sorted: readonly number[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const k of sorted) {
    const last = out[out.length - 1];
    if (last && last[1] === k - 1) last[1] = k;
    else out.push([k, k]);
  }
  return out;
}

/** An instance id in a file name (shared-state.ts `INSTANCE_ID`: host, process id, 6 hex digits). */
const INSTANCE_PART = '[A-Za-z0-9_.-]+-\\d+-[0-9a-f]{6}';

/** `file` (when it exists, or when no instance file is beside it) and the instances' files beside it, sorted. */
export function trailFiles(file: string): string[] {
  const dir = dirname(file);
  const name = basename(file);
  const m = /^(.*?)(\.[A-Za-z0-9]{1,8})?$/.exec(name)!;
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`^${escape(m[1]!)}\\.${INSTANCE_PART}${escape(m[2] ?? '')}$`);
  let siblings: string[] = [];
  try {
    siblings = readdirSync(dir)
      .filter((f) => re.test(f))
      .sort()
      .map((f) => join(dir, f));
  } catch {
    // no folder: reported when the file itself is read
  }
  return existsSync(file) || siblings.length === 0 ? [file, ...siblings] : siblings;
}

/** The command line: prints the verdict of each trail and returns the worst exit code. */
export async function main(
  argv: readonly string[],
  out: (line: string) => void = (l) => process.stdout.write(l + '\n'),
  err: (line: string) => void = (l) => process.stderr.write(l + '\n'),
): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    err("usage: verify-audit <audit file> [<audit file>...]   (checks the hash chain of a chained audit trail, and of each instance's file beside it)");
    return 2;
  }
  const files = argv.flatMap(trailFiles);
  let code = 0;
  for (const file of files) {
    if (files.length > 1) out(`== ${file}`);
    code = Math.max(code, await verifyOne(file, out, err));
  }
  return code;
}

/** Prints the verdict of one file; returns its exit code. */
async function verifyOne(file: string, out: (line: string) => void, err: (line: string) => void): Promise<number> {
  let verdict: AuditVerdict;
  try {
    verdict = await verifyAuditFile(file);
  } catch (e) {
    err(`cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  for (const b of verdict.breaks) out(`line ${b.line}: ${b.reason}`);
  const covered = verdict.verified.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(', ');
  const summary = `${verdict.ok ? 'ok' : 'broken'}: ${verdict.lines} lines`;
  out(verdict.breaks.length === 0 ? summary : `${summary}; verified lines ${covered || 'none'}`);
  return verdict.ok ? 0 : 1;
}

/** Whether this module is the program node was asked to run (not imported). */
function executedDirectly(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return pathToFileURL(realpathSync(script)).href === pathToFileURL(realpathSync(fileURLToPath(import.meta.url))).href;
  } catch {
    return false;
  }
}

if (executedDirectly()) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (e: unknown) => {
      process.stderr.write(`verify-audit: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 2;
    },
  );
}

/**
 * Checks a chained audit trail (`policy.audit.chain: true`):
 *
 *   node dist/runtime/verify-audit.js <audit file>
 *
 * Every line must be a JSON object with the audit fields (`time`, `id`, `event`, `session`,
 * `client`, `era`, `prev`), and its `prev` must be the hex SHA-256 of the previous line's exact
 * bytes (64 zeros for the first line). Prints `ok: N lines` (exit 0), or `line K: <reason>` for
 * the FIRST broken line (exit 1). A line that is not a well-formed audit line is itself broken;
 * when line K+1's `prev` is not the hash of line K, line K is named: it was edited (the usual
 * case), or the line after it was removed, or one was inserted after it. A chain alone cannot
 * tell an edit of the very LAST line: keep its hash elsewhere (`sha256sum` of `tail -n1`) to
 * anchor it. Exit 2 when the file cannot be read.
 *
 * Only node: built-ins, so it runs without the server's dependencies. This file is copied into
 * every generated project whose audit trail is chained.
 */
import { createHash } from 'node:crypto';
import { createReadStream, realpathSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The result of {@link verifyAuditFile}. */
export type AuditVerdict = { readonly ok: true; readonly lines: number } | { readonly ok: false; readonly line: number; readonly reason: string };

const ZERO_HASH = '0'.repeat(64);
const ERAS = new Set(['legacy', 'modern']);

/** Why `text` is not a well-formed audit line; `'link'` when it is one but its `prev` is not `prev`; `undefined` when all is well. */
function problem(text: string, prev: string): string | undefined {
  let line: unknown;
  try {
    line = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  if (line === null || typeof line !== 'object' || Array.isArray(line)) return 'not a JSON object';
  const f = line as Record<string, unknown>;
  for (const key of ['time', 'id', 'event', 'client'] as const) {
    if (typeof f[key] !== 'string' || f[key] === '') return `field "${key}" is missing or not a string`;
  }
  if (Number.isNaN(Date.parse(f.time as string))) return 'field "time" is not a date';
  if (!('session' in f) || (f.session !== null && typeof f.session !== 'string')) return 'field "session" is missing or neither a string nor null';
  if (typeof f.era !== 'string' || !ERAS.has(f.era)) return 'field "era" is missing or not legacy/modern';
  if (typeof f.prev !== 'string' || !/^[0-9a-f]{64}$/.test(f.prev)) return 'field "prev" is missing or not a SHA-256 hex digest';
  if (f.prev !== prev) return 'link';
  return undefined;
}

/** Verifies the chain of the audit file at `path`, streaming it; rejects when the file cannot be read. */
export async function verifyAuditFile(path: string): Promise<AuditVerdict> {
  let prev = ZERO_HASH;
  let n = 0;
  let rest = Buffer.alloc(0);
  const check = (bytes: Buffer): AuditVerdict | undefined => {
    n++;
    const why = problem(bytes.toString('utf8'), prev);
    if (why === 'link') {
      if (n === 1) return { ok: false, line: 1, reason: '"prev" of the first line is not 64 zeros (lines before it were removed?)' };
      return { ok: false, line: n - 1, reason: `its hash is not the "prev" of line ${n}: this line was edited (or the line after it removed, or a line inserted after it)` };
    }
    if (why !== undefined) return { ok: false, line: n, reason: why };
    prev = createHash('sha256').update(bytes).digest('hex');
    return undefined;
  };
  for await (const chunk of createReadStream(path)) {
    let data = Buffer.concat([rest, chunk as Buffer]);
    let nl: number;
    while ((nl = data.indexOf(0x0a)) >= 0) {
      const verdict = check(data.subarray(0, nl));
      if (verdict) return verdict;
      data = data.subarray(nl + 1);
    }
    rest = Buffer.from(data);
  }
  if (rest.length > 0) {
    // a last line without its newline: a torn write, or an edit
    const verdict = check(rest);
    if (verdict) return verdict;
  }
  return { ok: true, lines: n };
}

/** The command line: prints the verdict and returns the exit code. */
export async function main(argv: readonly string[], out: (line: string) => void = (l) => process.stdout.write(l + '\n'), err: (line: string) => void = (l) => process.stderr.write(l + '\n')): Promise<number> {
  if (argv.length !== 1 || argv[0] === '--help' || argv[0] === '-h') {
    err('usage: verify-audit <audit file>   (checks the hash chain of a chained audit trail)');
    return 2;
  }
  let verdict: AuditVerdict;
  try {
    verdict = await verifyAuditFile(argv[0]!);
  } catch (e) {
    err(`cannot read ${argv[0]}: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  if (verdict.ok) {
    out(`ok: ${verdict.lines} lines`);
    return 0;
  }
  out(`line ${verdict.line}: ${verdict.reason}`);
  return 1;
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

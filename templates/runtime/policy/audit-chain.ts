/**
 * The audit trail's hash chain (`policy.audit.chain`): each line carries `prev`, the hex SHA-256
 * of the previous line's exact text (without its newline; the first line of a store has 64 zeros),
 * so an edit breaks the chain and `verify-audit` finds it. And the `trail.repaired` line that
 * continues a chain past a torn line or lost events.
 *
 * This file is copied into every generated project that has `policy.audit`.
 */
import { createHash, randomUUID } from 'node:crypto';

/** The `prev` of a store's first line. */
const ZERO_HASH = '0'.repeat(64);

/** Hex SHA-256 of a line's text (UTF-8), as `prev` carries it. */
export function lineHash(line: string): string {
  return createHash('sha256').update(line, 'utf8').digest('hex');
}

/** The `prev` of the line written after `last`, a store's last whole line (`undefined`: the store is empty). */
export function chainFrom(last: string | undefined): string {
  return last === undefined ? ZERO_HASH : lineHash(last);
}

/** A line's text with `prev` added as its last key (what `JSON.stringify({...fields, prev})` gives). */
function withPrev(text: string, prev: string): string {
  return `${text.slice(0, -1)},"prev":"${prev}"}`;
}

/** `records` (one JSON object's text each) chained after the line whose hash is `prev`; `prev`: the hash of the last of them. */
export function chained(records: readonly string[], prev: string): { readonly lines: string[]; readonly prev: string } {
  let last = prev;
  const lines = records.map((text) => {
    const line = withPrev(text, last);
    last = lineHash(line);
    return line;
  });
  return { lines, prev: last };
}

/** What a `trail.repaired` line says: the torn line found at the store's end, the events that could not be written since. */
export type Repair = { readonly tornBytes?: number; readonly lost: number; readonly now: Date; readonly instance?: string };

/** The fields of the `trail.repaired` line. */
export function repairFields({ tornBytes, lost, now, instance }: Repair): Record<string, unknown> {
  const what = [
    tornBytes !== undefined
      ? `a torn line of ${tornBytes} bytes (a write cut short by a crash or a full disk) was left in place; the chain continues from the whole line before it`
      : '',
    lost > 0 ? `${lost} event${lost === 1 ? '' : 's'} could not be written since the last line` : '',
  ].filter((w) => w !== '');
  return {
    time: now.toISOString(),
    id: randomUUID(),
    ...(instance !== undefined ? { instance } : {}),
    event: 'trail.repaired',
    session: null,
    client: 'server',
    outcome: 'repaired',
    detail: what.join('; '),
    ...(tornBytes !== undefined ? { torn: { bytes: tornBytes } } : {}),
    ...(lost > 0 ? { lost } : {}),
  };
}

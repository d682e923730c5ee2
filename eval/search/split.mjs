// The one split of the search-eval queries into a development half and a held-out half.
// Fixed by the query's id alone (never by its text, its tools or any score), so it was decided
// before any query was run and cannot drift: sha256(id), first 32 bits, even => dev, odd => heldout.
import { createHash } from 'node:crypto';

/** @param {string} id @returns {'dev' | 'heldout'} */
export function splitOf(id) {
  const n = parseInt(createHash('sha256').update(id).digest('hex').slice(0, 8), 16);
  return n % 2 === 0 ? 'dev' : 'heldout';
}

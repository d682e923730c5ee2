/**
 * "Did you mean …?" suggestions for misspelt keys, tags and operation ids.
 */

/** Optimal-string-alignment distance (Levenshtein plus adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The closest candidate to `word`: a case-insensitive match, else the nearest within a distance
 * of max(2, a third of the word's length). Ties go to the candidate that sorts first.
 */
export function suggest(word: string, candidates: Iterable<string>): string | undefined {
  const list = [...candidates].sort();
  const lower = word.toLowerCase();
  const exact = list.find((c) => c.toLowerCase() === lower);
  if (exact !== undefined) return exact;
  const limit = Math.max(2, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of list) {
    if (Math.abs(c.length - word.length) > limit) continue;
    const dist = editDistance(lower, c.toLowerCase());
    if (dist <= limit && dist < bestD) {
      best = c;
      bestD = dist;
    }
  }
  return best;
}

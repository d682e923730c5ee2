// The baseline the issue measures mcpgen against: plain BM25 (k1 = 1.2, b = 0.75) over one field,
// the tool's name, the operation's summary and its description concatenated. No stemming, no
// synonyms, no stop words, no field weights: tokens are the lower-cased runs of letters and digits,
// after splitting camelCase names (`PostCustomersCustomer` is post, customers, customer) and
// dropping HTML tags. Ties keep catalogue order, so the ranking is deterministic.

/** @param {string} text @returns {string[]} */
export function tokenize(text) {
  return text
    .replace(/<[^>]*>/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t.length > 0);
}

/**
 * @param {ReadonlyArray<{ name: string; text: string }>} docs in catalogue order
 * @returns {(query: string, limit: number) => string[]} the names of the best `limit` documents
 */
export function bm25Index(docs, k1 = 1.2, b = 0.75) {
  const postings = new Map(); // term -> Map(docIndex -> term frequency)
  const lengths = docs.map((doc, i) => {
    const tokens = tokenize(doc.text);
    for (const t of tokens) {
      let p = postings.get(t);
      if (!p) postings.set(t, (p = new Map()));
      p.set(i, (p.get(i) ?? 0) + 1);
    }
    return tokens.length;
  });
  const n = docs.length;
  const avg = lengths.reduce((a, x) => a + x, 0) / Math.max(n, 1);
  return (query, limit) => {
    const scores = new Float64Array(n);
    for (const t of new Set(tokenize(query))) {
      const p = postings.get(t);
      if (!p) continue;
      const idf = Math.log(1 + (n - p.size + 0.5) / (p.size + 0.5));
      for (const [i, tf] of p) scores[i] += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[i]) / avg));
    }
    const hits = [];
    for (let i = 0; i < n; i++) if (scores[i] > 0) hits.push(i);
    hits.sort((x, y) => scores[y] - scores[x] || x - y);
    return hits.slice(0, limit).map((i) => docs[i].name);
  };
}

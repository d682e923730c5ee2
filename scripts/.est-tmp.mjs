import { readFileSync } from 'node:fs';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
const files = process.argv.slice(2);
const estimators = {
  bytes35: (t) => Buffer.byteLength(t) / 3.4,
  pieces: (t) => (t.match(/[A-Za-z]{1,12}|\d{1,3}|":"|","|\s+|[^\sA-Za-z\d]/g) ?? []).length,
  pieces2: (t) => { let n = 0; for (const m of t.matchAll(/[A-Za-z]+|\d+|[^\sA-Za-z\d]+|\s+/g)) { const s = m[0]; const c = s.charCodeAt(0); if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) n += Math.ceil(s.length / 7); else if (c >= 48 && c <= 57) n += Math.ceil(s.length / 3); else if (c <= 32) n += 1; else n += Math.ceil(s.length / 2); } return n; },
};
for (const f of files) {
  const spec = JSON.parse(readFileSync(f, 'utf8'));
  const resolve = (o) => { let n = 0; while (o && o.$ref && n++ < 10) { const p = o.$ref.replace(/^#\//, '').split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')); o = p.reduce((a, k) => a?.[k], spec); } return o; };
  const texts = [];
  for (const item of Object.values(spec.paths ?? {})) for (const op of Object.values(item)) {
    if (typeof op !== 'object' || !op?.responses) continue;
    for (const [code, r0] of Object.entries(op.responses)) { if (!code.startsWith('2')) continue; const r = resolve(r0); const c = r?.content?.['application/json'] ?? (r?.examples?.['application/json'] !== undefined ? { example: r.examples['application/json'] } : undefined); if (!c) continue;
      const exs = c.examples ? Object.values(c.examples).map((e) => resolve(e)?.value) : c.example !== undefined ? [c.example] : [];
      for (const v of exs) if (v !== undefined) { const t = JSON.stringify(v); if (t.length >= 200) texts.push(t); } }
  }
  if (texts.length === 0) { console.log(f, 'no examples'); continue; }
  for (const [name, est] of Object.entries(estimators)) {
    const errs = texts.map((t) => est(t) / countTokens(t) - 1).sort((a, b) => a - b);
    const q = (x) => (errs[Math.floor(x * (errs.length - 1))] * 100).toFixed(0) + '%';
    console.log(f.split('/').pop().padEnd(18), name.padEnd(8), 'n', texts.length, 'min', q(0), 'p5', q(0.05), 'p50', q(0.5), 'p95', q(0.95), 'max', q(1), 'within15', (errs.filter((e) => Math.abs(e) <= 0.15).length / errs.length * 100).toFixed(0) + '%');
  }
}

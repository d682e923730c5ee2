#!/usr/bin/env node
// `npm run bench`: times `mcpgen build` (in-process, no disk writes) on the Petstore example and
// on the largest corpus specs, and prints each median against bench/baseline.json (recorded on
// the project's 2-core machine; pass --record to replace it). Ratios above 1 are slower.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdirSync } from 'node:fs';
import { compile } from '../dist/src/compile.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const baselineFile = path.join(root, 'bench/baseline.json');
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const cases = [
  ['petstore-example', path.join(root, 'examples/petstore/mcpgen.yaml')],
  ...['github-rest.json', 'kubernetes.json', 'digitalocean.json'].map((f) => [f.replace(/\.json$/, ''), corpusManifest(f)]),
].filter(([, m]) => m);

function corpusManifest(file) {
  const spec = path.join(root, '.corpus', file);
  if (!existsSync(spec)) return undefined;
  const dir = path.join(root, '.cache/bench', file.replace(/\.json$/, ''));
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: bench\nopenapi: ${path.relative(dir, spec)}\nbaseUrl: http://127.0.0.1:1\n`);
  return path.join(dir, 'mcpgen.yaml');
}

const baseline = existsSync(baselineFile) ? JSON.parse(readFileSync(baselineFile, 'utf8')) : { cases: {} };
const results = {};
console.log(`mcpgen build, median of ${RUNS} runs, vs ${path.relative(root, baselineFile)} (${baseline.recorded ?? 'no baseline'})\n`);
for (const [name, manifest] of cases) {
  const times = [];
  let files;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const res = await compile({ manifestPath: manifest, cwd: root, emit: true });
    times.push(performance.now() - t);
    if (!res.files) throw new Error(`${name} failed to build`);
    files = res.files;
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  const bytes = [...files.values()].reduce((n, s) => n + Buffer.byteLength(s), 0);
  results[name] = { ms: Math.round(median), bytes };
  const base = baseline.cases?.[name];
  const ratio = base ? (median / base.ms).toFixed(2) + 'x' : 'n/a';
  console.log(`${name.padEnd(18)} ${String(Math.round(median)).padStart(6)} ms  ratio ${ratio.padStart(6)}   output ${(bytes / 1e6).toFixed(2)} MB${base ? ` (baseline ${(base.bytes / 1e6).toFixed(2)} MB)` : ''}`);
}
if (process.argv.includes('--record')) {
  writeFileSync(baselineFile, JSON.stringify({ recorded: 'mcpgen 0.1.0 on the 2-core development machine', cases: results }, null, 2) + '\n');
  console.log(`\nrecorded ${path.relative(root, baselineFile)}`);
}

// The client's side of a large surface: how long the MCP SDK `Client` takes to list the tools of
// a generated server (it reads the whole list and compiles a validator for every output schema).
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
const { writeTree } = await import('../dist/src/write/tree.js');
const { execFileSync } = await import('node:child_process');
console.log(`\nSDK Client listTools() against the generated server over stdio, median of ${RUNS} lists (goal: under 1 s for GitHub)\n`);
for (const [name, manifest] of cases.filter(([n]) => n !== 'petstore-example' && n !== 'digitalocean')) {
  const res = await compile({ manifestPath: manifest, cwd: root, emit: true });
  await writeTree({ outDir: res.outDir, displayDir: res.outDir, files: res.files, check: false, diagnostics: res.diagnostics });
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', res.outDir], { stdio: 'inherit' });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [path.join(res.outDir, 'dist/server.js')], env: { PATH: process.env.PATH ?? '' }, stderr: 'ignore' }));
  const times = [];
  let bytes = 0;
  let count = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const { tools } = await client.listTools();
    times.push(performance.now() - t);
    bytes = Buffer.byteLength(JSON.stringify(tools));
    count = tools.length;
  }
  await client.close();
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  console.log(`${name.padEnd(18)} ${String(Math.round(median)).padStart(6)} ms  ${count} tools, ${(bytes / 1e6).toFixed(2)} MB (build reported ${(res.ir.surface.listBytes / 1e6).toFixed(2)} MB)`);
}

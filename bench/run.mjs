#!/usr/bin/env node
// `npm run bench`: the project's one benchmark. In the same run, alternating the order each round,
// it builds Petstore, GitHub and Kubernetes with
//   - mcpgen (`bin/mcpgen.js build --out <tmp> --no-cache`: a cold build),
//   - openapi-mcp-generator (OMG, the pinned dev dependency, `-i <spec> -o <tmp> --force`),
//   - the bare parse floor (`SwaggerParser.dereference` of the same spec),
// each in a fresh child process timed from outside (wall), with the child's CPU time and peak RSS
// taken from `process.resourceUsage()` at its exit (bench/usage.mjs, preloaded). It prints medians
// and the ratios mcpgen/OMG and mcpgen/floor, then mcpgen's rebuild after a manifest-only change
// with the build cache (.cache/mcpgen/ beside the manifest) against its cold build, then how long the MCP SDK `Client` takes to list the
// tools of the generated GitHub and Kubernetes servers, with the list's bytes and o200k tokens,
// then tools/call throughput and p50/p99 of the generated Petstore server over Streamable HTTP with
// 1, 8 and 32 concurrent clients against a direct fetch of the same loopback backend (bench/http.mjs).
// Results are written to .cache/bench/results.json. No stored baseline: every ratio is measured
// in the same run on the same machine. BENCH_RUNS (default 5) sets the number of rounds;
// then the runtime rows (bench/runtime.mjs: type-check of the generated project, cold start to the
// first tools/list, first tools/call, call p50/p99 over a direct fetch, over stdio, mcpgen's and
// OMG's servers of Petstore and GitHub in the same run), then the result tokens of GitHub's five
// list tools on 30-item pages, raw and delivered, and what shaping a result costs per call against
// the call's overhead (bench/results.mjs).
// Then what sharing state through Redis costs (bench/scale-out.mjs): calls/s and p50/p99 of one
// instance without Redis, one with it, and three with it, as ratios (skipped without redis-server).
// Then code mode's costs (bench/code-mode.mjs): a fresh sandbox's start, execute against a direct tools/call,
// and one nested API call from code against a direct tools/call, as ratios.
// BENCH_ONLY (a comma-separated subset of build, listTools, runtime, results, http, scaleOut, codeMode) runs only those sections;
// BENCH_HTTP_SECONDS (default 4) sets how long each HTTP load runs after its warm-up.
// BENCH_CPU_PROF (a folder) has every server the http section starts write a `--cpu-prof` profile there.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchCodeMode } from './code-mode.mjs';
import { benchHttp } from './http.mjs';
import { benchResults } from './results.mjs';
import { benchRuntime } from './runtime.mjs';
import { benchScaleOut } from './scale-out.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5));
const SECTIONS = ['build', 'listTools', 'runtime', 'results', 'http', 'scaleOut', 'codeMode'];
const only = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((s) => s.trim()) : SECTIONS;
for (const s of only) if (!SECTIONS.includes(s)) throw new Error(`BENCH_ONLY: unknown section ${s} (known: ${SECTIONS.join(', ')})`);
const runs = (section) => only.includes(section);
const cacheDir = path.join(root, '.cache/bench');
mkdirSync(cacheDir, { recursive: true });
const tmp = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-bench-'));
const usageFile = path.join(tmp, 'usage.json');
const omgBin = path.join(root, 'node_modules/openapi-mcp-generator/bin/openapi-mcp-generator.js');
if (!existsSync(omgBin)) throw new Error('openapi-mcp-generator is not installed: run npm install');

const cases = [
  { name: 'Petstore', spec: path.join(root, 'examples/petstore/openapi.yaml'), manifest: path.join(root, 'examples/petstore/mcpgen.yaml') },
  ...[
    ['GitHub', 'github-rest.json'],
    ['Kubernetes', 'kubernetes.json'],
  ].map(([name, file]) => corpusCase(name, file)),
].filter(Boolean);

function corpusCase(name, file) {
  const spec = path.join(root, '.corpus', file);
  if (!existsSync(spec)) {
    console.log(`(skipping ${name}: ${path.relative(root, spec)} is missing; \`npm run corpus\` fetches it)`);
    return undefined;
  }
  const dir = path.join(cacheDir, file.replace(/\.json$/, ''));
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: bench\nopenapi: ${path.relative(dir, spec)}\nbaseUrl: http://127.0.0.1:1\n`);
  return { name, spec, manifest: path.join(dir, 'mcpgen.yaml') };
}

const tools = {
  mcpgen: (c, out) => [path.join(root, 'bin/mcpgen.js'), 'build', c.manifest, '--out', out, '--quiet', '--no-cache'],
  OMG: (c, out) => [omgBin, '-i', c.spec, '-o', out, '-b', 'http://127.0.0.1:1', '--force'],
  floor: (c) => [
    '--input-type=module',
    '-e',
    `import SwaggerParser from '@apidevtools/swagger-parser'; await SwaggerParser.dereference(${JSON.stringify(c.spec)});`,
  ],
};
const names = Object.keys(tools);

function runOnce(tool, c) {
  const out = path.join(tmp, `${tool}-${c.name}`);
  rmSync(out, { recursive: true, force: true });
  rmSync(usageFile, { force: true });
  const args = ['--import', path.join(root, 'bench/usage.mjs'), ...tools[tool](c, out)];
  const t = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: root, env: { ...process.env, BENCH_USAGE_FILE: usageFile }, encoding: 'utf8', maxBuffer: 64 << 20 });
  const wallMs = performance.now() - t;
  if (r.status !== 0) throw new Error(`${tool} on ${c.name} exited ${r.status}\n${r.stderr}`);
  const u = JSON.parse(readFileSync(usageFile, 'utf8'));
  return { wallMs, cpuMs: u.cpuMs, rssMiB: u.maxRssKiB / 1024 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

console.log(
  `${runs('build') ? `build in a fresh child process, ${RUNS} alternating rounds, medians; ` : ''}node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown cpu'})${runs('build') ? '\n' : ''}`,
);
const results = {
  date: new Date().toISOString(),
  node: process.version,
  cores: os.cpus().length,
  cpu: os.cpus()[0]?.model,
  runs: RUNS,
  sections: only,
  build: {},
  listTools: {},
  runtime: {},
  results: {},
  http: {},
};
for (const c of runs('build') ? cases : []) {
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < RUNS; i++) {
    // Rotate the order so no tool always runs first (cold caches) or last.
    for (let k = 0; k < names.length; k++) {
      const tool = names[(i + k) % names.length];
      samples[tool].push(runOnce(tool, c));
    }
  }
  results.build[c.name] = Object.fromEntries(
    names.map((n) => [
      n,
      {
        wallMs: median(samples[n].map((s) => s.wallMs)),
        cpuMs: median(samples[n].map((s) => s.cpuMs)),
        rssMiB: median(samples[n].map((s) => s.rssMiB)),
        samples: samples[n],
      },
    ]),
  );
}

const sec = (ms) => `${(ms / 1000).toFixed(2)} s`;
const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
const rows = [['figure', 'mcpgen', 'OMG', 'floor', 'mcpgen/OMG', 'mcpgen/floor']];
for (const [name, r] of Object.entries(results.build)) {
  const { mcpgen: m, OMG: o, floor: f } = r;
  rows.push([
    `build ${name} wall / CPU`,
    `${sec(m.wallMs)} / ${sec(m.cpuMs)}`,
    `${sec(o.wallMs)} / ${sec(o.cpuMs)}`,
    `${sec(f.wallMs)} / ${sec(f.cpuMs)}`,
    `${ratio(m.wallMs, o.wallMs)} / ${ratio(m.cpuMs, o.cpuMs)}`,
    `${ratio(m.wallMs, f.wallMs)} / ${ratio(m.cpuMs, f.cpuMs)}`,
  ]);
  rows.push([
    `build ${name} peak RSS`,
    `${m.rssMiB.toFixed(0)} MiB`,
    `${o.rssMiB.toFixed(0)} MiB`,
    `${f.rssMiB.toFixed(0)} MiB`,
    ratio(m.rssMiB, o.rssMiB),
    ratio(m.rssMiB, f.rssMiB),
  ]);
}
if (runs('build')) printTable(rows);

// A rebuild after a manifest-only change, from the build cache: a manifest of its own per spec (so
// the cache is beside it, in the bench's temporary folder), built once to fill the cache, then each
// round changes the manifest's description and builds again, alternating with a cold build
// (--no-cache) of the same manifest.
if (runs('build')) {
  const rebuild = [['rebuild after a manifest-only change', 'cached wall / CPU', 'cold wall / CPU', 'cached/cold', 'goal']];
  for (const c of cases) {
    const dir = path.join(tmp, `rebuild-${c.name}`);
    mkdirSync(dir, { recursive: true });
    const manifest = path.join(dir, 'mcpgen.yaml');
    const write = (i) => writeFileSync(manifest, `name: bench\nopenapi: ${JSON.stringify(c.spec)}\nbaseUrl: http://127.0.0.1:1\ndescription: round ${i}\n`);
    const build = (cache) => {
      rmSync(usageFile, { force: true });
      const args = [
        '--import',
        path.join(root, 'bench/usage.mjs'),
        path.join(root, 'bin/mcpgen.js'),
        'build',
        manifest,
        '--out',
        path.join(dir, cache ? 'cached' : 'cold'),
        '--quiet',
        ...(cache ? [] : ['--no-cache']),
      ];
      const t = performance.now();
      const r = spawnSync(process.execPath, args, { cwd: root, env: { ...process.env, BENCH_USAGE_FILE: usageFile }, encoding: 'utf8', maxBuffer: 64 << 20 });
      const wallMs = performance.now() - t;
      if (r.status !== 0) throw new Error(`mcpgen rebuild of ${c.name} exited ${r.status}\n${r.stderr}`);
      return { wallMs, cpuMs: JSON.parse(readFileSync(usageFile, 'utf8')).cpuMs };
    };
    write(0);
    build(true);
    const cached = [];
    const cold = [];
    for (let i = 1; i <= RUNS; i++) {
      write(i);
      if (i % 2) cached.push(build(true)), cold.push(build(false));
      else cold.push(build(false)), cached.push(build(true));
    }
    const m = (xs, k) => median(xs.map((x) => x[k]));
    results.build[c.name].rebuild = {
      cached: { wallMs: m(cached, 'wallMs'), cpuMs: m(cached, 'cpuMs'), samples: cached },
      cold: { wallMs: m(cold, 'wallMs'), cpuMs: m(cold, 'cpuMs'), samples: cold },
    };
    rebuild.push([
      c.name,
      `${sec(m(cached, 'wallMs'))} / ${sec(m(cached, 'cpuMs'))}`,
      `${sec(m(cold, 'wallMs'))} / ${sec(m(cold, 'cpuMs'))}`,
      ratio(m(cached, 'wallMs'), m(cold, 'wallMs')),
      c.name === 'GitHub' ? '≤ 0.25 s wall' : '',
    ]);
  }
  console.log('');
  printTable(rebuild);
}

function printTable(rs) {
  const widths = rs[0].map((_, i) => Math.max(...rs.map((r) => r[i].length)));
  for (const [j, r] of rs.entries()) {
    console.log(r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '));
    if (j === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}

// The client's side of a large surface: how long the MCP SDK `Client` takes to list the tools of
// a generated server (it reads the whole list and compiles a validator for every output schema).
// OMG's generated projects are not built here (its GitHub project fails to type-check, TS2590).
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
if (runs('listTools'))
  console.log(`\nSDK Client listTools() against the mcpgen-generated server over stdio, median of ${RUNS} lists (goal: under 1 s for GitHub)\n`);
for (const c of runs('listTools') ? cases.filter((x) => x.name !== 'Petstore') : []) {
  // Inside the repository, so the generated project resolves the SDK and @types/node from its node_modules.
  const out = path.join(cacheDir, `server-${c.name}`);
  execFileSync(process.execPath, [path.join(root, 'bin/mcpgen.js'), 'build', c.manifest, '--out', out, '--quiet'], { cwd: root, stdio: 'pipe' });
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', out], { stdio: 'inherit' });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [path.join(out, 'dist/server.js')], env: { PATH: process.env.PATH ?? '' }, stderr: 'ignore' }),
  );
  const times = [];
  let tools = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    ({ tools } = await client.listTools());
    times.push(performance.now() - t);
  }
  await client.close();
  const json = JSON.stringify(tools);
  const r = { ms: median(times), tools: tools.length, bytes: Buffer.byteLength(json), tokens: countTokens(json) };
  results.listTools[c.name] = r;
  console.log(
    `${c.name.padEnd(12)} ${String(Math.round(r.ms)).padStart(6)} ms  ${r.tools} tools, ${r.bytes.toLocaleString('en-US')} bytes, ${r.tokens.toLocaleString('en-US')} o200k tokens`,
  );
}

if (runs('runtime')) await benchRuntime({ root, cacheDir, results, printTable, cases, runs: RUNS, omgBin, median });

if (runs('results')) {
  if (existsSync(path.join(root, '.corpus/github-rest.json'))) await benchResults({ root, cacheDir, results, printTable, median });
  else console.log('\n(skipping result tokens: .corpus/github-rest.json is missing; `npm run corpus` fetches it)');
}

if (runs('http')) await benchHttp({ root, cacheDir, results, printTable });

if (runs('scaleOut')) await benchScaleOut({ root, cacheDir, results, printTable });

if (runs('codeMode')) await benchCodeMode({ root, cacheDir, results, printTable, median });

writeFileSync(path.join(cacheDir, 'results.json'), JSON.stringify(results, null, 2) + '\n');
rmSync(tmp, { recursive: true, force: true });
console.log(`\nwrote ${path.relative(root, path.join(cacheDir, 'results.json'))}`);

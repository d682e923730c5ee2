#!/usr/bin/env node
// The official MCP conformance suites (@modelcontextprotocol/conformance) against the generated
// server of examples/conformance, over Streamable HTTP. Two lines run, each with its own
// baseline (expected failures) in examples/conformance:
//
//   legacy  0.1.16, the active suite (legacy era: initialize, sessions)     expected-failures.yml
//   2026    0.2.0-alpha.12 with --requirements 2026-07-28: the revision's   expected-failures-2026.yml
//           required scenarios, plus those it runs without scoring (the
//           Tasks extension's ten, and the pending ones)
//
// The suites need Node >= 22, newer than this project's Node 20 baseline, so a Node 22 binary is
// installed from the npm registry (node-<os>-<arch>, the version scripts/inspector.mjs pins) next
// to the legacy suite in .cache/conformance/, and the 0.2 line into .cache/conformance-2026/ —
// nothing global changes. All are pinned; once installed, no network is needed (the generated
// project resolves its dependencies from mcpgen's node_modules and is compiled with mcpgen's own
// tsc, so nothing is installed for it either).
//
//   node scripts/conformance.mjs               compile examples/conformance/server, start it with
//                                              --transport http on a free port, run both lines
//                                              with their baselines, print both summaries; exit 0
//                                              when both pass
//   node scripts/conformance.mjs --line L      one line only (legacy or 2026)
//   node scripts/conformance.mjs --install     install (if missing) and print the paths
//   node scripts/conformance.mjs --url URL     run against a server that is already running
//   node scripts/conformance.mjs --scenario S  one scenario only (no baseline; with --line)
//   node scripts/conformance.mjs --verbose     also print the suites' whole output
//
// A line passes when the suite's own baseline check passes (exit 0) and, for the scenarios the
// 0.2 line runs without scoring (which its baseline check leaves out), when every failing one is
// listed and no listed one passes. Exit codes: 0 passed, 1 did not, 2 bad usage, 3 the generated
// server has no HTTP transport yet.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE22_VERSION } from './inspector.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const nodePackage = `node-${process.platform}-${process.arch}`;
const node22 = path.join(root, '.cache/conformance/node_modules', nodePackage, 'bin', 'node');
const suiteCli = (dir) => path.join(dir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

export const EXAMPLE = path.join(root, 'examples/conformance');
export const SERVER_DIR = path.join(EXAMPLE, 'server');
export const SERVER_JS = path.join(SERVER_DIR, 'dist/server.js');

/** The two suite lines: version, install folder, baseline, extra arguments of `conformance server`. */
export const LINES = {
  legacy: { name: 'legacy', version: '0.1.16', dir: path.join(root, '.cache/conformance'), baseline: path.join(EXAMPLE, 'expected-failures.yml'), args: [] },
  2026: {
    name: '2026',
    version: '0.2.0-alpha.12',
    dir: path.join(root, '.cache/conformance-2026'),
    baseline: path.join(EXAMPLE, 'expected-failures-2026.yml'),
    args: ['--requirements', '2026-07-28'],
  },
};
/** The 0.1.16 line's version and baseline (kept for callers of the one-line script). */
export const CONFORMANCE_VERSION = LINES.legacy.version;
export const BASELINE = LINES.legacy.baseline;

/** `npm install --prefix dir --no-save …packages` (one call per folder: a later --no-save install would prune the earlier packages). */
function npmInstall(dir, packages) {
  mkdirSync(dir, { recursive: true });
  execFileSync('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', '--engine-strict=false', ...packages], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 300_000,
  });
}

/**
 * Installs the line's pinned suite (once) — the 0.1.16 one together with Node 22 in
 * .cache/conformance, the 0.2 one alone in .cache/conformance-2026 — and returns Node 22's and
 * the suite's paths.
 */
export function ensureConformance(line = LINES.legacy) {
  const legacyCli = suiteCli(LINES.legacy.dir);
  if (!existsSync(node22) || !existsSync(legacyCli))
    npmInstall(LINES.legacy.dir, [`${nodePackage}@${NODE22_VERSION}`, `@modelcontextprotocol/conformance@${LINES.legacy.version}`]);
  const cli = suiteCli(line.dir);
  if (line !== LINES.legacy && !existsSync(cli)) npmInstall(line.dir, [`@modelcontextprotocol/conformance@${line.version}`]);
  if (!existsSync(node22) || !existsSync(cli))
    throw new Error(
      `conformance: installing ${nodePackage}@${NODE22_VERSION} and @modelcontextprotocol/conformance@${line.version} did not produce ${node22} and ${cli}`,
    );
  return { node22, cli };
}

/** Compiles the committed generated project with mcpgen's tsc (its imports resolve from mcpgen's node_modules). */
export function buildServer() {
  const r = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', SERVER_DIR], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`conformance: examples/conformance/server does not compile:\n${r.stdout}${r.stderr}`);
  return SERVER_JS;
}

/** Whether the built server's `--help` offers `--transport` (the Streamable HTTP transport). */
export function supportsHttp(serverJs = SERVER_JS) {
  if (!existsSync(serverJs)) return false;
  const r = spawnSync(process.execPath, [serverJs, '--help'], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 && /--transport\b/.test(r.stdout);
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const connects = (port) =>
  new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

/**
 * Starts `node <serverJs> --transport http --port <port>` and waits until it accepts connections.
 * Returns its URL (`http://127.0.0.1:<port>/mcp`), the tail of its stderr and `stop()`.
 */
export async function startServer(serverJs = SERVER_JS, { timeoutMs = 20_000 } = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, [serverJs, '--transport', 'http', '--port', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH ?? '' },
  });
  let stderr = '';
  child.stderr.on('data', (d) => void (stderr = (stderr + d.toString('utf8')).slice(-20_000)));
  let exited = null;
  child.once('exit', (code, signal) => void (exited = code ?? signal));
  const stop = () =>
    new Promise((resolve) => {
      if (exited !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
    });
  const deadline = Date.now() + timeoutMs;
  while (!(await connects(port))) {
    if (exited !== null) throw new Error(`conformance: the server exited (${exited}) before listening:\n${stderr}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`conformance: the server did not listen on 127.0.0.1:${port} within ${timeoutMs} ms:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `http://127.0.0.1:${port}/mcp`, port, stderr: () => stderr, stop };
}

/**
 * The entries of a baseline file (`scenario` or `scenario:check-id`) and the reason written
 * above each (the comment lines directly before it). Throws when the file is not the suite's
 * `server: [entries]` form.
 */
export function readBaseline(file = BASELINE) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const entries = [];
  let comment = [];
  let inServer = false;
  for (const line of lines) {
    if (/^server:\s*$/.test(line)) {
      inServer = true;
      comment = [];
      continue;
    }
    if (/^\S/.test(line) && !line.startsWith('#')) inServer = false;
    const c = /^\s*#\s?(.*)$/.exec(line);
    if (c) {
      if (inServer) comment.push(c[1].trim());
      continue;
    }
    const e = /^\s+-\s+([a-z0-9-]+)(?::([a-z0-9-]+))?\s*$/.exec(line);
    if (e && inServer) {
      entries.push({ scenario: e[1], ...(e[2] ? { check: e[2] } : {}), entry: e[2] ? `${e[1]}:${e[2]}` : e[1], reason: comment.join(' ').trim() });
      comment = [];
    } else if (!line.trim()) comment = comment.length ? comment : [];
    else if (inServer) throw new Error(`conformance: unexpected line in ${path.relative(root, file)}: ${line}`);
  }
  return entries;
}

const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * Parses the suite's output: the `=== SUMMARY ===` block (one `✓|✗ <scenario>: N passed, M failed`
 * line each), the `Total: …` line and the baseline verdict lists.
 */
export function parseOutput(text) {
  const plain = text.replace(ANSI, '');
  const scenarios = {};
  const summary = plain.indexOf('=== SUMMARY ===');
  const block = summary >= 0 ? plain.slice(summary) : plain;
  for (const m of block.matchAll(/^([✓✗]) ([a-z0-9-]+): (\d+) passed, (\d+) failed$/gm))
    scenarios[m[2]] = { ok: m[1] === '✓', passed: Number(m[3]), failed: Number(m[4]) };
  const total = /^Total: (\d+) passed, (\d+) failed$/m.exec(plain);
  const section = (title) => {
    const i = plain.indexOf(title);
    if (i < 0) return [];
    const out = [];
    for (const line of plain
      .slice(i + title.length)
      .split('\n')
      .slice(1)) {
      const m = /^\s+[~✗✓!-]?\s*([a-z0-9-]+(?::[a-z0-9-]+)?)\s*$/.exec(line);
      if (!m) break;
      out.push(m[1]);
    }
    return out;
  };
  return {
    scenarios,
    totalLine: total ? total[0] : undefined,
    passed: total ? Number(total[1]) : undefined,
    failed: total ? Number(total[2]) : undefined,
    expectedFailures: section('Expected failures (in baseline):'),
    unexpectedFailures: section('Unexpected failures (not in baseline):'),
    stale: section('Stale baseline entries'),
  };
}

/** Runs the line's `conformance server --url <url>` (with its baseline unless a scenario is given); resolves to its exit code, output and parsed summary. */
export function runSuite(url, { line = LINES.legacy, scenario, timeoutMs = 600_000 } = {}) {
  const { node22: node, cli: suite } = ensureConformance(line);
  const args = [suite, 'server', '--url', url];
  if (scenario)
    args.push('--scenario', scenario, ...(line.args.includes('--requirements') ? ['--spec-version', line.args[line.args.indexOf('--requirements') + 1]] : []));
  else args.push(...line.args, '--expected-failures', line.baseline);
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } });
    let out = '';
    child.stdout.on('data', (d) => void (out += d.toString('utf8')));
    child.stderr.on('data', (d) => void (out += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const parsed = parseOutput(out);
      const result = { line: line.name, version: line.version, code: code ?? (signal ? 1 : 0), signal, output: out, ...parsed };
      resolve(scenario ? result : { ...result, ...judgeBaseline(parsed, readBaseline(line.baseline)) });
    });
  });
}

/**
 * What the suite's own baseline check leaves out (the 0.2 line judges only the scored
 * scenarios): every failing scenario (✗ in the summary) must be listed — whole, or by one of its
 * checks — and no scenario listed whole may pass, unless the suite itself counted it as an
 * expected failure (a WARNING shows ✓ in the summary but fails its baseline check).
 */
export function judgeBaseline(parsed, entries) {
  const listed = new Set(entries.map((e) => e.scenario));
  const whole = new Set(entries.filter((e) => !e.check).map((e) => e.scenario));
  const failing = Object.entries(parsed.scenarios)
    .filter(([, r]) => !r.ok)
    .map(([n]) => n);
  const unlisted = failing.filter((n) => !listed.has(n));
  const passingListed = [...whole].filter((n) => parsed.scenarios[n]?.ok === true && !parsed.expectedFailures.includes(n));
  // listed failures the suite's own check did not judge (the 0.2 line's unscored scenarios)
  const listedUnjudged = entries.filter((e) => !parsed.expectedFailures.includes(e.entry) && parsed.scenarios[e.scenario]?.ok === false).map((e) => e.entry);
  return { unlisted, passingListed, listedUnjudged };
}

/** Whether a line's run passed: the suite's exit code and {@link judgeBaseline}. */
export function linePassed(result) {
  return result.code === 0 && result.unlisted.length === 0 && result.passingListed.length === 0;
}

/** The summary block as the suite prints it (colours removed), plus the baseline verdict. */
export function summaryText(result) {
  const plain = result.output.replace(ANSI, '');
  const i = plain.indexOf('=== SUMMARY ===');
  return (i >= 0 ? plain.slice(i) : plain.slice(-4000)).trimEnd();
}

/** The line's closing line: version, the suite's Total line, baseline size and verdict. */
export function totalText(result) {
  const extra = [
    result.unlisted?.length ? `failing but not listed: ${result.unlisted.join(', ')}` : '',
    result.passingListed?.length ? `listed but passing: ${result.passingListed.join(', ')}` : '',
  ].filter(Boolean);
  return `conformance ${result.version}${result.line === '2026' ? ' --requirements 2026-07-28' : ''}: ${result.totalLine ?? 'no summary line'}, ${result.expectedFailures.length} expected failure(s)${result.listedUnjudged?.length ? ` + ${result.listedUnjudged.length} listed among the unscored` : ''}; exit ${result.code}${extra.length ? `; ${extra.join('; ')}` : ''}`;
}

/** Checks that every entry of each line's baseline gives a reason. */
function checkReasons(lines) {
  for (const line of lines) {
    const missing = readBaseline(line.baseline)
      .filter((e) => !e.reason)
      .map((e) => e.entry);
    if (missing.length) throw new Error(`conformance: ${path.relative(root, line.baseline)} gives no reason for ${missing.join(', ')}`);
  }
}

/**
 * Everything `node scripts/conformance.mjs` does: build, start over HTTP, run each line (one
 * after the other, against the same server), stop. Resolves to the results by line name.
 */
export async function runConformance({ lines = [LINES.legacy, LINES[2026]], scenario, log = () => {} } = {}) {
  checkReasons(lines);
  for (const line of lines) ensureConformance(line);
  log('compiling examples/conformance/server');
  const serverJs = buildServer();
  if (!supportsHttp(serverJs)) return { skipped: 'the generated server has no --transport option (no Streamable HTTP transport yet)' };
  const server = await startServer(serverJs);
  log(`server listening at ${server.url}`);
  try {
    const results = {};
    for (const line of lines) results[line.name] = { ...(await runSuite(server.url, { line, scenario })), baseline: readBaseline(line.baseline) };
    return { results, serverStderr: server.stderr() };
  } finally {
    await server.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const opt = (name) => {
    const i = argv.indexOf(name);
    if (i < 0) return undefined;
    if (i + 1 >= argv.length) {
      console.error(`conformance: ${name} needs a value`);
      process.exit(2);
    }
    return argv[i + 1];
  };
  const only = opt('--line');
  if (only !== undefined && !Object.hasOwn(LINES, only)) {
    console.error(`conformance: --line is legacy or 2026, not ${only}`);
    process.exit(2);
  }
  const lines = only ? [LINES[only]] : [LINES.legacy, LINES[2026]];
  if (argv.includes('--install')) {
    console.log(JSON.stringify(lines.map((l) => ensureConformance(l))));
    process.exit(0);
  }
  const verbose = argv.includes('--verbose');
  const scenario = opt('--scenario');
  const url = opt('--url');
  const log = (m) => console.log(`conformance: ${m}`);
  try {
    let results;
    if (url) {
      results = {};
      for (const line of lines) results[line.name] = await runSuite(url, { line, scenario });
    } else {
      const run = await runConformance({ lines, scenario, log });
      if (run.skipped) {
        console.log(`conformance: not run: ${run.skipped}`);
        process.exit(3);
      }
      results = run.results;
    }
    let ok = true;
    for (const result of lines.map((l) => results[l.name])) {
      console.log(verbose ? result.output.replace(ANSI, '') : summaryText(result));
      console.log(totalText(result));
      ok &&= scenario ? result.code === 0 : linePassed(result);
    }
    process.exit(ok ? 0 : 1);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}

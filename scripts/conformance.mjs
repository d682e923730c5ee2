#!/usr/bin/env node
// The official MCP conformance suite (@modelcontextprotocol/conformance) against the generated
// server of examples/conformance, over Streamable HTTP.
//
// The suite needs Node >= 22, newer than this project's Node 20 baseline, so a Node 22 binary is
// installed from the npm registry (node-<os>-<arch>, the version scripts/inspector.mjs pins) next
// to it, in .cache/conformance/ — nothing global changes. Both are pinned; once installed, no
// network is needed (the generated project resolves its dependencies from mcpgen's node_modules
// and is compiled with mcpgen's own tsc, so nothing is installed for it either).
//
//   node scripts/conformance.mjs               compile examples/conformance/server, start it with
//                                              --transport http on a free port, run the active
//                                              suite with examples/conformance/expected-failures.yml
//                                              as baseline, print the summary; exit with the suite's code
//   node scripts/conformance.mjs --install     install (if missing) and print the paths
//   node scripts/conformance.mjs --url URL     run the suite against a server that is already running
//   node scripts/conformance.mjs --scenario S  one scenario only (no baseline)
//   node scripts/conformance.mjs --verbose     also print the suite's whole output
//
// Exit codes: 0 the suite passed (every failure is listed in the baseline, and no listed one
// passes), 1 it did not, 2 bad usage, 3 the generated server has no HTTP transport yet.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE22_VERSION } from './inspector.mjs';

export const CONFORMANCE_VERSION = '0.1.16';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, '.cache/conformance');
const nodePackage = `node-${process.platform}-${process.arch}`;
const node22 = path.join(dir, 'node_modules', nodePackage, 'bin', 'node');
const cli = path.join(dir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

export const EXAMPLE = path.join(root, 'examples/conformance');
export const SERVER_DIR = path.join(EXAMPLE, 'server');
export const SERVER_JS = path.join(SERVER_DIR, 'dist/server.js');
export const BASELINE = path.join(EXAMPLE, 'expected-failures.yml');

/** Installs the pinned Node 22 binary and conformance suite into .cache/conformance (once); returns their paths. */
export function ensureConformance() {
  if (!existsSync(node22) || !existsSync(cli)) {
    mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', '--engine-strict=false', `${nodePackage}@${NODE22_VERSION}`, `@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 300_000 });
  }
  if (!existsSync(node22) || !existsSync(cli)) throw new Error(`conformance: installing ${nodePackage}@${NODE22_VERSION} and @modelcontextprotocol/conformance@${CONFORMANCE_VERSION} into ${dir} did not produce ${node22} and ${cli}`);
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
  const child = spawn(process.execPath, [serverJs, '--transport', 'http', '--port', String(port)], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
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
 * The scenarios of the baseline file and the reason written above each (the comment lines
 * directly before its entry). Throws when the file is not the suite's `server: [names]` form.
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
    const e = /^\s+-\s+([a-z0-9-]+)\s*$/.exec(line);
    if (e && inServer) {
      entries.push({ scenario: e[1], reason: comment.join(' ').trim() });
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
  for (const m of block.matchAll(/^([✓✗]) ([a-z0-9-]+): (\d+) passed, (\d+) failed$/gm)) scenarios[m[2]] = { ok: m[1] === '✓', passed: Number(m[3]), failed: Number(m[4]) };
  const total = /^Total: (\d+) passed, (\d+) failed$/m.exec(plain);
  const section = (title) => {
    const i = plain.indexOf(title);
    if (i < 0) return [];
    const out = [];
    for (const line of plain.slice(i + title.length).split('\n').slice(1)) {
      const m = /^\s+[~✗✓!-]?\s*([a-z0-9-]+)\s*$/.exec(line);
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

/** Runs `conformance server --url <url>` (with the baseline unless a scenario is given); resolves to its exit code, output and parsed summary. */
export function runSuite(url, { scenario, baseline = BASELINE, timeoutMs = 600_000 } = {}) {
  const { node22: node, cli: suite } = ensureConformance();
  const args = [suite, 'server', '--url', url];
  if (scenario) args.push('--scenario', scenario);
  else if (baseline) args.push('--expected-failures', baseline);
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } });
    let out = '';
    child.stdout.on('data', (d) => void (out += d.toString('utf8')));
    child.stderr.on('data', (d) => void (out += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 1 : 0), signal, output: out, ...parseOutput(out) });
    });
  });
}

/** The summary block as the suite prints it (colours removed), plus the baseline verdict. */
export function summaryText(result) {
  const plain = result.output.replace(ANSI, '');
  const i = plain.indexOf('=== SUMMARY ===');
  return (i >= 0 ? plain.slice(i) : plain.slice(-4000)).trimEnd();
}

/** Everything `node scripts/conformance.mjs` does: build, start over HTTP, run the suite, stop. */
export async function runConformance({ scenario, log = () => {} } = {}) {
  const entries = readBaseline();
  const missing = entries.filter((e) => !e.reason).map((e) => e.scenario);
  if (missing.length) throw new Error(`conformance: ${path.relative(root, BASELINE)} gives no reason for ${missing.join(', ')}`);
  ensureConformance();
  log('compiling examples/conformance/server');
  const serverJs = buildServer();
  if (!supportsHttp(serverJs)) return { skipped: 'the generated server has no --transport option (no Streamable HTTP transport yet)' };
  const server = await startServer(serverJs);
  log(`server listening at ${server.url}`);
  try {
    const result = await runSuite(server.url, { scenario });
    return { ...result, baseline: entries, serverStderr: server.stderr() };
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
  if (argv.includes('--install')) {
    console.log(JSON.stringify(ensureConformance()));
    process.exit(0);
  }
  const verbose = argv.includes('--verbose');
  const scenario = opt('--scenario');
  const url = opt('--url');
  const log = (m) => console.log(`conformance: ${m}`);
  try {
    const result = url ? await runSuite(url, { scenario }) : await runConformance({ scenario, log });
    if (result.skipped) {
      console.log(`conformance: not run: ${result.skipped}`);
      process.exit(3);
    }
    if (verbose) console.log(result.output.replace(ANSI, ''));
    else console.log(summaryText(result));
    console.log(`conformance ${CONFORMANCE_VERSION}: ${result.totalLine ?? 'no summary line'}${scenario ? '' : `, ${result.expectedFailures.length} expected failure(s) from ${path.relative(root, BASELINE)}`}; exit ${result.code}`);
    process.exit(result.code === 0 ? 0 : 1);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}

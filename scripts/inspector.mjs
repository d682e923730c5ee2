#!/usr/bin/env node
// The official MCP Inspector CLI's strict schema check, for generated servers.
//
// The Inspector (@modelcontextprotocol/inspector) needs Node >= 22.19, newer than this project's
// Node 20 baseline, so a Node 22 binary is installed from the npm registry (node-<os>-<arch>)
// next to it, in .cache/inspector/ — nothing global changes. Both are pinned.
//
//   node scripts/inspector.mjs --install                       install (if missing) and print the paths
//   node scripts/inspector.mjs --tools N -- node dist/server.js  list the server's tools with --strict:
//     exit 0 only when the Inspector exits 0, reports no schema finding (warnings included) and
//     sees exactly N tools (it silently drops a tool whose schema it cannot read)
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const INSPECTOR_VERSION = '2.12.0';
export const NODE22_VERSION = '22.23.3';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, '.cache/inspector');
const nodePackage = `node-${process.platform}-${process.arch}`;
const node22 = path.join(dir, 'node_modules', nodePackage, 'bin', 'node');
const cli = path.join(dir, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

/** Installs the pinned Node 22 binary and Inspector into .cache/inspector (once); returns their paths. */
export function ensureInspector() {
  if (!existsSync(node22) || !existsSync(cli)) {
    mkdirSync(dir, { recursive: true });
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        dir,
        '--no-save',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        '--engine-strict=false',
        `${nodePackage}@${NODE22_VERSION}`,
        `@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'], timeout: 300_000 },
    );
  }
  if (!existsSync(node22) || !existsSync(cli))
    throw new Error(
      `inspector: installing ${nodePackage}@${NODE22_VERSION} and @modelcontextprotocol/inspector@${INSPECTOR_VERSION} into ${dir} did not produce ${node22} and ${cli}`,
    );
  return { node22, cli };
}

/**
 * Runs `tools/list --strict --format json` against a stdio server command. Returns the tool
 * names, the schema findings and the exit code; `env` is passed to the server.
 */
export function inspectTools(command, args, env = {}) {
  const { node22: node, cli: launcher } = ensureInspector();
  const home = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-inspector-'));
  try {
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const res = spawnSync(node, [launcher, '--cli', ...envArgs, command, ...args, '--method', 'tools/list', '--strict', '--format', 'json'], {
      env: { PATH: process.env.PATH ?? '', HOME: home },
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      timeout: 300_000,
    });
    let parsed;
    try {
      parsed = JSON.parse(res.stdout);
    } catch {
      parsed = undefined;
    }
    return {
      code: res.status,
      tools: (parsed?.result?.tools ?? []).map((t) => t.name),
      findings: parsed?.schemaFindings ?? [],
      stderr: res.stderr.slice(0, 4000),
    };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * Runs one Inspector CLI method against a Streamable HTTP server at `url` (`--transport http`):
 * `args` are the method's flags (e.g. `['--method', 'tools/call', '--tool-name', 'x', '--tool-arg', 'a=1']`),
 * `headers` are sent with every request. Asynchronous, so that servers in the calling process
 * (a test's backend) keep answering. Resolves to the exit code and the parsed JSON output.
 */
export function inspectHttp(url, args, headers = {}) {
  const { node22: node, cli: launcher } = ensureInspector();
  const home = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-inspector-'));
  const headerArgs = Object.entries(headers).flatMap(([k, v]) => ['--header', `${k}: ${v}`]);
  return new Promise((resolve) => {
    execFile(
      node,
      [launcher, '--cli', url, '--transport', 'http', ...headerArgs, ...args, '--format', 'json'],
      { env: { PATH: process.env.PATH ?? '', HOME: home }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
      (err, stdout, stderr) => {
        rmSync(home, { recursive: true, force: true });
        let parsed;
        try {
          parsed = JSON.parse(stdout);
        } catch {
          parsed = undefined;
        }
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
          output: parsed,
          stdout: stdout.slice(0, 4000),
          stderr: stderr.slice(0, 4000),
        });
      },
    );
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  if (argv.includes('--install')) {
    console.log(JSON.stringify(ensureInspector()));
    process.exit(0);
  }
  const sep = argv.indexOf('--');
  const n = argv.indexOf('--tools');
  if (sep < 0 || sep + 1 >= argv.length) {
    console.error('usage: node scripts/inspector.mjs [--tools N] -- <server command> [args…]');
    process.exit(2);
  }
  const r = inspectTools(argv[sep + 1], argv.slice(sep + 2));
  const expected = n >= 0 ? Number(argv[n + 1]) : undefined;
  const ok = r.code === 0 && r.findings.length === 0 && (expected === undefined || r.tools.length === expected);
  console.log(
    `inspector ${INSPECTOR_VERSION}: exit ${r.code}, ${r.tools.length} tools${expected !== undefined ? ` (expected ${expected})` : ''}, ${r.findings.length} tool(s) with schema findings`,
  );
  if (r.findings.length) console.log(JSON.stringify(r.findings.slice(0, 5), null, 2));
  if (!ok && r.stderr) console.error(r.stderr);
  process.exit(ok ? 0 : 1);
}

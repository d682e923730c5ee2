/**
 * Builds a generated server from an inline spec and manifest into `.cache/<name>`, compiles it
 * with mcpgen's own tsc (its imports resolve from mcpgen's node_modules, so no npm install), and
 * starts it over stdio with the SDK `Client`.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'vitest';
import { compile } from '../../src/compile.js';
import { ROOT, run } from './project.js';

/** A built project: its folder, and its diagnostics (warnings) one per line as `file:line:col severity CODE message`. */
export type BuiltServer = { dir: string; server: string; stderr: string };

/** Builds `spec` + `manifest` into `.cache/<name>/server` and compiles it; fails the test on any error. */
export async function buildServer(name: string, spec: string, manifest: string): Promise<BuiltServer> {
  const dir = path.join(ROOT, '.cache', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'openapi.yaml'), spec);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), manifest);
  // the library, not the CLI: these tests are about the generated server, not about the command line
  const res = await compile({ manifestPath: path.join(dir, 'mcpgen.yaml'), cwd: dir, emit: true });
  const stderr = res.diagnostics.items.map((d) => `${d.location.file}:${d.location.line}:${d.location.col} ${d.severity} ${d.code} ${d.message}\n`).join('');
  expect(
    res.diagnostics.items.filter((d) => d.severity === 'error'),
    stderr,
  ).toEqual([]);
  const server = path.join(dir, 'server');
  for (const [file, content] of [...(res.files ?? []), ...(res.stubs ?? [])]) {
    mkdirSync(path.dirname(path.join(res.outDir!, file)), { recursive: true });
    writeFileSync(path.join(res.outDir!, file), content);
  }
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', server], { maxBuffer: 16 * 1024 * 1024 }).catch(
    (e: { stdout?: string }) => {
      throw new Error(`the generated project does not compile:\n${e.stdout ?? String(e)}`);
    },
  );
  return { dir, server, stderr };
}

/** A connected client, its server's process id and everything the server wrote to stderr so far. */
export type Connected = { client: Client; pid: number; stderr: () => string; close: () => Promise<void> };

/** Starts `<server>/dist/server.js` with `env` (plus PATH) and connects a `Client` to it. */
export async function connect(server: string, env: Record<string, string>, name = 'hardening-e2e'): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(server, 'dist/server.js')],
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'pipe',
  });
  let log = '';
  transport.stderr?.on('data', (d: Buffer) => void (log += d.toString('utf8')));
  const client = new Client({ name, version: '1' });
  await client.connect(transport);
  return { client, pid: transport.pid!, stderr: () => log, close: () => client.close() };
}

/** Milliseconds a `ping` takes to be answered. */
export async function pingMs(client: Client, timeoutMs = 10_000): Promise<number> {
  const started = performance.now();
  await client.ping({ timeout: timeoutMs });
  return performance.now() - started;
}

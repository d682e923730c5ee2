/**
 * Helpers of the contract tests: generate and build a project for a spec, start Prism (the
 * validating OpenAPI mock) on 127.0.0.1, and connect an SDK `Client` to the built server over
 * stdio with every credential it could need.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { main } from '../../src/cli/main.js';
import { compile } from '../../src/compile.js';
import type { IrServer } from '../../src/ir/types.js';
import { ROOT, run } from './project.js';

const children = new Set<ChildProcess>();
process.once('exit', stopPrisms);

/** Stops every Prism still running (for `afterAll`). */
export function stopPrisms(): void {
  for (const c of children) c.kill('SIGTERM');
  children.clear();
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** A running Prism: its URL, its output so far, and how to stop it. */
export type Prism = { url: string; log: () => string; stop: () => void };

/**
 * Starts Prism on 127.0.0.1 (its own binary, so the PID we kill is the server). `dynamic`
 * generates responses from the schemas (`-d`) with `seed` making them reproducible.
 */
export async function startPrism(spec: string, opts: { dynamic?: boolean; seed?: string; startTimeoutMs?: number } = {}): Promise<Prism> {
  const port = await freePort();
  const args = ['mock', spec, '-h', '127.0.0.1', '-p', String(port)];
  if (opts.dynamic) args.push('-d');
  if (opts.seed !== undefined) args.push('--seed', opts.seed);
  const child = spawn(path.join(ROOT, 'node_modules/.bin/prism'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const stop = () => {
    child.kill('SIGTERM');
    children.delete(child);
  };
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`Prism did not start:\n${log}`));
    }, opts.startTimeoutMs ?? 60_000);
    const onData = (d: Buffer) => {
      log += d.toString();
      if (log.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`Prism exited with ${code}:\n${log}`)));
  });
  return { url: `http://127.0.0.1:${port}`, log: () => log, stop };
}

/** A generated, built project for a spec. */
export type ContractProject = { ir: IrServer; serverDir: string; serverJs: string };

/**
 * Generates the project of `spec` into `work/server` (emptied first) with a minimal manifest,
 * and builds it with mcpgen's own tsc. The project lives under the repository, so it resolves
 * its dependencies from mcpgen's node_modules (the same pinned versions): nothing to install.
 */
export async function buildContractProject(spec: string, work: string, name: string): Promise<ContractProject> {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(path.join(work, 'mcpgen.yaml'), `name: ${name}\nopenapi: ${path.relative(work, spec)}\noutput: ./server\n`);
  let stderr = '';
  const io = { stdout: () => undefined, stderr: (s: string) => void (stderr += s), cwd: work };
  const code = await main(['build', 'mcpgen.yaml'], io);
  if (code !== 0) throw new Error(`mcpgen build of ${spec} exited with ${code}:\n${stderr}`);
  const serverDir = path.join(work, 'server');
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', serverDir], { maxBuffer: 64 * 1024 * 1024, timeout: 240_000 });
  const { ir } = await compile({ manifestPath: path.join(work, 'mcpgen.yaml'), cwd: work, emit: false });
  return { ir: ir!, serverDir, serverJs: path.join(serverDir, 'dist/server.js') };
}

/**
 * The dependencies of a generated project that mcpgen's node_modules does not provide at the
 * exact pinned version (empty: running the project from the repository is what an install gives).
 */
export function dependencyMismatches(serverDir: string): string[] {
  const pkg = JSON.parse(readFileSync(path.join(serverDir, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
  const out: string[] = [];
  for (const [dep, wanted] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
    let have: string | undefined;
    try {
      have = (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', dep, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      have = undefined;
    }
    if (have !== wanted) out.push(`${dep}: project wants ${wanted}, mcpgen has ${have ?? 'none'}`);
  }
  return out;
}

/** The server's environment: its base URL and a dummy value for every credential variable the generated README lists. */
export function serverEnv(ir: IrServer, baseUrl: string): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', [`${ir.envPrefix}_BASE_URL`]: baseUrl };
  for (const s of ir.securitySchemes) for (const name of Object.values(s.env)) env[name] = 'contract-test-secret';
  return env;
}

/** An SDK `Client` connected over stdio to a built server, and the tail of the server's stderr (always drained, so the server never blocks on it). */
export async function connectClient(
  serverJs: string,
  env: Record<string, string>,
  opts: { maxBufferSize?: number } = {},
): Promise<{ client: Client; stderr: () => string }> {
  const client = new Client({ name: 'contract', version: '1' });
  const params = { command: process.execPath, args: [serverJs], env, stderr: 'pipe' as const };
  const transport = new StdioClientTransport(opts.maxBufferSize !== undefined ? { ...params, maxBufferSize: opts.maxBufferSize } : params);
  let tail = '';
  transport.stderr?.on('data', (d: Buffer) => void (tail = (tail + d.toString()).slice(-20_000)));
  await client.connect(transport);
  return { client, stderr: () => tail };
}

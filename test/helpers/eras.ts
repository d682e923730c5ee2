/**
 * Real clients of both protocol eras for a generated server's process, over both transports:
 * the v1 SDK `Client` (legacy era, `initialize`) and the v2 `Client` pinned to 2026-07-28 (modern
 * era), over stdio (the client spawns `dist/server.js`) or Streamable HTTP (the test starts
 * `dist/server.js --transport http --port 0` and reads its address from the start-up line).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttp } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';

import type { AnyClient, Era } from './linked.js';

export type { AnyClient, CallOptions, Era } from './linked.js';
export { callToolWith, ERAS } from './linked.js';
export type TransportKind = 'stdio' | 'http';
export const TRANSPORTS: readonly TransportKind[] = ['stdio', 'http'];

/** A generated server process serving Streamable HTTP. */
export type HttpProcess = {
  /** The MCP endpoint, e.g. http://127.0.0.1:PORT/mcp. */
  readonly url: string;
  readonly pid: number;
  stderr(): string;
  /** Resolves with the exit code. */
  readonly exit: Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
};

/** Starts `<server>/dist/server.js --transport http --port 0` (plus `args`) and waits until it listens. */
export async function startHttp(server: string, env: Record<string, string>, args: readonly string[] = []): Promise<HttpProcess> {
  const child = spawn(process.execPath, [path.join(server, 'dist/server.js'), '--transport', 'http', '--port', '0', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stdout.on('data', (d: Buffer) => void (out += d.toString('utf8')));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start listening within 20 s; stderr:\n${err}`)), 20_000);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString('utf8');
      const m = /Streamable HTTP at (http:\/\/\S+?\/mcp)\b/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code} before listening; stderr:\n${err}\nstdout:\n${out}`));
    });
  });
  return { url, pid: child.pid!, stderr: () => err, exit, kill: (signal = 'SIGTERM') => void child.kill(signal) };
}

/** How to reach a server: spawn it over stdio, or an HTTP endpoint. */
export type Target =
  | { readonly kind: 'stdio'; readonly server: string; readonly env: Record<string, string> }
  | { readonly kind: 'http'; readonly url: string; readonly headers?: Record<string, string> };

/** A connected client of `era` to `target`; `setup` runs before connecting (request handlers). */
export async function connectClient(
  target: Target,
  era: Era,
  options: { capabilities?: ClientCapabilities; setup?: (client: AnyClient) => void; name?: string } = {},
): Promise<{ client: AnyClient; stderr: () => string }> {
  const capabilities = options.capabilities ?? {};
  const name = options.name ?? `e2e-${era}`;
  let log = '';
  const client: AnyClient =
    era === 'legacy'
      ? new LegacyClient({ name, version: '1.0.0' }, { capabilities })
      : new ModernClient({ name, version: '1.0.0' }, { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } } as ConstructorParameters<
          typeof ModernClient
        >[1]);
  options.setup?.(client);
  let transport: unknown;
  if (target.kind === 'stdio') {
    const params = {
      command: process.execPath,
      args: [path.join(target.server, 'dist/server.js')],
      env: { PATH: process.env.PATH ?? '', ...target.env },
      stderr: 'pipe' as const,
    };
    const t = era === 'legacy' ? new LegacyStdio(params) : new ModernStdio(params);
    t.stderr?.on('data', (d: Buffer) => void (log += d.toString('utf8')));
    transport = t;
  } else {
    const init = target.headers ? { requestInit: { headers: target.headers } } : {};
    transport = era === 'legacy' ? new LegacyHttp(new URL(target.url), init) : new ModernHttp(new URL(target.url), init);
  }
  await (client as LegacyClient).connect(transport as Parameters<LegacyClient['connect']>[0]);
  return { client, stderr: () => log };
}

/** Awaits `p`, which must reject with a JSON-RPC error; returns its code and message. */
export async function rpcError(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err === undefined) throw new Error('expected a JSON-RPC error, got a result');
  return err as { code: number; message: string };
}

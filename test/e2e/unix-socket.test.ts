/**
 * A generated server calls its API over a unix socket: the Petstore spec built with
 * `baseUrl: unix:<socket>:/v2` in a temp folder, compiled, started over stdio and driven by the
 * SDK `Client`; the backend is a node:http server listening on that socket.
 */
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ROOT, run } from '../helpers/project.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-unix-'));
const socket = path.join(dir, 'petstore.sock');
const seen: Array<{ method: string; url: string; host?: string }> = [];
let backend: http.Server;
let client: Client;
let stderr = '';

beforeAll(async () => {
  copyFileSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), path.join(dir, 'openapi.yaml'));
  writeFileSync(
    path.join(dir, 'mcpgen.yaml'),
    `name: socket-pets\nopenapi: ./openapi.yaml\noutput: ./server\nbaseUrl: ${JSON.stringify(`unix:${socket}:/v2`)}\n`,
  );
  let err = '';
  expect(await main(['build', 'mcpgen.yaml'], { stdout: () => undefined, stderr: (s: string) => void (err += s), cwd: dir }), err).toBe(0);
  // the temp folder is outside the repository: resolve the project's dependencies from mcpgen's
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'server/node_modules'), 'dir');
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'server')]);

  backend = http.createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, ...(req.headers.host !== undefined ? { host: req.headers.host } : {}) });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 1, name: 'Rex', status: 'available' }));
  });
  await new Promise<void>((resolve) => backend.listen(socket, resolve));

  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(dir, 'server/dist/server.js')],
    env: { PATH: process.env.PATH ?? '' },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  client = new Client({ name: 'unix-e2e', version: '1' });
  await client.connect(transport);
}, 240_000);

afterAll(async () => {
  await client?.close();
  backend?.closeAllConnections();
  await new Promise<void>((resolve) => (backend ? backend.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

it('sends tool calls over the unix socket, with the base path', async () => {
  const result = (await client.callTool({ name: 'getPetById', arguments: { petId: 1 } })) as CallToolResult;
  expect(result.isError).toBeFalsy();
  expect(result.content).toEqual([{ type: 'text', text: '{"id":1,"name":"Rex","status":"available"}' }]);
  expect(seen).toEqual([{ method: 'GET', url: '/v2/pets/1', host: 'localhost' }]);
  expect(stderr).toContain(`unix socket ${socket} (base path /v2)`);
});

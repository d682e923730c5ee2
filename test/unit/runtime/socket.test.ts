/**
 * `unix:` base URLs: parsing (runtime/process/settings.ts) and requests through a real node:http server
 * listening on a unix socket in a temp folder (runtime/operation/socket.ts, through sendOperation).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { OperationTool, ServerConfig } from '../../../templates/runtime/core/types.js';
import { sendOperation } from '../../../templates/runtime/operation/operation-call.js';
import { closeSockets, socketFetch } from '../../../templates/runtime/operation/socket.js';
import { describeBase, parseApiBase, resolveSettings, SettingsError } from '../../../templates/runtime/process/settings.js';

describe('parseApiBase', () => {
  it.each([
    ['unix:/var/run/docker.sock', { baseUrl: 'http://localhost', socketPath: '/var/run/docker.sock' }],
    ['unix:///var/run/docker.sock', { baseUrl: 'http://localhost', socketPath: '/var/run/docker.sock' }],
    ['unix:/var/run/docker.sock:/v1.43', { baseUrl: 'http://localhost/v1.43', socketPath: '/var/run/docker.sock' }],
    ['unix:///run/podman/podman.sock:/v4.0.0/libpod/', { baseUrl: 'http://localhost/v4.0.0/libpod', socketPath: '/run/podman/podman.sock' }],
    ['unix:/tmp/a%3Ab%20c.sock:/x', { baseUrl: 'http://localhost/x', socketPath: '/tmp/a:b c.sock' }],
    ['UNIX:/s.sock:/', { baseUrl: 'http://localhost', socketPath: '/s.sock' }],
    ['https://api.example.com/v1/', { baseUrl: 'https://api.example.com/v1' }],
  ])('%s', (value, expected) => {
    expect(parseApiBase('X_BASE_URL', value)).toStrictEqual(expected);
  });

  it.each([
    ['unix:', /the socket path must be absolute/],
    ['unix:relative.sock', /the socket path must be absolute/],
    ['unix://var/run/docker.sock', /the socket path must be absolute/],
    ['unix:/var/run/docker.sock:v1.43', /the base path after the socket path must start with \//],
    ['unix:/var/run/docker.sock:/v1?x=1', /without spaces, a query/],
    ['unix:/bad%zz.sock', /invalid %-escape/],
    ['unix:/nul%00.sock', /NUL/],
    ['ftp://example.com', /must be an absolute http:\/\/ or https:\/\/ URL .*unix:/],
  ])('refuses %s', (value, message) => {
    expect(() => parseApiBase('X_BASE_URL', value)).toThrow(SettingsError);
    expect(() => parseApiBase('X_BASE_URL', value)).toThrow(message);
    expect(() => parseApiBase('X_BASE_URL', value)).toThrow(/^X_BASE_URL /);
  });

  it('is how settings read the base URL, from the environment or the manifest', () => {
    const config: ServerConfig = { name: 'd', version: '1', envPrefix: 'D', baseUrl: 'unix:/run/d.sock:/v2', timeoutMs: 1000, maxResponseBytes: 1000 };
    expect(resolveSettings(config, {})).toMatchObject({ baseUrl: 'http://localhost/v2', socketPath: '/run/d.sock' });
    expect(resolveSettings(config, { D_BASE_URL: 'https://d.example.com' })).not.toHaveProperty('socketPath');
    expect(() => resolveSettings(config, { D_BASE_URL: 'unix:d.sock' })).toThrow(/^D_BASE_URL must be unix:<absolute socket path>/);
    expect(() => resolveSettings({ ...config, baseUrl: 'unix:d.sock' }, {})).toThrow(/The built-in baseUrl must be unix:/);
    expect(describeBase(resolveSettings(config, {}))).toBe('unix socket /run/d.sock (base path /v2)');
    expect(describeBase({ baseUrl: 'https://d.example.com' })).toBe('base URL https://d.example.com');
  });
});

describe('requests over a unix socket', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-sock-'));
  const socket = path.join(dir, 'api.sock');
  const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url === '/v1/moved') {
        res.writeHead(302, { location: '/v1/containers/7' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 7, via: 'socket' }));
    });
  });
  const tool: OperationTool = {
    kind: 'operation',
    name: 'inspect',
    inputSchema: { type: 'object', properties: { id: { type: 'string' }, all: { type: 'boolean' } }, required: ['id'] },
    http: {
      method: 'POST',
      path: '/containers/{id}',
      params: [
        { arg: 'id', name: 'id', in: 'path' },
        { arg: 'all', name: 'all', in: 'query' },
      ],
    },
  };

  beforeAll(async () => {
    setLogSink(() => undefined);
    await new Promise<void>((resolve) => server.listen(socket, resolve));
  });
  afterAll(async () => {
    await closeSockets();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const settings = (value: string) =>
    resolveSettings({ name: 'd', version: '1', envPrefix: 'D', timeoutMs: 5000, maxResponseBytes: 10_000 }, { D_BASE_URL: value });

  it('sends the request, base path included, to the socket', async () => {
    const result = (await sendOperation(tool, { id: 'a b', all: true }, settings(`unix:${socket}:/v1`))).result as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(result.content).toEqual([{ type: 'text', text: '{"id":7,"via":"socket"}' }]);
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/v1/containers/a%20b?all=true', headers: { host: 'localhost' } });
  });

  it("accepts Docker's unix:/// spelling and follows redirects on the socket", async () => {
    const fetch = socketFetch(socket);
    const response = await fetch('http://localhost/v1/moved');
    expect(await response.json()).toEqual({ id: 7, via: 'socket' });
    expect(seen.slice(-2).map((r) => r.url)).toEqual(['/v1/moved', '/v1/containers/7']);
    const result = (await sendOperation(tool, { id: 'x' }, settings(`unix://${socket}`))).result as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(seen.at(-1)!.url).toBe('/containers/x');
  });

  it('sends requests for other origins to the fallback fetch', async () => {
    const other: string[] = [];
    const fetch = socketFetch(socket, async (input) => {
      other.push(String(input));
      return new Response('{}');
    });
    await fetch('https://auth.example.com/token', { method: 'POST' });
    expect(other).toEqual(['https://auth.example.com/token']);
  });

  it('names the socket when it cannot connect', async () => {
    const result = (await sendOperation(tool, { id: 'x' }, settings(`unix:${path.join(dir, 'missing.sock')}:/v1`))).result as CallToolResult;
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(
      new RegExp(`^Request to unix socket ${path.join(dir, 'missing.sock').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} failed \\(POST /v1/containers/x\\): ENOENT`),
    );
  });
});

/**
 * Security requirement alternatives end to end (issue 32): `security: [{pat: []}, {oauth2: []}]`
 * means one of them. The fixture (like Asana: a personal access token or an OAuth token, plus a
 * tool that needs a workspace key together with either) is built into
 * `.cache/auth-alternatives/server`, compiled, and started over stdio with only ONE alternative's
 * credentials set; a backend on 127.0.0.1 checks the header each call carries. The server must
 * start without a credentials warning, and the client snippets must ask for one alternative.
 */

import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ROOT, run } from '../helpers/project.js';

const work = path.join(ROOT, '.cache/auth-alternatives');
const PAT = 'pat-7f6e5d4c3b2a';
const OAUTH = 'oauth-0a1b2c3d4e5f';
const WS = 'ws-key-99887766';

type Seen = { url: string; authorization?: string; workspace?: string };
const seen: Seen[] = [];
let backend: http.Server;
let url: string;

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(path.join(ROOT, 'test/fixtures/auth-alternatives'), work, { recursive: true });
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: work };
  expect(await main(['build', 'mcpgen.yaml'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(work, 'server')]);
  backend = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const h = req.headers;
      seen.push({
        url: req.url!,
        ...(h.authorization !== undefined ? { authorization: h.authorization } : {}),
        ...(h['x-workspace-key'] !== undefined ? { workspace: String(h['x-workspace-key']) } : {}),
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(backend.address() as { port: number }).port}`;
}, 120_000);

afterAll(() => {
  backend?.close();
});

/** Starts the server with `env`, calls each tool once, and returns what the backend saw and the server's stderr. */
async function session(env: Record<string, string>): Promise<{ stderr: string; calls: Array<{ tool: string; result: CallToolResult; requests: Seen[] }> }> {
  let stderr = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(work, 'server/dist/server.js')],
    env: { PATH: process.env.PATH ?? '', ALTFX_BASE_URL: `${url}/v1`, ...env },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'alternatives-e2e', version: '1' });
  await client.connect(transport);
  const calls = [];
  try {
    for (const tool of ['listTasks', 'listWorkspaces']) {
      const before = seen.length;
      const result = (await client.callTool({ name: tool, arguments: {} })) as CallToolResult;
      calls.push({ tool, result, requests: seen.slice(before) });
    }
  } finally {
    await client.close();
  }
  return { stderr, calls };
}

const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const warnings = (stderr: string) => stderr.split('\n').filter((l) => / WARN /.test(l) && /credentials/.test(l));

describe('alternative credentials', () => {
  it('with only the second alternative (OAuth) set: no warning at start, every tool works and sends the OAuth token', async () => {
    const { stderr, calls } = await session({ ALTFX_OAUTH_TOKEN: OAUTH, ALTFX_WORKSPACEKEY_API_KEY: WS });
    expect(warnings(stderr)).toEqual([]);
    for (const c of calls) expect(c.result.isError, text(c.result)).toBeFalsy();
    expect(calls.map((c) => c.requests)).toEqual([
      [{ url: '/v1/tasks', authorization: `Bearer ${OAUTH}` }],
      [{ url: '/v1/workspaces', authorization: `Bearer ${OAUTH}`, workspace: WS }],
    ]);
    expect(stderr).not.toContain(OAUTH);
  });

  it('with only the first (personal access token) set: no warning, and the token is what is sent', async () => {
    const { stderr, calls } = await session({ ALTFX_PERSONALACCESSTOKEN_TOKEN: PAT, ALTFX_WORKSPACEKEY_API_KEY: WS });
    expect(warnings(stderr)).toEqual([]);
    expect(calls.map((c) => c.requests.map((r) => r.authorization))).toEqual([[`Bearer ${PAT}`], [`Bearer ${PAT}`]]);
  });

  it('with both set, the first alternative the spec lists wins', async () => {
    const { calls } = await session({ ALTFX_PERSONALACCESSTOKEN_TOKEN: PAT, ALTFX_OAUTH_TOKEN: OAUTH, ALTFX_WORKSPACEKEY_API_KEY: WS });
    expect(calls[0]!.requests[0]!.authorization).toBe(`Bearer ${PAT}`);
  });

  it('with none set: one warning per group of tools naming every alternative, and calls refused without a request', async () => {
    const { stderr, calls } = await session({ ALTFX_WORKSPACEKEY_API_KEY: WS });
    expect(warnings(stderr).map((l) => l.replace(/^\S+ WARN /, ''))).toEqual([
      'alternatives-fixture: credentials are not set: set one of ALTFX_PERSONALACCESSTOKEN_TOKEN (scheme "personalAccessToken"), or ALTFX_OAUTH_TOKEN (scheme "oauth2"); 2 tools listTasks and getMe will fail until one of them is',
      'alternatives-fixture: credentials are not set: set one of ALTFX_PERSONALACCESSTOKEN_TOKEN (schemes "personalAccessToken" + "workspaceKey"), or ALTFX_OAUTH_TOKEN (schemes "oauth2" + "workspaceKey"); tool listWorkspaces will fail until one of them is',
    ]);
    for (const c of calls) {
      expect(c.result.isError).toBe(true);
      expect(c.requests).toEqual([]);
    }
    expect(text(calls[0]!.result)).toContain('ALTFX_PERSONALACCESSTOKEN_TOKEN (scheme "personalAccessToken"), or ALTFX_OAUTH_TOKEN (scheme "oauth2")');
  });

  it('has the client configurations ask for one alternative, and .env.example and the README offer the other', () => {
    const server = path.join(work, 'server');
    const mcpJson = JSON.parse(readFileSync(path.join(server, '.mcp.json'), 'utf8')) as { mcpServers: Record<string, { env: Record<string, string> }> };
    expect(Object.keys(mcpJson.mcpServers['alternatives-fixture']!.env)).toEqual(['ALTFX_PERSONALACCESSTOKEN_TOKEN', 'ALTFX_WORKSPACEKEY_API_KEY']);
    const readme = readFileSync(path.join(server, 'README.md'), 'utf8');
    const vscode = /\*\*VS Code\*\*[^]*?```json\n([^]*?)```/.exec(readme)![1]!;
    expect((JSON.parse(vscode) as { inputs: Array<{ id: string }> }).inputs.map((i) => i.id)).toEqual([
      'altfx_personalaccesstoken_token',
      'altfx_workspacekey_api_key',
    ]);
    expect(readme).toMatch(/claude mcp add alternatives-fixture -e ALTFX_PERSONALACCESSTOKEN_TOKEN=\.\.\. -e ALTFX_WORKSPACEKEY_API_KEY=\.\.\. -- node /);
    expect(readme).toContain('| `listTasks`, `getMe` | `ALTFX_PERSONALACCESSTOKEN_TOKEN` (personalAccessToken), asked **or** `ALTFX_OAUTH_TOKEN` (oauth2) |');
    const env = readFileSync(path.join(server, '.env.example'), 'utf8');
    expect(env).toContain('# Required unless ALTFX_OAUTH_TOKEN is set instead, secret\nALTFX_PERSONALACCESSTOKEN_TOKEN=\n');
    expect(env).toContain('# Optional: set instead of ALTFX_PERSONALACCESSTOKEN_TOKEN, secret\n# ALTFX_OAUTH_TOKEN=\n');
  });

  it('init maps the OAuth scheme it cannot perform, so neither init nor validating its starter warns about it', async () => {
    const dir = path.join(work, 'init');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'openapi.yaml'), readFileSync(path.join(work, 'openapi.yaml')));
    let err = '';
    const io = { stdout: () => undefined, stderr: (s: string) => void (err += s), cwd: dir };
    expect(await main(['init', 'openapi.yaml'], io)).toBe(0);
    expect(readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8')).toMatch(/^ {2}"oauth2": \{ env: "ALTERNATIVES_FIXTURE_OAUTH2_TOKEN" \}/m);
    err += '--- validate\n';
    expect(await main(['validate', 'mcpgen.yaml'], io)).toBe(0);
    expect(err).not.toContain('MCPGEN_AUTH_UNSUPPORTED_SCHEME');
  });
});

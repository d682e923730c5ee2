/**
 * Secrets under hostile APIs (issue 10, item 6), through the SDK `Client` over stdio against
 * backends on 127.0.0.1 (two ports are two origins):
 *
 * - an error body that echoes the basic-auth user name shows `[redacted]` instead;
 * - a cross-origin redirect whose `Location` carries a query-parameter API key, or a hidden
 *   argument read from the environment, is not followed (the other origin receives nothing);
 *   one without it is, same-origin redirects still are;
 * - an `http://` OAuth `tokenUrl` is a build error (located), except on loopback hosts.
 */

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { buildServer, type Connected, connect } from '../helpers/generated-server.js';
import { ROOT } from '../helpers/project.js';

const KEY = 'qk-7d1e9f0a55';
const USER = 'alice-admin';
const HIDDEN = 'hidden-arg-4b3c2d1e';

const SPEC = `openapi: 3.0.3
info: { title: secrets, version: '1' }
paths:
  /whoami:
    get:
      operationId: whoami
      security: [{ basicAuth: [] }]
      responses: { '200': { description: ok } }
  /go/{where}:
    get:
      operationId: go
      security: [{ queryKey: [] }]
      parameters: [{ name: where, in: path, required: true, schema: { type: string } }]
      responses: { '200': { description: ok } }
  /plain/{where}:
    get:
      operationId: plain
      parameters:
        - { name: where, in: path, required: true, schema: { type: string } }
        - { name: token, in: query, required: true, schema: { type: string } }
      responses: { '200': { description: ok } }
components:
  securitySchemes:
    basicAuth: { type: http, scheme: basic }
    queryKey: { type: apiKey, in: query, name: api_key }
`;

const MANIFEST = `name: secretsfx
openapi: ./openapi.yaml
output: ./server
baseUrl: https://api.example.com
overrides:
  plain:
    arguments:
      token: { hidden: true, env: SECRETSFX_HIDDEN }
`;

type Seen = { url: string; headers: http.IncomingHttpHeaders };
const api: Seen[] = [];
const other: Seen[] = [];
let apiServer: http.Server;
let otherServer: http.Server;
let server: Connected;
let otherUrl = '';

const listen = async (s: http.Server): Promise<string> => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as { port: number }).port}`;
};

beforeAll(async () => {
  const built = await buildServer('secrets', SPEC, MANIFEST);
  otherServer = http.createServer((req, res) => {
    other.push({ url: req.url!, headers: req.headers });
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('other origin');
  });
  otherUrl = await listen(otherServer);
  apiServer = http.createServer((req, res) => {
    api.push({ url: req.url!, headers: req.headers });
    const u = new URL(req.url!, 'http://x');
    const query = u.search;
    if (u.pathname === '/whoami') {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end(
        `user ${
          Buffer.from((req.headers.authorization ?? '').slice(6), 'base64')
            .toString()
            .split(':')[0]
        } may not do this`,
      );
    } else if (u.pathname.endsWith('/away-with-query')) {
      res.writeHead(302, { location: `${otherUrl}/landing${query}` });
      res.end();
    } else if (u.pathname.endsWith('/away')) {
      res.writeHead(302, { location: `${otherUrl}/landing` });
      res.end();
    } else if (u.pathname.endsWith('/here')) {
      res.writeHead(301, { location: `/final${query}` });
      res.end();
    } else {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`reached ${u.pathname}`);
    }
  });
  const url = await listen(apiServer);
  server = await connect(built.server, {
    SECRETSFX_BASE_URL: url,
    SECRETSFX_BASICAUTH_USERNAME: USER,
    SECRETSFX_BASICAUTH_PASSWORD: 'pw-secret-99',
    SECRETSFX_QUERYKEY_API_KEY: KEY,
    SECRETSFX_HIDDEN: HIDDEN,
  });
}, 300_000);

afterAll(async () => {
  await server?.close();
  apiServer?.close();
  otherServer?.close();
});

const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
  api.length = 0;
  other.length = 0;
  return (await server.client.callTool({ name, arguments: args })) as CallToolResult;
};
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('basic authentication', () => {
  it('scrubs the user name from an error body that echoes it', async () => {
    const result = await call('whoami', {});
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('HTTP 403 Forbidden\nuser [redacted] may not do this');
    expect(server.stderr()).not.toContain(USER);
  });
});

describe('redirects and credentials in the query', () => {
  it('does not follow a cross-origin redirect that carries the query API key', async () => {
    const result = await call('go', { where: 'away-with-query' });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/redirected to another origin \(127\.0\.0\.1:\d+\) with a credential in the URL/);
    expect(text(result)).not.toContain(KEY);
    expect(api).toHaveLength(1);
    expect(other).toEqual([]);
  });

  it('follows a cross-origin redirect without it, and a same-origin one with it', async () => {
    const away = await call('go', { where: 'away' });
    expect(text(away)).toBe('other origin');
    expect(other).toHaveLength(1);
    expect(other[0]!.url).toBe('/landing');
    const here = await call('go', { where: 'here' });
    expect(text(here)).toBe('reached /final');
    expect(api.map((s) => s.url)).toEqual([`/go/here?api_key=${KEY}`, `/final?api_key=${KEY}`]);
  });

  it('does not follow a cross-origin redirect that carries a hidden argument from the environment', async () => {
    const result = await call('plain', { where: 'away-with-query' });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/redirected to another origin/);
    expect(text(result)).not.toContain(HIDDEN);
    expect(other).toEqual([]);
    expect(text(await call('plain', { where: 'away' }))).toBe('other origin');
  });
});

describe('OAuth token URLs', () => {
  const build = async (tokenUrl: string, viaManifest: boolean) => {
    const dir = path.join(ROOT, '.cache/secrets-token-url');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const specUrl = viaManifest ? 'https://auth.example.com/token' : tokenUrl;
    writeFileSync(
      path.join(dir, 'openapi.yaml'),
      `openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /x:
    get:
      operationId: x
      security: [{ cc: [] }]
      responses: { '200': { description: ok } }
components:
  securitySchemes:
    cc:
      type: oauth2
      flows:
        clientCredentials:
          tokenUrl: ${specUrl}
          scopes: {}
`,
    );
    writeFileSync(
      path.join(dir, 'mcpgen.yaml'),
      `name: tok\nopenapi: ./openapi.yaml\nbaseUrl: https://api.example.com\n${viaManifest ? `auth:\n  cc:\n    tokenUrl: ${tokenUrl}\n` : ''}`,
    );
    const res = await compile({ manifestPath: path.join(dir, 'mcpgen.yaml'), cwd: dir, emit: false });
    return res.diagnostics.items.filter((d) => d.code === 'MCPGEN_INSECURE_TOKEN_URL' || d.code === 'MCPGEN_MANIFEST_INVALID');
  };

  it('refuses an http:// token URL in the spec, located at it', async () => {
    const found = await build('http://auth.example.com/token', false);
    expect(found).toHaveLength(1);
    expect(found[0]!.severity).toBe('error');
    expect(found[0]!.location).toMatchObject({ file: 'openapi.yaml', pointer: '/components/securitySchemes/cc/flows/clientCredentials/tokenUrl', line: 15 });
    expect(found[0]!.message).toContain('http://auth.example.com/token');
  });

  it('refuses one set in the manifest, located there (the manifest schema wants https)', async () => {
    const found = await build('http://auth.example.com/token', true);
    expect(found).toHaveLength(1);
    expect(found[0]!.location).toMatchObject({ file: 'mcpgen.yaml', pointer: '/auth/cc/tokenUrl', line: 6 });
  });

  it.each(['http://127.0.0.1:8080/token', 'http://localhost/token', 'http://[::1]:9000/token', 'https://auth.example.com/token', '/oauth/token'])(
    'accepts %s',
    async (tokenUrl) => {
      expect(await build(tokenUrl, false)).toEqual([]);
    },
  );
});

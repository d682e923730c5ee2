/**
 * Authentication end to end: the fixture spec (apiKey header and query, http bearer, http basic,
 * oauth2 client credentials, alternatives and a public operation) is built into
 * `.cache/auth/server`, compiled, started over stdio with secrets in its environment, and a local
 * backend on 127.0.0.1 checks the credentials each tool sends. No secret may appear in the
 * generated files, the tool results or the server's stderr.
 */

import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ROOT, run } from '../helpers/project.js';

const work = path.join(ROOT, '.cache/auth');
const SECRETS = {
  AUTHFX_APIKEYHEADER_API_KEY: 'hdr-key-0f9a8b7c',
  AUTHFX_MY_TOKEN: 'bearer-tok-1e2d3c4b',
  AUTHFX_BASICAUTH_USERNAME: 'svc-user',
  AUTHFX_BASICAUTH_PASSWORD: 'basic-pw-5a6b7c8d',
  AUTHFX_CLIENTCREDENTIALS_CLIENT_ID: 'client-0042',
  AUTHFX_CLIENTCREDENTIALS_CLIENT_SECRET: 'client-secret-9e8f7a6b',
};
const ACCESS_TOKEN = 'access-token-3c2b1a09';

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };
const seen: Seen[] = [];
let backend: http.Server;
let url: string;
let client: Client;
let stderr = '';

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(path.join(ROOT, 'test/fixtures/auth'), work, { recursive: true });
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: work };
  expect(await main(['build', 'mcpgen.yaml'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(work, 'server')]);

  backend = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url === '/oauth/token') res.end(JSON.stringify({ access_token: ACCESS_TOKEN, token_type: 'Bearer', expires_in: 3600 }));
      else res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(backend.address() as { port: number }).port}`;

  // every secret but the query key's, so that the start-up warning and the refusal can be checked
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(work, 'server/dist/server.js')],
    env: { PATH: process.env.PATH ?? '', AUTHFX_BASE_URL: `${url}/v1`, ...SECRETS },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  client = new Client({ name: 'auth-e2e', version: '1' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  backend?.close();
});

const results: CallToolResult[] = [];
async function call(name: string, args: Record<string, unknown> = {}): Promise<{ result: CallToolResult; requests: Seen[] }> {
  const before = seen.length;
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  results.push(result);
  return { result, requests: seen.slice(before) };
}
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('generated server with authentication', () => {
  it('sends the apiKey header the document-level security asks for', async () => {
    const { result, requests } = await call('withApiKey');
    expect(result.isError).toBeFalsy();
    expect(requests).toHaveLength(1);
    expect(requests[0]!.url).toBe('/v1/key');
    expect(requests[0]!.headers['x-api-key']).toBe(SECRETS.AUTHFX_APIKEYHEADER_API_KEY);
    expect(requests[0]!.headers.authorization).toBeUndefined();
  });

  it('sends the bearer token from the variable the manifest maps', async () => {
    const { requests } = await call('withBearer');
    expect(requests[0]!.headers.authorization).toBe(`Bearer ${SECRETS.AUTHFX_MY_TOKEN}`);
    expect(requests[0]!.headers['x-api-key']).toBeUndefined();
  });

  it('sends basic credentials', async () => {
    const { requests } = await call('withBasic');
    const expected = Buffer.from(`${SECRETS.AUTHFX_BASICAUTH_USERNAME}:${SECRETS.AUTHFX_BASICAUTH_PASSWORD}`).toString('base64');
    expect(requests[0]!.headers.authorization).toBe(`Basic ${expected}`);
  });

  it('fetches an OAuth token once (client credentials, manifest scopes) and reuses it', async () => {
    const first = await call('withOauth', { body: { name: 'Rex' } });
    expect(first.result.isError).toBeFalsy();
    expect(first.requests.map((r) => r.url)).toEqual(['/oauth/token', '/v1/oauth']);
    const [token, api] = first.requests as [Seen, Seen];
    expect(token.method).toBe('POST');
    expect(token.headers.authorization).toBe(
      `Basic ${Buffer.from(`${SECRETS.AUTHFX_CLIENTCREDENTIALS_CLIENT_ID}:${SECRETS.AUTHFX_CLIENTCREDENTIALS_CLIENT_SECRET}`).toString('base64')}`,
    );
    expect(Object.fromEntries(new URLSearchParams(token.body))).toEqual({ grant_type: 'client_credentials', scope: 'pets.read' });
    expect(api.headers.authorization).toBe(`Bearer ${ACCESS_TOKEN}`);
    expect(JSON.parse(api.body)).toEqual({ name: 'Rex' });
    const second = await call('withOauth', {});
    expect(second.requests.map((r) => [r.url, r.headers.authorization])).toEqual([['/v1/oauth', `Bearer ${ACCESS_TOKEN}`]]);
  });

  it('uses the first alternative that is configured, and nothing for a public operation', async () => {
    const either = await call('withEither');
    expect(either.requests[0]!.headers.authorization).toBe(`Bearer ${SECRETS.AUTHFX_MY_TOKEN}`);
    const pub = await call('publicInfo');
    expect(pub.result.isError).toBeFalsy();
    expect(pub.requests[0]!.headers.authorization).toBeUndefined();
    expect(pub.requests[0]!.headers['x-api-key']).toBeUndefined();
  });

  it('refuses a tool whose secret is missing, naming the variable, without calling the API', async () => {
    const { result, requests } = await call('withQueryKey', { q: 'x' });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('AUTHFX_APIKEYQUERY_API_KEY');
    expect(requests).toEqual([]);
  });

  it('warned at start-up about the missing variable, by name', () => {
    const warnings = stderr.split('\n').filter((l) => / WARN .*credentials are not set/.test(l));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('set AUTHFX_APIKEYQUERY_API_KEY (scheme "apiKeyQuery"); tool withQueryKey will fail until it is');
  });

  it('keeps every secret out of the generated files, the results and the logs', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const f of readdirSync(dir)) {
        const p = path.join(dir, f);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(readFileSync(p, 'utf8'));
      }
    };
    walk(path.join(work, 'server'));
    const everything = [...files, ...results.map(text), stderr].join('\n');
    for (const secret of [...Object.values(SECRETS), ACCESS_TOKEN]) expect(everything).not.toContain(secret);
    // the README names every variable to set
    const readme = readFileSync(path.join(work, 'server/README.md'), 'utf8');
    for (const name of [...Object.keys(SECRETS), 'AUTHFX_APIKEYQUERY_API_KEY']) expect(readme).toContain(`\`${name}\``);
  });
});

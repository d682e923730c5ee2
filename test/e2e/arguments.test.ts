/**
 * Argument overrides end to end: a manifest hides arguments (from the environment and constants),
 * renames one and gives one a default; the project is built, type-checked (the hidden arguments
 * are gone from the `Args` type), started over stdio, and a local backend on 127.0.0.1 checks
 * what each request carries. Values read from the environment are secrets: none may appear in the
 * generated files, the tool results or the server's stderr (debug logging on).
 */

import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ROOT, run } from '../helpers/project.js';

const work = path.join(ROOT, '.cache/arguments');
const SECRETS = { ARGSFX_ACCOUNT: 'acct-7f3e91', ARGSFX_API_TOKEN: 'tok/9a8b+7c6d e5' };

const SPEC = `openapi: 3.0.3
info: { title: arguments fixture, version: '1' }
paths:
  /accounts/{account}/pets:
    get:
      operationId: listPets
      parameters:
        - { name: account, in: path, required: true, schema: { type: string } }
        - { name: api_token, in: query, required: true, description: The account's API token., schema: { type: string } }
        - { name: X-Client, in: header, required: true, schema: { type: string } }
        - { name: q, in: query, schema: { type: string } }
        - { name: limit, in: query, required: true, schema: { type: integer } }
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object } } } } }
  /notes:
    post:
      operationId: addNote
      parameters:
        - { name: secret, in: query, required: true, schema: { type: string } }
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, properties: { text: { type: string } } } } }
      responses: { '200': { description: ok } }
  /whoami:
    get:
      operationId: whoami
      parameters:
        - { name: api_token, in: query, required: true, schema: { type: string } }
      responses: { '200': { description: ok } }
`;

const MANIFEST = `name: argsfx
version: 1.0.0
openapi: ./openapi.yaml
output: ./server
baseUrl: https://api.example.com
overrides:
  listPets:
    arguments:
      account: { hidden: true, env: ARGSFX_ACCOUNT }
      api_token: { hidden: true, env: ARGSFX_API_TOKEN }
      X-Client: { hidden: true, value: mcpgen-e2e }
      q: { name: search, description: Words to look for. }
      limit: { default: 20 }
  addNote:
    arguments:
      secret: { hidden: true, env: ARGSFX_NOTE_SECRET }
  whoami:
    arguments:
      api_token: { hidden: true, env: ARGSFX_API_TOKEN }
`;

// compiles only while the Args type has exactly the visible arguments
const ARGS_CHECK = `import type { AddNoteArgs, ListPetsArgs } from './tools.gen.js';
export const all: Required<ListPetsArgs> = { search: 'rex', limit: 5 };
// @ts-expect-error a hidden argument is not part of the Args type
export const hidden: ListPetsArgs = { limit: 5, api_token: 'x' };
// @ts-expect-error a renamed argument keeps only its new name
export const renamed: ListPetsArgs = { q: 'rex' };
export const note: Required<AddNoteArgs> = { body: { text: 'hi' } };
`;

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };
const seen: Seen[] = [];
let backend: http.Server;
let client: Client;
let stderr = '';

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(path.join(work, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(work, 'mcpgen.yaml'), MANIFEST);
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: work };
  expect(await main(['build', 'mcpgen.yaml'], io)).toBe(0);
  writeFileSync(path.join(work, 'server/src/args-check.ts'), ARGS_CHECK);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(work, 'server')]).catch((e: { stdout?: string }) => {
    throw new Error(`the generated project does not compile:\n${e.stdout ?? String(e)}`);
  });

  backend = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      // an API that echoes the rejected token back, as real ones do
      if (req.url!.startsWith('/v1/whoami')) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `invalid token ${new URL(req.url!, 'http://x').searchParams.get('api_token')}`, url: req.url }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(backend.address() as { port: number }).port}`;

  // ARGSFX_NOTE_SECRET is left unset, for the refusal and the start-up warning
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(work, 'server/dist/server.js')],
    env: { PATH: process.env.PATH ?? '', ARGSFX_BASE_URL: `${url}/v1`, ARGSFX_LOG_LEVEL: 'debug', ...SECRETS },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  client = new Client({ name: 'arguments-e2e', version: '1' });
  await client.connect(transport);
}, 300_000);

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

describe('argument overrides in a generated server', () => {
  it('publishes only the visible arguments, renamed, described and defaulted', async () => {
    const { tools } = await client.listTools();
    const schema = (name: string) => tools.find((t) => t.name === name)!.inputSchema;
    expect(schema('listPets')).toStrictEqual({
      type: 'object',
      properties: { search: { type: 'string', description: 'Words to look for.' }, limit: { type: 'integer', default: 20 } },
      additionalProperties: false,
    });
    expect(schema('addNote')).toStrictEqual({
      type: 'object',
      properties: { body: { type: 'object', properties: { text: { type: 'string' } } } },
      required: ['body'],
      additionalProperties: false,
    });
    expect(schema('whoami')).toStrictEqual({ type: 'object', properties: {}, additionalProperties: false });
  });

  it('sends hidden arguments from the environment and constants, the renamed one under its wire name, and the default', async () => {
    const { result, requests } = await call('listPets', { search: 'rex' });
    expect(result.isError).toBeFalsy();
    expect(requests).toHaveLength(1);
    const [req] = requests as [Seen];
    const u = new URL(req.url, 'http://x');
    expect(u.pathname).toBe(`/v1/accounts/${SECRETS.ARGSFX_ACCOUNT}/pets`);
    expect(Object.fromEntries(u.searchParams)).toStrictEqual({ api_token: SECRETS.ARGSFX_API_TOKEN, q: 'rex', limit: '20' });
    expect(req.headers['x-client']).toBe('mcpgen-e2e');
  });

  it('lets the model override a default, and never a hidden argument', async () => {
    const given = await call('listPets', { limit: 5 });
    expect(new URL(given.requests[0]!.url, 'http://x').searchParams.get('limit')).toBe('5');
    const smuggled = await call('listPets', { api_token: 'from-the-model' });
    expect(smuggled.result.isError).toBe(true);
    expect(text(smuggled.result)).toContain('Invalid arguments for tool listPets');
    expect(smuggled.requests).toEqual([]);
  });

  it('refuses a tool whose variable is unset, naming it, without calling the API', async () => {
    const { result, requests } = await call('addNote', { body: { text: 'hi' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      'Tool addNote cannot run: missing configuration: set ARGSFX_NOTE_SECRET (hidden argument "secret") in the server\'s environment, then restart the server.',
    );
    expect(requests).toEqual([]);
  });

  it('warned at start-up about the unset variable, by name', () => {
    const warnings = stderr.split('\n').filter((l) => / WARN .*hidden arguments/.test(l));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('ARGSFX_NOTE_SECRET is not set, so hidden arguments of addNote have no value');
  });

  it('redacts a value from the environment that the API echoes in an error', async () => {
    const { result, requests } = await call('whoami');
    expect(requests).toHaveLength(1);
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('HTTP 401');
    expect(text(result)).toContain('invalid token [redacted]');
  });

  it('keeps every value from the environment out of the generated files, the results and the logs', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const f of readdirSync(dir)) {
        const p = path.join(dir, f);
        if (f === 'node_modules') continue;
        if (statSync(p).isDirectory()) walk(p);
        else files.push(readFileSync(p, 'utf8'));
      }
    };
    walk(path.join(work, 'server'));
    expect(stderr).toContain('tool call');
    const everything = [...files, ...results.map(text), stderr].join('\n');
    const encoded = Object.values(SECRETS).flatMap((s) => [s, encodeURIComponent(s)]);
    for (const secret of encoded) expect(everything).not.toContain(secret);
    // the README names every variable to set
    const readme = readFileSync(path.join(work, 'server/README.md'), 'utf8');
    for (const name of [...Object.keys(SECRETS), 'ARGSFX_NOTE_SECRET']) expect(readme).toContain(`\`${name}\``);
  });
});

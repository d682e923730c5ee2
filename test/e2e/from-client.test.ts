/**
 * Upstream credentials per MCP client (`auth.<scheme>.fromClient`), end to end over Streamable
 * HTTP with both protocol eras: a scheme with `fromClient` takes the API credential from that
 * header of each MCP request; a scheme without it uses the server's environment; and nothing else
 * of the MCP request — its own `Authorization` header above all — ever reaches the API. Over
 * stdio (no headers) the `fromClient` scheme falls back to its environment variable.
 */

import type { IncomingHttpHeaders, Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyClient, HttpProcess } from '../helpers/eras.js';
import { connectClient, ERAS, startHttp } from '../helpers/eras.js';
import { buildServer } from '../helpers/generated-server.js';

const SPEC = `openapi: 3.0.3
info: { title: Upstream, version: 1.0.0 }
servers: [{ url: http://127.0.0.1:9/api }]
components:
  securitySchemes:
    userToken: { type: http, scheme: bearer }
    serviceKey: { type: apiKey, in: header, name: X-Service-Key }
paths:
  /me:
    get:
      operationId: whoAmI
      security: [{ userToken: [] }]
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object } } } } }
  /stats:
    get:
      operationId: stats
      security: [{ serviceKey: [] }]
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object } } } } }
`;
const MANIFEST = `name: upstream
version: 1.0.0
openapi: ./openapi.yaml
output: ./server
auth:
  userToken: { fromClient: X-Upstream-Token }
  serviceKey: { env: UPSTREAM_SERVICE_KEY }
`;
const SERVICE_KEY = 'service-key-from-the-environment-42';
const ENV_TOKEN = 'user-token-from-the-environment-17';

const seen: IncomingHttpHeaders[] = [];
let api: Server;
let apiUrl = '';
let project = '';
let http: HttpProcess;
const open: AnyClient[] = [];

beforeAll(async () => {
  api = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/api`;
  project = (await buildServer('from-client', SPEC, MANIFEST)).server;
  http = await startHttp(project, { UPSTREAM_BASE_URL: apiUrl, UPSTREAM_SERVICE_KEY: SERVICE_KEY, UPSTREAM_USERTOKEN_TOKEN: ENV_TOKEN });
}, 120_000);

afterAll(async () => {
  await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
  http?.kill('SIGKILL');
  api?.closeAllConnections();
  api?.close();
});

type Result = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const text = (r: Result) => r.content.map((c) => c.text ?? '').join('\n');

describe.each(ERAS)('over HTTP, %s era', (era) => {
  it('sends the token the MCP client gives in X-Upstream-Token, and never its own Authorization header', async () => {
    const { client } = await connectClient(
      {
        kind: 'http',
        url: http.url,
        headers: { 'x-upstream-token': `user-token-of-${era}`, authorization: 'Bearer mcp-client-credential', cookie: 'session=mcp' },
      },
      era,
    );
    open.push(client);
    seen.length = 0;
    const me = (await client.callTool({ name: 'whoAmI', arguments: {} })) as Result;
    expect(me.isError, text(me)).toBeFalsy();
    const stats = (await client.callTool({ name: 'stats', arguments: {} })) as Result;
    expect(stats.isError, text(stats)).toBeFalsy();
    expect(seen.map((h) => h.authorization)).toEqual([`Bearer user-token-of-${era}`, undefined]);
    expect(seen[1]!['x-service-key']).toBe(SERVICE_KEY);
    const sent = JSON.stringify(seen);
    expect(sent).not.toContain('mcp-client-credential');
    expect(sent).not.toContain('session=mcp');
    // the environment's token is not used for a scheme that takes it from the client
    expect(sent).not.toContain(ENV_TOKEN);
  });

  it('refuses a call whose client sends no credential, naming the header', async () => {
    const { client } = await connectClient({ kind: 'http', url: http.url, headers: { authorization: 'Bearer mcp-client-credential' } }, era);
    open.push(client);
    seen.length = 0;
    const me = (await client.callTool({ name: 'whoAmI', arguments: {} })) as Result;
    expect(me.isError).toBe(true);
    expect(text(me)).toContain('X-Upstream-Token');
    expect(seen).toEqual([]);
  });
});

describe('over stdio', () => {
  it("takes the fromClient scheme's credential from the environment", async () => {
    const { client } = await connectClient(
      { kind: 'stdio', server: project, env: { UPSTREAM_BASE_URL: apiUrl, UPSTREAM_SERVICE_KEY: SERVICE_KEY, UPSTREAM_USERTOKEN_TOKEN: ENV_TOKEN } },
      'legacy',
    );
    open.push(client);
    seen.length = 0;
    const me = (await client.callTool({ name: 'whoAmI', arguments: {} })) as Result;
    expect(me.isError, text(me)).toBeFalsy();
    expect(seen.map((h) => h.authorization)).toEqual([`Bearer ${ENV_TOKEN}`]);
  });
});

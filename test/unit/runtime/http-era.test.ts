/**
 * The era of an HTTP request (templates/runtime/transport/http-io.ts `isLegacy`), told from the
 * node:http request and its parsed body without building a web `Request`, must be what the SDK's
 * `isLegacyRequest` says for the same request: both are asked about real requests sent to a
 * node:http server on 127.0.0.1.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headerView, isLegacy, webHeaders } from '../../../templates/runtime/transport/http-io.js';

let server: Server;
let url: string;

/** Header names read back through the in-place view and through a web `Headers` copy. */
const READ = ['Mcp-Param-Region', 'mcp-param-region', 'X-Twice', 'x-absent', 'Content-Type', 'MCP-PROTOCOL-VERSION'];

/** Both verdicts for the request the server got (and its headers read both ways). */
async function verdicts(
  req: IncomingMessage,
): Promise<{ ours: boolean; sdk: boolean; view: unknown[]; copy: unknown[]; named: { view: unknown[]; copy: unknown[] } }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = req.method === 'POST' ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  const sdk = await isLegacyRequest(new Request(`http://localhost${req.url}`, { method: req.method!, headers: webHeaders(req) }), body);
  const view = headerView(req);
  const copy = webHeaders(req);
  const asked = typeof req.headers['x-read'] === 'string' ? req.headers['x-read'].split(',') : [];
  return {
    ours: isLegacy(req, body),
    sdk,
    view: READ.map((n) => view.get(n)),
    copy: READ.map((n) => copy.get(n)),
    named: { view: asked.map((n) => view.get(n)), copy: asked.map((n) => copy.get(n)) },
  };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    verdicts(req).then(
      (v) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v)),
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const MODERN = '2026-07-28';
const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' } };
const call = (meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'getPetById', arguments: { petId: 1 }, ...(meta ? { _meta: meta } : {}) },
});

const cases: Array<[string, string, Record<string, string>, unknown]> = [
  [
    'legacy initialize',
    'POST',
    {},
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } },
  ],
  ['legacy call with its session headers', 'POST', { 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': 'abc' }, call()],
  ['legacy notification', 'POST', { 'mcp-protocol-version': '2025-06-18' }, { jsonrpc: '2.0', method: 'notifications/initialized' }],
  ['a posted response', 'POST', {}, { jsonrpc: '2.0', id: 3, result: {} }],
  ['a posted error response', 'POST', {}, { jsonrpc: '2.0', id: 3, error: { code: -1, message: 'x' } }],
  ['a batch', 'POST', {}, [call(), call()]],
  [
    'modern call with its envelope and headers',
    'POST',
    { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'getPetById' },
    call(envelope),
  ],
  ['modern call, envelope only', 'POST', {}, call(envelope)],
  [
    'modern header with spaces around it',
    'POST',
    { 'mcp-protocol-version': ` ${MODERN} `, 'mcp-method': 'tools/call', 'mcp-name': 'getPetById' },
    call(envelope),
  ],
  ['modern header, no envelope', 'POST', { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'getPetById' }, call()],
  [
    'modern discover',
    'POST',
    { 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' },
    { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } },
  ],
  [
    'modern listen',
    'POST',
    { 'mcp-protocol-version': MODERN, 'mcp-method': 'subscriptions/listen' },
    { jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { _meta: envelope, notifications: {} } },
  ],
  ['headers that disagree with the body', 'POST', { 'mcp-protocol-version': '2025-06-18', 'mcp-method': 'tools/list' }, call(envelope)],
  ['not JSON-RPC', 'POST', {}, { hello: 'world' }],
  ['a string body', 'POST', {}, 'tools/call'],
  ['GET (the legacy SSE stream)', 'GET', { 'mcp-session-id': 'abc' }, undefined],
  ['DELETE (ending a legacy session)', 'DELETE', { 'mcp-session-id': 'abc' }, undefined],
];

describe('headerView', () => {
  it('reads a header as a web Headers copy does: any case, repeated values joined, null when absent', async () => {
    const headers = new Headers({ 'content-type': 'application/json', 'mcp-param-region': 'eu', 'mcp-protocol-version': MODERN });
    headers.append('x-twice', 'a');
    headers.append('x-twice', 'b');
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(call(envelope)) });
    const { view, copy } = (await res.json()) as { view: unknown[]; copy: unknown[] };
    expect(view).toEqual(copy);
    expect(view).toEqual(['eu', 'eu', 'a, b', null, 'application/json', MODERN]);
  });
});

/** Sends `head` (request line and header lines, CRLF-separated) and `body` as raw bytes, so repeated lines and spaces reach the server as written; resolves with the response's body. */
function rawPost(head: string[], body: string): Promise<string> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d) => (got += d.toString('utf8')));
    socket.on('error', reject);
    socket.on('end', () => resolve(got.slice(got.indexOf('\r\n\r\n') + 4)));
    socket.write(`${[...head, `content-length: ${Buffer.byteLength(body)}`, 'connection: close'].join('\r\n')}\r\n\r\n${body}`);
  });
}

describe('headerView on raw requests', () => {
  it('gives what Headers.get gives for repeated lines, empty values and spaces, and nothing from the prototype', async () => {
    const names = ['X-A', 'X-C', 'Mcp-Param-Region', 'constructor', '__proto__', 'hasOwnProperty'];
    const head = [
      'POST /mcp HTTP/1.0', // a 1.0 request: the answer comes unchunked
      'host: 127.0.0.1',
      'content-type: application/json',
      'X-A: eu',
      'X-A:',
      'X-C: eu',
      'X-C:  ',
      'X-C: ',
      'Mcp-Param-Region:   west  ',
      `x-read: ${names.join(',')}`,
    ];
    const got = JSON.parse(await rawPost(head, JSON.stringify(call()))) as { named: { view: unknown[]; copy: unknown[] } };
    expect(got.named.view).toEqual(got.named.copy);
    expect(got.named.view).toEqual(['eu,', 'eu, ,', 'west', null, null, null]);
  });
});

describe('isLegacy', () => {
  it.each(cases)('%s: says what the SDK says', async (_name, method, headers, body) => {
    const res = await fetch(url, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const { ours, sdk } = (await res.json()) as { ours: boolean; sdk: boolean };
    expect(ours).toBe(sdk);
  });

  it('tells the two eras apart (the table above holds both)', async () => {
    const ask = async (headers: Record<string, string>, body: unknown) =>
      (
        (await (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })).json()) as {
          ours: boolean;
        }
      ).ours;
    expect(await ask({ 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'getPetById' }, call(envelope))).toBe(false);
    expect(await ask({ 'mcp-protocol-version': '2025-06-18' }, call())).toBe(true);
  });
});

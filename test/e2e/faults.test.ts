/**
 * A generated server against backends that misbehave (issue 10, item 5), through the SDK
 * `Client` over stdio. The backends run in a child process of their own on 127.0.0.1 (so that
 * their work never delays this process's client): slow, never answering, huge, a body of NUL
 * bytes, a gzip bomb, invalid JSON, an endless redirect. Under 100 concurrent calls every `ping`
 * is answered within 1 s, every call ends with a result, and the server's peak memory (VmHWM)
 * stays within 2 × maxInFlightBytes + 150 MB. Every loop here is bounded in count and time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltServer, buildServer, type Connected, connect, pingMs } from '../helpers/generated-server.js';

const MAX_RESPONSE = 65_536;
const IN_FLIGHT = 16 * 1024 * 1024;
const TIMEOUT_MS = 3_000;

const SPEC = `openapi: 3.0.3
info: { title: faults, version: '1' }
paths:
  /{kind}:
    get:
      operationId: fetchThing
      parameters:
        - { name: kind, in: path, required: true, schema: { type: string } }
        - { name: n, in: query, schema: { type: integer } }
      responses:
        '200': { description: ok, content: { application/json: { schema: { type: object, properties: { a: { type: string } } } } } }
`;

const MANIFEST = `name: faults
openapi: ./openapi.yaml
output: ./server
baseUrl: https://api.example.com
timeoutMs: ${TIMEOUT_MS}
maxResponseBytes: ${MAX_RESPONSE}
maxInFlightBytes: ${IN_FLIGHT}
`;

/** The misbehaving backends (a plain Node script: it runs in its own process). */
const BACKEND = String.raw`
import http from 'node:http';
import zlib from 'node:zlib';
const requests = {};
// 256 MiB of zeros, gzipped once (about 256 KB on the wire)
const gz = zlib.createGzip({ level: 9 });
const parts = [];
gz.on('data', (c) => parts.push(c));
const zero = Buffer.alloc(1024 * 1024);
for (let i = 0; i < 256; i++) gz.write(zero);
gz.end();
await new Promise((r) => gz.on('end', r));
const bomb = Buffer.concat(parts);
const server = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  const kind = u.pathname.slice(1);
  requests[kind] = (requests[kind] ?? 0) + 1;
  res.on('error', () => undefined);
  switch (kind) {
    case 'count':
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(requests));
    case 'ok':
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"a":"fine"}');
    case 'never':
      return; // holds the connection, never answers
    case 'slow': {
      res.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const t = setInterval(() => (sent++ < 100 ? res.write(' ') : (clearInterval(t), res.end('{}'))), 200);
      res.on('close', () => clearInterval(t));
      return;
    }
    case 'huge': {
      // 64 MiB without Content-Length, as fast as the client reads
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      let left = 1024;
      const pump = () => {
        while (left > 0) {
          left--;
          if (!res.write(chunk)) return res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => (left = 0));
      return pump();
    }
    case 'nul':
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(4 * ${MAX_RESPONSE}) });
      return res.end(Buffer.alloc(4 * ${MAX_RESPONSE}, 0));
    case 'bomb':
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
      return res.end(bomb);
    case 'invalid':
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"a": [' + '1,'.repeat(100000));
    case 'grows':
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"b":[' + '1e20,'.repeat(40000) + '1]}');
    case 'redirect': {
      const n = Number(u.searchParams.get('n') ?? 0);
      res.writeHead(302, { location: '/redirect?n=' + (n + 1) });
      return res.end();
    }
    case 'hold':
      // 200 KB at once, then nothing more until the client gives up
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":"' + 'x'.repeat(200 * 1024));
      return;
    default:
      res.writeHead(404);
      return res.end();
  }
});
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\n'));
// never outlives the test run
setTimeout(() => process.exit(0), 240_000).unref();
`;

let built: BuiltServer;
let backend: ChildProcess;
let baseUrl = '';

/** Peak resident memory of a process, in bytes (VmHWM). */
function peakRss(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

beforeAll(async () => {
  built = await buildServer('faults', SPEC, MANIFEST);
  const script = path.join(built.dir, 'backend.mjs');
  writeFileSync(script, BACKEND);
  backend = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    backend.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
    backend.once('exit', (code) => reject(new Error(`the backend exited (${code})`)));
  });
  baseUrl = `http://127.0.0.1:${port}`;
}, 300_000);

afterAll(() => {
  if (backend?.pid !== undefined && backend.exitCode === null) backend.kill('SIGTERM');
});

const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const counts = async (): Promise<Record<string, number>> => (await (await fetch(`${baseUrl}/count`)).json()) as Record<string, number>;

describe('one result', () => {
  let server: Connected;
  beforeAll(async () => {
    server = await connect(built.server, { FAULTS_BASE_URL: baseUrl });
  });
  afterAll(async () => server?.close());

  it('a body of NUL bytes is bounded once encoded (it would be 6 × the response limit)', async () => {
    const result = (await server.client.callTool({ name: 'fetchThing', arguments: { kind: 'nul' } })) as CallToolResult;
    const size = Buffer.byteLength(JSON.stringify(result));
    expect(size).toBeLessThanOrEqual(2 * MAX_RESPONSE + 4096);
    expect(text(result)).toMatch(
      /\[truncated: the text takes \d{6} bytes once encoded as JSON, more than the limit; showing the first \d+ of 655\d\d characters\]$/,
    );
  });

  it('numbers that grow when re-encoded do not double the result', async () => {
    const result = (await server.client.callTool({ name: 'fetchThing', arguments: { kind: 'grows' } })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(2 * MAX_RESPONSE + 4096);
  });

  it('a gzip bomb is read up to the limit and no further', async () => {
    const result = (await server.client.callTool({ name: 'fetchThing', arguments: { kind: 'bomb' } })) as CallToolResult;
    // 256 KB of NUL characters are kept: the text is cut further to fit once encoded
    expect(text(result)).toMatch(
      /\[truncated: the text takes \d{6} bytes once encoded as JSON, more than the limit; showing the first \d+ of 655\d\d characters\]$/,
    );
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(2 * MAX_RESPONSE + 4096);
  });
});

describe('the memory limit for responses in flight', () => {
  it('refuses a call, before sending it, while the bodies held leave no room for one more', async () => {
    const before = (await counts()).hold ?? 0;
    const server = await connect(built.server, { FAULTS_BASE_URL: baseUrl, FAULTS_MAX_IN_FLIGHT_BYTES: '100000' });
    try {
      const first = server.client.callTool({ name: 'fetchThing', arguments: { kind: 'hold' } });
      // the first call holds 64 KB (its response limit): a second response of up to 64 KB no longer fits in 100,000 bytes
      for (let i = 0; i < 50 && ((await counts()).hold ?? 0) === before; i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 200));
      const second = (await server.client.callTool({ name: 'fetchThing', arguments: { kind: 'hold' } })) as CallToolResult;
      expect(second.isError).toBe(true);
      expect(text(second)).toMatch(
        /^Tool fetchThing was not run: the server holds \d+ bytes of responses of other calls, and one more response of up to 65536 bytes would exceed the memory limit for responses in flight \(maxInFlightBytes, 100000 bytes, FAULTS_MAX_IN_FLIGHT_BYTES\)\. Nothing was sent/,
      );
      expect((await counts()).hold).toBe(before + 1);
      expect(((await first) as CallToolResult).isError).toBe(true); // timed out
      // once the first call is over, its bytes are given back
      expect(((await server.client.callTool({ name: 'fetchThing', arguments: { kind: 'ok' } })) as CallToolResult).isError).toBeUndefined();
    } finally {
      await server.close();
    }
  }, 20_000);

  it('refuses a limit below the response limit at start-up, naming the variable', async () => {
    const server = await connect(built.server, { FAULTS_BASE_URL: baseUrl, FAULTS_MAX_IN_FLIGHT_BYTES: '1000' }).catch((e: unknown) => e);
    expect(server).toBeInstanceOf(Error);
  });
});

describe('100 concurrent calls against misbehaving backends', () => {
  it('answers every ping within 1 s, ends every call, and stays within 2 × maxInFlightBytes + 150 MB', async () => {
    const server = await connect(built.server, { FAULTS_BASE_URL: baseUrl });
    try {
      const kinds = ['slow', 'never', 'huge', 'nul', 'bomb', 'invalid', 'grows', 'redirect', 'ok', 'hold'];
      const pings: number[] = [];
      let done = false;
      const pinger = (async () => {
        for (let i = 0; i < 200 && !done; i++) {
          pings.push(await pingMs(server.client, 5_000));
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const started = performance.now();
      const results = await Promise.all(
        Array.from(
          { length: 100 },
          (_, i) =>
            server.client.callTool({ name: 'fetchThing', arguments: { kind: kinds[i % kinds.length]! } }, undefined, {
              timeout: 30_000,
            }) as Promise<CallToolResult>,
        ),
      );
      done = true;
      await pinger;
      const elapsed = performance.now() - started;
      const peak = peakRss(server.pid);
      const byKind = (kind: string) => results.filter((_, i) => kinds[i % kinds.length] === kind);
      expect(results).toHaveLength(100);
      expect(pings.length).toBeGreaterThan(5);
      expect(Math.max(...pings)).toBeLessThan(1_000);
      expect(elapsed).toBeLessThan(TIMEOUT_MS + 10_000);
      expect(peak).toBeLessThanOrEqual(2 * IN_FLIGHT + 150 * 1024 * 1024);
      for (const r of [...byKind('never'), ...byKind('slow'), ...byKind('hold')]) expect(text(r)).toMatch(/timed out after 3000 ms|memory limit/);
      for (const r of byKind('redirect')) expect(r.isError).toBe(true);
      for (const r of results) expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(2 * MAX_RESPONSE + 4096);
      // still serving
      const after = (await server.client.callTool({ name: 'fetchThing', arguments: { kind: 'ok' } })) as CallToolResult;
      expect(after.isError).toBeUndefined();
      process.stderr.write(
        `faults: ${results.length} calls in ${Math.round(elapsed)} ms, slowest ping ${Math.round(Math.max(...pings))} ms, peak RSS ${Math.round(peak / 1048576)} MB, ${results.filter((r) => /memory limit/.test(text(r))).length} refused for memory\n`,
      );
    } finally {
      await server.close();
    }
  }, 60_000);
});

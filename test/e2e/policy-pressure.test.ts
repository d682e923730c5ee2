/**
 * The policy layer under pressure from outside (examples/petstore-policy over Streamable HTTP,
 * against the example's backend): arguments of a million-odd empty objects are refused before the
 * audit trail, access control or validation walk them (or, with the size limit raised, audited
 * as a bounded summary), while other clients keep being answered; a server listening beyond
 * loopback without client authentication refuses to start; HTTP clients without a token are
 * `anonymous`, never `<PREFIX>_CLIENT`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../../examples/petstore/backend.mjs';
import { main } from '../../src/cli/main.js';
import type { AnyClient, Era, HttpProcess } from '../helpers/eras.js';
import { callToolWith, connectClient, rpcError, startHttp } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const work = path.join(ROOT, '.cache/policy-pressure-e2e');
const project = path.join(work, 'server');
const TOKENS = { reader: 'reader-token-0123456789abcdef', admin: 'admin-token-0123456789abcdef' };
type Backend = { url: string; server: { close(): void }; requests: Array<{ method: string; path: string }> };

let backend: Backend;
const servers: HttpProcess[] = [];
const clients: AnyClient[] = [];

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  cpSync(path.join(ROOT, 'examples/petstore-policy/server'), project, { recursive: true, filter: (src) => !/[\\/](node_modules|dist|audit)$/.test(src) });
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', 'examples/petstore-policy/mcpgen.yaml', '--out', path.relative(ROOT, project), '--check'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  backend = (await startBackend({ port: 0 })) as Backend;
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  for (const s of servers) s.kill('SIGKILL');
  backend?.server.close();
});

/** Starts the policy server with its own audit file, tokens for reader and admin, and `env`. */
async function serve(env: Record<string, string> = {}): Promise<{ http: HttpProcess; audit: string }> {
  const audit = path.join(mkdtempSync(path.join(work, 'audit-')), 'trail.jsonl');
  const http = await startHttp(project, {
    PETSTORE_POLICY_BASE_URL: backend.url,
    PETSTORE_POLICY_AUDIT_FILE: audit,
    PETSTORE_POLICY_HTTP_TOKENS: Object.entries(TOKENS)
      .map(([name, token]) => `${name}=${token}`)
      .join(','),
    ...env,
  });
  servers.push(http);
  return { http, audit };
}

async function as(http: HttpProcess, identity: keyof typeof TOKENS | undefined, era: Era = 'modern'): Promise<AnyClient> {
  const { client } = await connectClient(
    { kind: 'http', url: http.url, ...(identity ? { headers: { authorization: `Bearer ${TOKENS[identity]}` } } : {}) },
    era,
    { name: `pressure-${identity ?? 'anonymous'}` },
  );
  clients.push(client);
  return client;
}

/** Peak resident memory of a process, in bytes (VmHWM). */
function peakRss(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

const size = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};

/** createPet arguments of about 3.7 MB as JSON: a body whose tags are 1.2 million empty objects. */
const WIDE = { body: { name: 'Wide', tags: Array.from({ length: 1_230_000 }, () => ({})) } };

describe('arguments as a lever', () => {
  it('20 concurrent 3.7 MB calls are refused before they are parsed (413, naming the limit), a ping is answered within 1 s, memory stays bounded, and the audit trail does not grow', async () => {
    const { http, audit } = await serve();
    // ping is a request of the legacy era (a session); the modern era has none
    const admin = await as(http, 'admin', 'legacy');
    const before = size(audit);
    // serialised once, here: twenty JSON.stringify calls of 1.2 million objects would keep this
    // process (and the pings it times) busy for a second
    const [head, tail] = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'createPet', arguments: WIDE } }).split('"id":0');
    expect(Buffer.byteLength(head! + tail!)).toBeGreaterThan(3_600_000);
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      authorization: `Bearer ${TOKENS.reader}`,
    };
    let pingMs = 0;
    let calls: Promise<Array<{ status: number; text: string }>> | undefined;
    const pinger = (async () => {
      await new Promise((r) => setTimeout(r, 20));
      // pings from another client while the wide calls arrive
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        await admin.ping();
        pingMs = Math.max(pingMs, performance.now() - started);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const started = performance.now();
    calls = Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await fetch(http.url, { method: 'POST', headers, body: `${head}"id":${i + 1}${tail}` });
        return { status: res.status, text: await res.text() };
      }),
    );
    const answers = await calls;
    const took = performance.now() - started;
    await pinger;
    for (const a of answers) {
      expect(a.status).toBe(413);
      expect(JSON.parse(a.text).error.message).toBe(
        'Payload too large (limit 1310720 bytes; tool arguments may take 1048576 bytes (PETSTORE_POLICY_MAX_ARGUMENT_BYTES), the rest of the message 262144)',
      );
    }
    expect(took).toBeLessThan(10_000);
    expect(pingMs).toBeLessThan(1_000);
    expect(peakRss(http.pid)).toBeLessThan(400 * 1024 * 1024);
    // nothing of the refused calls reached the trail (the admin's session opening did)
    expect(size(audit) - before).toBeLessThan(1024);
    expect(readFileSync(audit, 'utf8')).not.toMatch(/createPet|"reader"/);
    // the server still serves
    expect((await admin.callTool({ name: 'getPetById', arguments: { petId: 1 } })).isError).toBeFalsy();
  }, 120_000);

  it('over stdio (no body limit) the same arguments are refused with -32602 before the audit trail, access control or validation see them', async () => {
    const audit = path.join(mkdtempSync(path.join(work, 'audit-')), 'trail.jsonl');
    const { client } = await connectClient(
      { kind: 'stdio', server: project, env: { PETSTORE_POLICY_BASE_URL: backend.url, PETSTORE_POLICY_AUDIT_FILE: audit, PETSTORE_POLICY_CLIENT: 'reader' } },
      'legacy',
    );
    clients.push(client);
    const e = await rpcError(client.callTool({ name: 'createPet', arguments: WIDE }, undefined, { timeout: 60_000 }));
    expect(e.code).toBe(-32602);
    expect(e.message).toContain(
      'Invalid arguments for tool createPet: they take more than 1048576 bytes as JSON (the limit, PETSTORE_POLICY_MAX_ARGUMENT_BYTES); nothing was run',
    );
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100; i++) deep = { d: deep };
    const d = await rpcError(client.callTool({ name: 'createPet', arguments: { body: { name: 'x', tags: [deep] } } }));
    expect(d.code).toBe(-32602);
    expect(d.message).toContain('they are nested more than 64 levels deep');
    // nothing reached the trail: it holds only what a normal call writes
    expect((await client.callTool({ name: 'getPetById', arguments: { petId: 1 } })).isError).toBeFalsy();
    const events = readFileSync(audit, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; primitive?: string });
    expect(events.filter((l) => l.primitive === 'createPet')).toEqual([]);
  }, 120_000);

  it('with the size limit raised, a denied 3.7 MB call adds under 16 KB to the audit trail, saying how large its arguments were', async () => {
    const { http, audit } = await serve({ PETSTORE_POLICY_MAX_ARGUMENT_BYTES: String(8 * 1024 * 1024) });
    const reader = await as(http, 'reader');
    const admin = await as(http, 'admin');
    await admin.callTool({ name: 'getPetById', arguments: { petId: 1 } });
    const before = size(audit);
    for (let i = 0; i < 5; i++) {
      const e = await rpcError(callToolWith(reader, { name: 'createPet', arguments: WIDE }, { timeout: 60_000 }));
      expect(e.message).toContain('Tool createPet is not available to client "reader"');
    }
    const added = size(audit) - before;
    expect(added).toBeLessThan(5 * 16 * 1024);
    const lines = readFileSync(audit, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const invoked = lines.filter((l) => l.event === 'tool.invoked' && l.client === 'reader');
    expect(invoked).toHaveLength(5);
    for (const line of invoked) {
      expect(line.argumentsCut).toEqual({ bytes: Buffer.byteLength(JSON.stringify(WIDE)), cap: 4096 });
      // the manifest redacts `name` at any depth
      expect((line.arguments as { body: { name: string } }).body.name).toBe('[redacted]');
    }
    expect(lines.filter((l) => l.event === 'tool.denied' && l.client === 'reader')).toHaveLength(5);
    // the chain holds
    const verify = await run(process.execPath, [path.join(project, 'dist/runtime/policy/verify-audit.js'), audit]).catch((e: { stdout?: string }) => e);
    expect((verify as { stdout: string }).stdout).toMatch(/^ok: \d+ lines/);
  }, 120_000);
});

describe('who may connect', () => {
  /** Runs the server with `args` and `env` until it exits (or is killed after 20 s); its exit code and stderr. */
  function exitOf(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [path.join(project, 'dist/server.js'), ...args], {
        env: { PATH: process.env.PATH ?? '', PETSTORE_POLICY_BASE_URL: backend.url, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => void (stderr += d.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr });
      });
    });
  }

  it('listening beyond loopback without client tokens refuses to start, naming the ways out', async () => {
    const refused = await exitOf(['--transport', 'http', '--host', '0.0.0.0', '--port', '0'], {});
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/cannot start: --host 0\.0\.0\.0 listens beyond loopback, but no client authentication is configured/);
    for (const way of ['PETSTORE_POLICY_HTTP_TOKENS', 'PETSTORE_POLICY_HTTP_TOKENS_FILE', '127.0.0.1', 'PETSTORE_POLICY_ALLOW_ANONYMOUS=true'])
      expect(refused.stderr).toContain(way);
    expect(refused.stderr).not.toMatch(/listening/);
    // knowingly anonymous, it starts
    const anonymous = await startHttp(
      project,
      { PETSTORE_POLICY_BASE_URL: backend.url, PETSTORE_POLICY_ALLOW_ANONYMOUS: 'true', PETSTORE_POLICY_AUDIT_FILE: path.join(work, 'anon.jsonl') },
      ['--host', '0.0.0.0'],
    );
    servers.push(anonymous);
    const res = await fetch(anonymous.url.replace('0.0.0.0', '127.0.0.1').replace(/\/mcp$/, '/healthz'));
    expect(res.status).toBe(200);
  }, 60_000);

  it('an HTTP client without a token is anonymous, never the stdio identity <PREFIX>_CLIENT', async () => {
    const audit = path.join(mkdtempSync(path.join(work, 'audit-')), 'trail.jsonl');
    const http = await startHttp(project, { PETSTORE_POLICY_BASE_URL: backend.url, PETSTORE_POLICY_AUDIT_FILE: audit, PETSTORE_POLICY_CLIENT: 'admin' });
    servers.push(http);
    const client = await as(http, undefined);
    // admin may list updatePet; anonymous has no rule, and the default is deny
    expect((await client.listTools()).tools).toEqual([]);
    const before = backend.requests.length;
    const result = await client.callTool({ name: 'updatePet', arguments: { body: { id: 1, name: 'Rex', status: 'sold' } } }).catch((e: unknown) => e);
    expect(backend.requests.length).toBe(before);
    expect(JSON.stringify(result)).not.toMatch(/"isError":false/);
    const lines = readFileSync(audit, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { client: string; event: string });
    expect(lines.filter((l) => l.event.startsWith('tool.')).map((l) => l.client)).toEqual(expect.arrayContaining(['anonymous']));
    expect(lines.some((l) => l.client === 'admin')).toBe(false);
  }, 60_000);
});

describe('malformed requests and session hoarding', () => {
  const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const INIT = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });

  /** One HTTP/1.1 request on a raw socket, so that the request target can be anything. */
  function rawRequest(url: string, target: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(
          `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${Object.entries({
            ...headers,
            'content-length': String(Buffer.byteLength(body)),
            connection: 'close',
          })
            .map(([k, v]) => `${k}: ${v}\r\n`)
            .join('')}\r\n${body}`,
        );
      });
      let data = '';
      socket.on('data', (d) => void (data += d.toString('utf8')));
      socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(data)?.[1]), text: data.slice(data.indexOf('\r\n\r\n') + 4) }));
      socket.on('error', reject);
    });
  }

  it('an absolute-form target and JSON nested 100,000 levels deep are answered 400, with no stack trace and nothing of the URL in the log', async () => {
    const { http } = await serve();
    const auth = { authorization: `Bearer ${TOKENS.admin}` };
    const absolute = await rawRequest(http.url, 'http://evil.example/mcp?access_token=leaked-0123456789', { ...JSON_HEADERS, ...auth }, INIT);
    expect(absolute.status).toBe(400);
    expect(absolute.text).toContain('the request target must be a path such as /mcp, not a full URL');
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"createPet","arguments":{"body":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`;
    const res = await fetch(http.url, { method: 'POST', headers: { ...JSON_HEADERS, ...auth, 'mcp-protocol-version': '2026-07-28' }, body: deep });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('the JSON nests more than 80 levels deep');
    // still serving
    const admin = await as(http, 'admin');
    expect((await admin.callTool({ name: 'getPetById', arguments: { petId: 1 } })).isError).toBeFalsy();
    expect(http.stderr()).not.toMatch(/leaked-0123456789|evil\.example|ERROR|RangeError|    at /);
  }, 60_000);

  it('100 sessions opened by one client do not lock out another: past its cap its least recently used idle session is closed', async () => {
    const { http } = await serve();
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await fetch(http.url, { method: 'POST', headers: { ...JSON_HEADERS, authorization: `Bearer ${TOKENS.reader}` }, body: INIT });
      expect(res.status).toBe(200);
      ids.push(res.headers.get('mcp-session-id')!);
      await res.body?.cancel();
    }
    const ping = (id: string) =>
      fetch(http.url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, authorization: `Bearer ${TOKENS.reader}`, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
      });
    expect((await ping(ids[0]!)).status).toBe(404);
    expect((await ping(ids[99]!)).status).toBe(200);
    // the admin's legacy client gets its session
    const admin = await as(http, 'admin', 'legacy');
    await admin.ping();
    expect((await admin.callTool({ name: 'getPetById', arguments: { petId: 1 } })).isError).toBeFalsy();
    expect((http.stderr().match(/session cap reached/g) ?? []).length).toBe(0);
  }, 60_000);
});

describe('the trail through crashes, full disks and shutdowns', () => {
  const verifyAudit = (file: string) =>
    run(process.execPath, [path.join(project, 'dist/runtime/policy/verify-audit.js'), file]).then(
      (r) => ({ code: 0, out: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
    );

  /** Starts the built server with `bash -c` (so that `ulimit` can apply), waits until it listens. */
  function serveUnder(prefix: string, env: Record<string, string>): Promise<HttpProcess & { stop(): void }> {
    const child = spawn('bash', ['-c', `${prefix}exec "${process.execPath}" "${path.join(project, 'dist/server.js')}" --transport http --port 0`], {
      env: { PATH: process.env.PATH ?? '', PETSTORE_POLICY_BASE_URL: backend.url, PETSTORE_POLICY_HTTP_TOKENS: `admin=${TOKENS.admin}`, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line in 20 s:\n${err}`)), 20_000);
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString('utf8');
        const m = /Streamable HTTP at (http:\/\/\S+?\/mcp)\b/.exec(err);
        if (m) {
          clearTimeout(timer);
          const handle = {
            url: m[1]!,
            pid: child.pid!,
            stderr: () => err,
            exit,
            kill: (signal: NodeJS.Signals = 'SIGTERM') => void child.kill(signal),
            stop: () => void child.kill('SIGKILL'),
          };
          servers.push(handle);
          resolve(handle);
        }
      });
    });
  }

  it('after SIGKILL under load and a torn last line, the restarted server repairs the trail and verify-audit verifies it end to end, naming the repaired break', async () => {
    const { http, audit } = await serve();
    const admin = await as(http, 'admin');
    const calls = Array.from({ length: 60 }, (_, i) => admin.callTool({ name: 'getPetById', arguments: { petId: (i % 3) + 1 } }).catch(() => undefined));
    // killed once the trail has some lines, however fast this machine is
    const written = () => (size(audit) > 0 ? (readFileSync(audit, 'utf8').match(/\n/g) ?? []).length : 0);
    for (let i = 0; i < 400 && written() < 10; i++) await new Promise((r) => setTimeout(r, 25));
    http.kill('SIGKILL');
    await http.exit;
    await Promise.all(calls);
    // what a crash in the middle of a write leaves: the last line cut short (SIGKILL alone tears one only now and then)
    const text = readFileSync(audit, 'utf8');
    if (text.endsWith('\n')) truncateSync(audit, Buffer.byteLength(text) - 17);
    const tornBytes = Buffer.byteLength(readFileSync(audit, 'utf8').split('\n').at(-1)!);
    expect(tornBytes).toBeGreaterThan(0);

    const again = await startHttp(project, {
      PETSTORE_POLICY_BASE_URL: backend.url,
      PETSTORE_POLICY_AUDIT_FILE: audit,
      PETSTORE_POLICY_HTTP_TOKENS: `admin=${TOKENS.admin}`,
    });
    servers.push(again);
    // repaired at start, before any call
    for (let i = 0; i < 100 && !readFileSync(audit, 'utf8').includes('"trail.repaired"'); i++) await new Promise((r) => setTimeout(r, 50));
    const after = await as(again, 'admin');
    expect((await after.callTool({ name: 'getPetById', arguments: { petId: 1 } })).isError).toBeFalsy();
    again.kill('SIGTERM');
    await again.exit;
    const lines = readFileSync(audit, 'utf8').trimEnd().split('\n');
    const torn = lines.findIndex((l) => !l.startsWith('{') || !l.endsWith('}'));
    expect(JSON.parse(lines[torn + 1]!)).toMatchObject({ event: 'trail.repaired', torn: { bytes: tornBytes } });
    const verdict = await verifyAudit(audit);
    expect(verdict.code).toBe(0);
    expect(verdict.out).toContain(
      `line ${torn + 1}: a torn line of ${tornBytes} bytes (a write cut short by a crash or a full disk), repaired by the trail.repaired event on line ${torn + 2}`,
    );
    const before = torn === 0 ? '' : torn === 1 ? '1, ' : `1-${torn}, `;
    expect(verdict.out).toMatch(new RegExp(`ok: ${lines.length} lines; verified lines ${before}${torn + 2}-${lines.length}\\n$`));
  }, 120_000);

  it('on a full disk a call is refused before it runs, a call that ran is never reported failed, and once there is room the trail says what was lost and verifies', async () => {
    const audit = path.join(mkdtempSync(path.join(work, 'audit-')), 'trail.jsonl');
    // 16 KiB of file at most: the audit file fills after a few dozen events (EFBIG, as a full disk's ENOSPC)
    const full = await serveUnder('ulimit -f 16; ', { PETSTORE_POLICY_AUDIT_FILE: audit });
    const admin = await as(full, 'admin');
    let refused = 0;
    for (let i = 0; i < 120 && refused < 3; i++) {
      const before = backend.requests.length;
      const outcome = await admin.callTool({ name: 'getPetById', arguments: { petId: 1 } }).then(
        (r) => ({ ran: backend.requests.length > before, error: r.isError === true, code: undefined as number | undefined }),
        (e: { code?: number }) => ({ ran: backend.requests.length > before, error: true, code: e.code }),
      );
      if (outcome.ran) expect(outcome.error, `call ${i} ran and must not be reported failed`).toBe(false);
      else {
        expect(outcome.code).toBe(-32603);
        refused++;
      }
    }
    expect(refused).toBe(3);
    expect(full.stderr()).toMatch(/EFBIG/);
    full.stop();
    await full.exit;

    const roomy = await startHttp(project, {
      PETSTORE_POLICY_BASE_URL: backend.url,
      PETSTORE_POLICY_AUDIT_FILE: audit,
      PETSTORE_POLICY_HTTP_TOKENS: `admin=${TOKENS.admin}`,
    });
    servers.push(roomy);
    const after = await as(roomy, 'admin');
    expect((await after.callTool({ name: 'getPetById', arguments: { petId: 2 } })).isError).toBeFalsy();
    roomy.kill('SIGTERM');
    await roomy.exit;
    const verdict = await verifyAudit(audit);
    expect(verdict.code, verdict.out).toBe(0);
    expect(verdict.out).toMatch(/ok: \d+ lines/);
    // the write cut short at the size limit left a torn line: repaired and named
    expect(verdict.out).toMatch(/a torn line of \d+ bytes .* repaired by the trail\.repaired event on line \d+/);
  }, 120_000);

  it('SIGTERM exits after DRAIN_MS, long before the audit trail could catch up, counting what it could not write', async () => {
    const dir = mkdtempSync(path.join(work, 'fifo-'));
    const fifo = path.join(dir, 'trail.jsonl');
    // the trail goes to a pipe read slowly (16 KB every 500 ms, 32 KB/s): 400 calls' 4 KiB lines would take
    // about 50 s to drain, so a server that waited for its trail would not exit within the bound below
    execFileSync('mkfifo', [fifo]);
    const reader = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const fd = fs.openSync(${JSON.stringify(fifo)}, 'r'); const b = Buffer.alloc(16384); setInterval(() => { try { fs.readSync(fd, b, 0, b.length, null); } catch {} }, 500);`,
      ],
      { stdio: 'ignore' },
    );
    try {
      const http = await startHttp(project, {
        PETSTORE_POLICY_BASE_URL: backend.url,
        PETSTORE_POLICY_AUDIT_FILE: fifo,
        PETSTORE_POLICY_HTTP_TOKENS: `admin=${TOKENS.admin}`,
        PETSTORE_POLICY_DRAIN_MS: '1000',
      });
      servers.push(http);
      const admin = await as(http, 'admin');
      // each call's invoked line carries a 4 KiB summary of its arguments
      const big = { body: { name: 'x', tags: Array.from({ length: 200 }, (_, i) => ({ name: `tag-${i}-${'y'.repeat(40)}` })) } };
      const calls = Array.from({ length: 400 }, () => callToolWith(admin, { name: 'createPet', arguments: big }, { timeout: 30_000 }).catch(() => undefined));
      await new Promise((r) => setTimeout(r, 1000));
      const started = performance.now();
      http.kill('SIGTERM');
      const code = await http.exit;
      const took = performance.now() - started;
      expect(code).toBe(0);
      // the drain time bounds the exit; the margin is wide so a slow or loaded machine passes, yet far
      // below the ~50 s the trail would need to catch up
      expect(took).toBeLessThan(1000 + 15_000);
      expect(http.stderr()).toMatch(
        /audit: \d+ events? could not be written before the server exits \(the drain time ran out\)|exiting \d+ ms after SIGTERM with work unfinished/,
      );
      await Promise.all(calls);
    } finally {
      reader.kill('SIGKILL');
    }
  }, 60_000);
});

/**
 * Policy limits end to end, against a backend on 127.0.0.1 that answers slowly: the concurrency
 * limit refuses a call while another runs (one the backend holds until the test releases it), the time limit answers at its deadline and the
 * backend sees the upstream request aborted, the rate limit counts per client; every refusal
 * is audited, and the API credential and the redacted argument never appear in the trail.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyClient, HttpProcess } from '../helpers/eras.js';
import { connectClient, startHttp } from '../helpers/eras.js';
import { buildServer } from '../helpers/generated-server.js';

const SPEC = `openapi: 3.0.3
info: { title: Slow, version: 1.0.0 }
servers: [{ url: http://127.0.0.1:9 }]
components:
  securitySchemes:
    token: { type: http, scheme: bearer }
security: [{ token: [] }]
paths:
  /slow/{ms}:
    get:
      operationId: slow
      parameters: [{ name: ms, in: path, required: true, schema: { type: integer } }]
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object } } } } }
  /held:
    get:
      operationId: held
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object } } } } }
  /notes:
    post:
      operationId: addNote
      requestBody: { content: { application/json: { schema: { type: object, properties: { text: { type: string }, pin: { type: string } } } } } }
      responses: { '201': { description: ok, content: { application/json: { schema: { type: object } } } } }
`;
const MANIFEST = `name: slow
version: 1.0.0
openapi: ./openapi.yaml
output: ./server
policy:
  audit: { stderr: false, file: audit.jsonl, redact: [pin] }
  limits:
    default: { timeoutMs: 400 }
    tools:
      slow: { maxConcurrent: 1, timeoutMs: 400 }
      held: { maxConcurrent: 1, timeoutMs: 600000 }
      addNote: { perMinute: { client: 2, overall: 10 } }
`;
const TOKEN = 'upstream-credential-4b1d9c0e7f';
const PIN = 'pin-number-8811';
const ALICE = 'alice-mcp-token-0123456789';
const BOB = 'bob-mcp-token-0123456789ab';

type Seen = { url: string; aborted: boolean };
const seen: Seen[] = [];
/** Answers the requests to /held, which wait for it. */
const holding: Array<() => void> = [];
let api: Server;
let http: HttpProcess;
let audit = '';
const open: AnyClient[] = [];

beforeAll(async () => {
  api = createServer((req, res) => {
    const entry: Seen = { url: req.url ?? '', aborted: false };
    seen.push(entry);
    req.on('data', () => undefined);
    res.on('close', () => {
      if (!res.writableFinished) entry.aborted = true;
    });
    if (req.url === '/held') {
      holding.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
      return;
    }
    const ms = Number(/^\/slow\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
    const answer = setTimeout(() => {
      if (!res.destroyed) res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' }).end('{"ok":true}');
    }, ms);
    res.on('close', () => clearTimeout(answer));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const project = (await buildServer('policy-limits', SPEC, MANIFEST)).server;
  audit = path.join(mkdtempSync(path.join(project, '..', 'audit-')), 'trail.jsonl');
  http = await startHttp(project, {
    SLOW_BASE_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
    SLOW_TOKEN_TOKEN: TOKEN,
    SLOW_AUDIT_FILE: audit,
    SLOW_HTTP_TOKENS: `alice=${ALICE},bob=${BOB}`,
  });
}, 120_000);

afterAll(async () => {
  for (const release of holding.splice(0)) release();
  await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
  http?.kill('SIGKILL');
  api?.closeAllConnections();
  api?.close();
});

async function client(token = ALICE): Promise<AnyClient> {
  const { client: c } = await connectClient({ kind: 'http', url: http.url, headers: { authorization: `Bearer ${token}` } }, 'legacy');
  open.push(c);
  return c;
}

type Result = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const text = (r: Result) => r.content.map((c) => c.text ?? '').join('\n');
const events = () =>
  readFileSync(audit, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; primitive?: string; detail?: string });

describe('policy limits over HTTP', () => {
  it('refuses a second call while the first holds the only slot (maxConcurrent 1)', async () => {
    const c = await client();
    const first = c.callTool({ name: 'held', arguments: {} });
    // the first call holds its slot once its request reaches the backend, which holds it until released (waited for, not timed)
    while (holding.length === 0) await new Promise((r) => setTimeout(r, 10));
    const second = (await c.callTool({ name: 'held', arguments: {} })) as Result;
    expect(second.isError).toBe(true);
    expect(text(second)).toMatch(/already has 1 calls? running.*maxConcurrent.*retry shortly/);
    holding.shift()!();
    expect(((await first) as Result).isError, text((await first) as Result)).toBeFalsy();
    expect(events().some((e) => e.event === 'tool.limited' && e.primitive === 'held' && /maxConcurrent/.test(e.detail ?? ''))).toBe(true);
  });

  it('answers at the deadline (timeoutMs) and the backend sees the upstream request aborted', async () => {
    const c = await client();
    const before = seen.length;
    // the backend would answer after 10 minutes: only the 400 ms deadline can end the call (no timed
    // assertion, so a slow machine changes nothing)
    const r = (await c.callTool({ name: 'slow', arguments: { ms: 600_000 } }, undefined, { timeout: 120_000 })) as Result;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/400 ms/);
    const request = seen.slice(before).find((s) => s.url === '/slow/600000')!;
    expect(request).toBeDefined();
    // the abort reaches the backend soon after; waited for, not timed
    while (!request.aborted) await new Promise((res) => setTimeout(res, 20));
    expect(request.aborted).toBe(true);
    expect(events().some((e) => (e.event === 'tool.limited' || e.event === 'tool.failed') && e.primitive === 'slow')).toBe(true);
  });

  it('counts the per-client rate, and keeps the credential and redacted fields out of the trail', async () => {
    const c = await client();
    const results: Result[] = [];
    for (let i = 0; i < 3; i++) results.push((await c.callTool({ name: 'addNote', arguments: { body: { text: `note ${i}`, pin: PIN } } })) as Result);
    expect(results.slice(0, 2).every((r) => !r.isError)).toBe(true);
    expect(results[2]!.isError).toBe(true);
    expect(text(results[2]!)).toMatch(/over its limit of 2 calls per minute for client "alice".*retry in \d+ s/);
    // another client has its own allowance
    const other = await client(BOB);
    expect(((await other.callTool({ name: 'addNote', arguments: { body: { text: 'other' } } })) as Result).isError).toBeFalsy();
    const trail = readFileSync(audit, 'utf8');
    expect(trail).toContain('tool.limited');
    expect(trail).not.toContain(TOKEN);
    expect(trail).not.toContain(PIN);
    expect(trail).not.toContain(ALICE);
  });
});

/**
 * Code mode on GitHub's REST API (1,223 operations): test/fixtures/github/mcpgen.yaml built once
 * with `discovery: code` (preset `ci` lists its tools), an audit trail and an access rule denying
 * `pulls_list-reviews` to client bob; compiled with mcpgen's tsc and run against a recording
 * backend on 127.0.0.1. One `execute` lists the open pull requests, fetches each one's reviews and
 * returns those with none: the backend saw exactly those requests, the answer is small, the audit
 * trail nests each API call under the execute call, and bob's run fails naming the rule. Then the
 * hostile-code suite (test/fixtures/code-mode/hostile.json): each case refused or bounded, the
 * server serving the next call, no secret in any answer, log or audit line.
 */
import http from 'node:http';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Project } from 'ts-morph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { main } from '../../src/cli/main.js';
import type { JsonReport } from '../../src/cli/report.js';
import { connectClient, ERAS, startHttp } from '../helpers/eras.js';
import type { AnyClient, HttpProcess } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const FIXTURE = path.join(ROOT, 'test/fixtures/github');
const work = path.join(ROOT, '.cache/code-mode-github');
const server = path.join(work, 'server');
const SECRET = 'state-key-0123456789abcdef0123456789abcdef-secret';
const HOSTILE = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/code-mode/hostile.json'), 'utf8')) as { cases: Array<{ name: string; code: string; expect: string }> };

type Seen = { method: string; url: string };
let backend: http.Server;
const requests: Seen[] = [];
/** Requests to the never-answering route whose connection the server closed. */
const closed: string[] = [];
let report: JsonReport;
let env: Record<string, string>;
const clients: AnyClient[] = [];
let httpServer: HttpProcess | undefined;

/** The PRs of o/r: #1 and #3 have no review, #2 has one. */
const PULLS = [1, 2, 3].map((n) => ({ number: n, title: `PR ${n}`, state: 'open', body: 'x'.repeat(2000), user: { login: `u${n}` } }));

const TASK = `
type Pull = { number: number; title: string };
const pulls = (await api.pulls_list({ owner: 'o', repo: 'r', state: 'open' })) as Pull[];
const none: Pull[] = [];
for (const p of pulls) {
  const reviews = (await api.pulls_list_reviews({ owner: 'o', repo: 'r', pull_number: p.number })) as unknown[];
  if (reviews.length === 0) none.push({ number: p.number, title: p.title });
}
console.log('checked', pulls.length);
return none;
`;

const text = (r: unknown): string => ((r as { content: Array<{ type: string; text?: string }> }).content ?? []).map((c) => c.text ?? '').join('\n');
const audit = (): Array<Record<string, unknown>> =>
  readFileSync(path.join(work, 'audit.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const manifest = readFileSync(path.join(FIXTURE, 'mcpgen.yaml'), 'utf8').replace('openapi: ../../../.corpus/github-rest.json', `openapi: ${JSON.stringify(path.join(ROOT, '.corpus/github-rest.json'))}`);
  writeFileSync(
    path.join(work, 'mcpgen.yaml'),
    // output schemas up to 64 KB are kept, so list results are typed in their signatures and come back wrapped ({status, data}) for code to unwrap
    `${manifest}outputSchemaMaxBytes: 65536\ndiscovery:\n  mode: code\n  presets: { ci: list }\npolicy:\n  audit:\n    file: audit.jsonl\n  access:\n    default: allow\n    rules:\n      - clients: [bob]\n        deny: { names: ['pulls_list-reviews'] }\n`,
  );
  let out = '';
  const io = { stdout: (s: string) => void (out += s), stderr: (s: string) => void process.stderr.write(s), cwd: work };
  expect(await main(['build', 'mcpgen.yaml', '--format', 'json', '--report'], io)).toBe(0);
  report = JSON.parse(out) as JsonReport;
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', server], { maxBuffer: 64 * 1024 * 1024 }).catch((e: { stdout?: string }) => {
    throw new Error(`the generated project does not compile:\n${e.stdout ?? String(e)}`);
  });
  backend = http.createServer((req, res) => {
    requests.push({ method: req.method!, url: req.url! });
    const url = new URL(req.url!, 'http://x');
    const reviews = /^\/repos\/o\/r\/pulls\/(\d+)\/reviews$/.exec(url.pathname);
    let body: unknown = { message: 'Not Found' };
    let status = 404;
    if (req.method === 'GET' && url.pathname === '/repos/o/r/pulls') [status, body] = [200, PULLS];
    else if (req.method === 'GET' && reviews) [status, body] = Number(reviews[1]) === 404 ? [404, { message: 'Not Found', documentation_url: 'https://docs' }] : [200, Number(reviews[1]) === 2 ? [{ id: 9, state: 'APPROVED' }] : []];
    else if (req.method === 'GET' && url.pathname === '/repos/o/big/pulls') [status, body] = [200, Array.from({ length: 40 }, (_, i) => ({ number: i + 1, title: `PR ${i + 1}`, body: 'b'.repeat(900) }))];
    else if (url.pathname === '/repos/o/slow/pulls') {
      // never answers: the test sees whether the server gives up the request (its socket closes)
      res.on('close', () => closed.push(req.url!));
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(backend.address() as { port: number }).port}`;
  env = {
    GITHUB_BASE_URL: base,
    GITHUB_REFLECTION_DIR: path.join(work, 'store'),
    GITHUB_AUDIT_FILE: path.join(work, 'audit.jsonl'),
    GITHUB_STATE_KEY: SECRET,
    GITHUB_CODE_TIMEOUT_MS: '3000',
  };
}, 600_000);

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  httpServer?.kill();
  backend?.close();
});

async function stdioClient(era: 'legacy' | 'modern', client = 'alice', extra: Record<string, string> = {}): Promise<{ client: AnyClient; stderr: () => string }> {
  const c = await connectClient({ kind: 'stdio', server, env: { ...env, GITHUB_CLIENT: client, ...extra } }, era);
  clients.push(c.client);
  return c;
}

describe('code mode on GitHub', () => {
  it('lists search_tools, describe_tool, execute (and the persist tool) in under 1,000 o200k tokens, and build --report says so', async () => {
    const { client } = await stdioClient('modern');
    const list = await client.listTools();
    expect(list.tools.map((t) => t.name)).toEqual(['search_tools', 'describe_tool', 'execute', 'persist_justification']);
    const tokens = encode(JSON.stringify(list)).length;
    expect(tokens).toBeLessThanOrEqual(1000);
    expect(report.summary.discovery).toBe('code');
    expect(report.summary.codeListTokens).toBeLessThanOrEqual(1000);
    // the project ships the sandbox's dependencies and documents code mode and its bounds
    const pkg = JSON.parse(readFileSync(path.join(server, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies).toMatchObject({ 'quickjs-emscripten': '0.32.0', sucrase: '3.35.1' });
    const readme = readFileSync(path.join(server, 'README.md'), 'utf8');
    expect(readme).toContain('## Code mode');
    expect(readme).toContain('| API calls | `GITHUB_CODE_MAX_CALLS` | 50 |');
  });

  it('per preset: a preset in list mode lists its tools; code reaches only what the request\'s preset shows', async () => {
    const { client } = await stdioClient('modern');
    const meta = (preset: string) => ({ _meta: { 'io.mcpgen/concernPreset': preset } });
    const ci = await client.listTools(meta('ci'));
    expect(ci.tools.length).toBe(report.summary.presets.find((p) => p.name === 'ci')!.tools);
    expect(ci.tools.some((t) => t.name === 'execute')).toBe(false);
    const review = await client.listTools(meta('code-review'));
    expect(review.tools.map((t) => t.name)).toContain('execute');
    requests.length = 0;
    // code-review shows the pulls area only: an issues operation is out of its reach, a pulls one in it
    const out = await client.callTool({ name: 'execute', arguments: { code: `return await api.issues_list_for_repo({ owner: 'o', repo: 'r' })` }, ...meta('code-review') });
    expect(out.isError).toBe(true);
    expect(text(out)).toContain('issues_list-for-repo was refused: issues_list-for-repo is not reachable by this client');
    const inside = await client.callTool({ name: 'execute', arguments: { code: `return (await api.pulls_list({ owner: 'o', repo: 'r' })).length` }, ...meta('code-review') });
    expect(text(inside).split('\n', 1)[0]).toBe('3');
    expect(requests.map((r) => r.url)).toEqual(['/repos/o/r/pulls']);
  });

  it('search_tools and describe_tool give TypeScript signatures', async () => {
    const { client } = await stdioClient('modern');
    const found = text(await client.callTool({ name: 'search_tools', arguments: { query: 'list reviews of a pull request' } }));
    expect(found).toContain('api.pulls_list_reviews(args: { owner: string; repo: string; pull_number: number');
    const described = text(await client.callTool({ name: 'describe_tool', arguments: { name: 'pulls_list' } }));
    expect(described).toContain('api.pulls_list(args: { owner: string; repo: string; state?: "open" | "closed" | "all"');
    // the result type is the body's (a list of pull requests), not the {status, data} wrapper
    expect(described).toMatch(/\): Promise<\(?Array<\{ id\?: number \| null; number\?: number \| null; state\?: string \| null; locked\?: boolean \| null; title\?: string \| null;/);
    // without the keys compaction drops (url, *_url, node_id), which the code never receives
    expect(described).not.toMatch(/html_url|node_id/);
    // every one of GitHub's 1,223 signatures is a valid declaration
    const { codeSignatures } = (await import(pathToFileURL(path.join(server, 'dist/code-signatures.gen.js')).href)) as { codeSignatures: Record<string, string> };
    const all = Object.values(codeSignatures);
    expect(all).toHaveLength(1223);
    const file = new Project({ useInMemoryFileSystem: true }).createSourceFile('all.ts', all.map((sig, i) => `declare function f${i}${sig.slice(sig.indexOf('('))};`).join('\n'));
    expect(file.getPreEmitDiagnostics().filter((d) => d.getCode() < 2000).map((d) => String(d.getMessageText()))).toEqual([]);
  });

  for (const era of ERAS) {
    it(`one execute finds the open PRs without a review (${era}, stdio): exact requests, a small answer, nested audit`, async () => {
      const { client, stderr } = await stdioClient(era);
      requests.length = 0;
      const result = await client.callTool({ name: 'execute', arguments: { code: TASK } });
      expect(result.isError, text(result)).toBeFalsy();
      const answer = text(result);
      expect(JSON.parse(answer.split('\n', 1)[0]!)).toEqual([
        { number: 1, title: 'PR 1' },
        { number: 3, title: 'PR 3' },
      ]);
      expect(answer).toContain('4 API calls were made: pulls_list 200, pulls_list-reviews 200 ×3');
      expect(answer).toContain('console:\nchecked 3');
      expect(encode(answer).length).toBeLessThan(2000);
      expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        'GET /repos/o/r/pulls?state=open',
        'GET /repos/o/r/pulls/1/reviews',
        'GET /repos/o/r/pulls/2/reviews',
        'GET /repos/o/r/pulls/3/reviews',
      ]);
      // one execute record (code hash, no code text) and the four nested calls under its id
      const lines = audit();
      const exec = lines.filter((l) => l.primitive === 'execute' && l.event === 'tool.invoked').at(-1)!;
      expect(exec.arguments).toMatchObject({ code: '[redacted]', codeChars: TASK.length });
      expect(String((exec.arguments as { codeSha256: string }).codeSha256)).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(lines)).not.toContain('pulls_list_reviews({');
      const nested = lines.filter((l) => l.parentCallId === exec.callId && l.event === 'tool.completed');
      expect(nested.map((l) => l.primitive)).toEqual(['pulls_list', 'pulls_list-reviews', 'pulls_list-reviews', 'pulls_list-reviews']);
      expect(lines.filter((l) => l.callId === exec.callId && l.event === 'tool.completed')).toHaveLength(1);
      expect(stderr()).not.toContain(SECRET);
    });
  }

  it('an access rule denying pulls_list-reviews makes the same code fail naming the rule, after one request', async () => {
    const { client } = await stdioClient('modern', 'bob');
    requests.length = 0;
    const result = await client.callTool({ name: 'execute', arguments: { code: TASK } });
    expect(result.isError).toBe(true);
    const t = text(result);
    expect(t).toContain('pulls_list-reviews was refused');
    expect(t).toContain('policy.access.rules[0]');
    expect(t).toContain('2 API calls were made: pulls_list 200, pulls_list-reviews refused');
    expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /repos/o/r/pulls?state=open']);
    expect(audit().some((l) => l.event === 'tool.denied' && l.primitive === 'pulls_list-reviews' && l.client === 'bob' && typeof l.parentCallId === 'string')).toBe(true);
  });

  it("code gets an operation's whole result, not one cut to the model's token budget; execute's own answer is budgeted", async () => {
    const { client } = await stdioClient('modern');
    // 40 PRs of ~1 KB: ~40 KB of JSON, over the results budget of 8,000 tokens a direct call is cut to
    const direct = text(await client.callTool({ name: 'pulls_list', arguments: { owner: 'o', repo: 'big' } }));
    expect(direct).toMatch(/kept \d+ of 40|\d+ of 40/);
    const counted = await client.callTool({ name: 'execute', arguments: { code: `const p = await api.pulls_list({ owner: 'o', repo: 'big' }); return p.length` } });
    expect(text(counted).split('\n', 1)[0]).toBe('40');
    const whole = text(await client.callTool({ name: 'execute', arguments: { code: `return await api.pulls_list({ owner: 'o', repo: 'big' })` } }));
    expect(whole).toMatch(/The returned list was cut to \d+ of 40 items to fit the results budget of 8000 tokens/);
  });

  it('an invalid bound setting fails execute naming the variable; the server still starts and serves', async () => {
    const { client } = await stdioClient('modern', 'alice', { GITHUB_CODE_MAX_CALLS: 'many' });
    const r = await client.callTool({ name: 'execute', arguments: { code: 'return 1' } });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('GITHUB_CODE_MAX_CALLS must be a positive integer (got "many")');
    expect((await client.listTools()).tools.length).toBe(4);
  });

  it('a non-2xx response rejects with its status and body, which the code can catch', async () => {
    const { client } = await stdioClient('modern');
    const code = `try { await api.pulls_list_reviews({ owner: 'o', repo: 'r', pull_number: 404 }); return 'no'; } catch (e) { return { status: e.status, body: e.body.slice(0, 200), op: e.operation }; }`;
    const result = await client.callTool({ name: 'execute', arguments: { code } });
    const value = JSON.parse(text(result).split('\n', 1)[0]!) as { status: number; body: string; op: string };
    expect(value.status).toBe(404);
    expect(value.body).toContain('Not Found');
    expect(value.op).toBe('pulls_list_reviews');
  });

  it('serves code mode over Streamable HTTP in both eras, each client with its own identity', async () => {
    httpServer = await startHttp(server, { ...env, GITHUB_HTTP_TOKENS: 'alice=alice-token-0123456789,bob=bob-token-0123456789' });
    for (const era of ERAS) {
      for (const [who, token, ok] of [
        ['alice', 'alice-token-0123456789', true],
        ['bob', 'bob-token-0123456789', false],
      ] as const) {
        const { client } = await connectClient({ kind: 'http', url: httpServer.url, headers: { authorization: `Bearer ${token}` } }, era);
        clients.push(client);
        const result = await client.callTool({ name: 'execute', arguments: { code: TASK } });
        expect(result.isError === true, `${era} ${who}: ${text(result)}`).toBe(!ok);
      }
    }
  });
});

describe('cancellation, isolation and memory', () => {
  it('a client that cancels an execute stops its code and its API call in flight; the server keeps serving (legacy era: notifications/cancelled)', async () => {
    const { client } = await stdioClient('legacy');
    closed.length = 0;
    requests.length = 0;
    const controller = new AbortController();
    const pending = client.callTool({ name: 'execute', arguments: { code: `await api.pulls_list({ owner: 'o', repo: 'slow' }); return 'never'` } }, undefined, { signal: controller.signal });
    const settled = pending.then(
      () => 'resolved',
      () => 'rejected',
    );
    while (!requests.some((r) => r.url.startsWith('/repos/o/slow/pulls'))) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    expect(await settled).toBe('rejected');
    while (closed.length === 0) await new Promise((r) => setTimeout(r, 20));
    expect(closed[0]).toMatch(/^\/repos\/o\/slow\/pulls/);
    const next = await client.callTool({ name: 'execute', arguments: { code: 'return 1' } });
    expect(text(next).split('\n', 1)[0]).toBe('1');
  });

  it('a legacy HTTP session that ends stops its execute and the API call in flight', async () => {
    const proc = await startHttp(server, env);
    try {
      closed.length = 0;
      requests.length = 0;
      const { client } = await connectClient({ kind: 'http', url: proc.url }, 'legacy');
      const pending = client.callTool({ name: 'execute', arguments: { code: `await api.pulls_list({ owner: 'o', repo: 'slow' }); return 'never'` } }).catch(() => 'failed');
      while (!requests.some((r) => r.url.startsWith('/repos/o/slow/pulls'))) await new Promise((r) => setTimeout(r, 20));
      // the client ends its session (DELETE), then goes
      await (client as unknown as { transport: { terminateSession(): Promise<void> } }).transport.terminateSession();
      await client.close();
      await pending;
      while (closed.length === 0) await new Promise((r) => setTimeout(r, 20));
      expect(closed[0]).toMatch(/^\/repos\/o\/slow\/pulls/);
    } finally {
      proc.kill();
    }
  });

  it('SIGTERM drains: an execute that would loop for ten minutes is stopped and the process exits', async () => {
    // the wall time is ten minutes and the drain 300 ms: only the drain can end this run before the test's timeout
    const proc = await startHttp(server, { ...env, GITHUB_CODE_TIMEOUT_MS: '600000', GITHUB_DRAIN_MS: '300' });
    const { client } = await connectClient({ kind: 'http', url: proc.url }, 'modern');
    const pending = client.callTool({ name: 'execute', arguments: { code: 'while (true) {}' } }).catch(() => 'failed');
    while (!audit().some((l) => l.event === 'tool.invoked' && l.primitive === 'execute' && l.era === 'modern' && (l.arguments as { codeChars?: number }).codeChars === 'while (true) {}'.length && Date.parse(String(l.time)) > Date.now() - 20_000)) await new Promise((r) => setTimeout(r, 20));
    proc.kill('SIGTERM');
    expect(await proc.exit).not.toBeUndefined();
    await pending;
    await client.close().catch(() => undefined);
  }, 60_000);

  it('code that loops holds up only its own run: another client is served meanwhile', async () => {
    const a = await stdioClient('modern');
    const order: string[] = [];
    const loop = a.client.callTool({ name: 'execute', arguments: { code: 'while (true) {}' } }).then((r) => void order.push(`loop: ${text(r).split('\n', 1)[0]}`));
    // the loop has started when its execute is in the audit trail
    while (!audit().some((l) => l.event === 'tool.invoked' && l.primitive === 'execute' && (l.arguments as { codeChars?: number }).codeChars === 'while (true) {}'.length)) await new Promise((r) => setTimeout(r, 20));
    const quick = await a.client.callTool({ name: 'execute', arguments: { code: 'return 2' } });
    order.push(`quick: ${text(quick).split('\n', 1)[0]}`);
    await loop;
    expect(order[0]).toBe('quick: 2');
    expect(order[1]).toMatch(/^loop: Stopped by the wall time bound/);
  });

  it('concurrent executes of two clients see only their own globals', async () => {
    const [a, b] = await Promise.all([stdioClient('modern', 'alice'), stdioClient('legacy', 'carol')]);
    const code = (v: string) => `globalThis.mine = ${JSON.stringify(v)}; for (let i = 0; i < 3; i++) await api.pulls_list({ owner: 'o', repo: 'r' }); return [globalThis.mine, typeof globalThis.other]`;
    const both = await Promise.all([
      a.client.callTool({ name: 'execute', arguments: { code: code('A') } }),
      b.client.callTool({ name: 'execute', arguments: { code: code('B') } }),
      a.client.callTool({ name: 'execute', arguments: { code: code('A2') } }),
    ]);
    expect(both.map((r) => JSON.parse(text(r).split('\n', 1)[0]!))).toEqual([
      ['A', 'undefined'],
      ['B', 'undefined'],
      ['A2', 'undefined'],
    ]);
  });

  it('memory bombs stay within the memory bound: the server process peaks far below the 2.2 GB of a QuickJS limit alone', async () => {
    const proc = await startHttp(server, env);
    try {
      const status = () => readFileSync(`/proc/${proc.pid}/status`, 'utf8');
      const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status())![1]);
      const { client } = await connectClient({ kind: 'http', url: proc.url }, 'modern');
      clients.push(client);
      await client.callTool({ name: 'execute', arguments: { code: 'return 1' } });
      const baseline = kib('VmRSS');
      for (const code of ["const a = []; while (true) a.push('y'.repeat(1e6))", 'const a = []; while (true) a.push({ x: a.length })', "return 'y'.repeat(2 ** 29).length"]) {
        const r = await client.callTool({ name: 'execute', arguments: { code } });
        expect(text(r)).toContain('memory bound');
      }
      // the sandbox's memory bound (64 MiB) plus a worker thread's own heap, with room to spare
      expect(kib('VmHWM') - baseline).toBeLessThan(256 * 1024);
    } finally {
      proc.kill();
    }
  });
});

describe('hostile code', () => {
  let client: AnyClient;
  let stderr: () => string;
  beforeAll(async () => {
    ({ client, stderr } = await stdioClient('modern', 'alice', { GITHUB_CODE_MAX_CONSOLE_BYTES: '4096' }));
  });

  for (const c of HOSTILE.cases) {
    it(`${c.name}: ${c.expect}`, async () => {
      requests.length = 0;
      const result = await client.callTool({ name: 'execute', arguments: { code: c.code } }, undefined, { timeout: 30_000 });
      const t = text(result);
      expect(t).not.toContain(SECRET);
      expect(t).toMatch(new RegExp(c.expect));
      // the server keeps serving
      const next = await client.callTool({ name: 'execute', arguments: { code: 'return 6 * 7' } });
      expect(text(next).split('\n', 1)[0]).toBe('42');
      expect(requests.some((r) => r.method === 'DELETE')).toBe(false);
    }, 60_000);
  }

  it('left no secret in the log or the audit trail', () => {
    expect(stderr()).not.toContain(SECRET);
    expect(readFileSync(path.join(work, 'audit.jsonl'), 'utf8')).not.toContain(SECRET);
  });
});

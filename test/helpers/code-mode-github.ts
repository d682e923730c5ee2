/**
 * The GitHub code-mode server the code-mode e2e tests share (one build per test file): the corpus'
 * GitHub with `discovery: code` (preset `ci` lists its tools), output schemas up to 64 KB kept (so
 * list results are typed and come back wrapped for code to unwrap), an audit trail and an access
 * rule denying `pulls_list-reviews` to client bob, compiled with mcpgen's tsc, and a recording
 * backend on 127.0.0.1: o/r has PRs #1–#3 (#2 reviewed), o/big 40 PRs, o/slow never answers, o/held
 * answers `[]` when the test calls `releaseHeld()`.
 */

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { main } from '../../src/cli/main.js';
import type { JsonReport } from '../../src/cli/report.js';
import type { AnyClient } from './eras.js';
import { connectClient } from './eras.js';
import { ROOT, run } from './project.js';

/** The secret state key the server runs with: no answer, log or audit line may hold it. */
export const SECRET = 'state-key-0123456789abcdef0123456789abcdef-secret';

/** The PRs of o/r: #1 and #3 have no review, #2 has one. */
const PULLS = [1, 2, 3].map((n) => ({ number: n, title: `PR ${n}`, state: 'open', body: 'x'.repeat(2000), user: { login: `u${n}` } }));

/** A built GitHub code-mode server and its backend. */
export type CodeModeGithub = {
  readonly work: string;
  readonly server: string;
  readonly env: Record<string, string>;
  readonly report: JsonReport;
  /** Requests the backend got (clear it per test). */
  readonly requests: Array<{ method: string; url: string }>;
  /** Requests to o/slow whose connection the server closed. */
  readonly closed: string[];
  /** How many requests to o/held wait for `releaseHeld()`. */
  held(): number;
  /** Answers every request to o/held waiting now with `[]`. */
  releaseHeld(): void;
  /** The audit trail's events. */
  audit(): Array<Record<string, unknown>>;
  /** A stdio client of `era` as `client`, closed by `close()`. */
  stdioClient(era: 'legacy' | 'modern', client?: string, extra?: Record<string, string>): Promise<{ client: AnyClient; stderr: () => string }>;
  close(): Promise<void>;
};

/** Builds (into .cache/<name>) and starts what the tests need. */
export async function codeModeGithub(name: string): Promise<CodeModeGithub> {
  const work = path.join(ROOT, '.cache', name);
  const server = path.join(work, 'server');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const manifest = readFileSync(path.join(ROOT, 'test/fixtures/github/mcpgen.yaml'), 'utf8').replace(
    'openapi: ../../../.corpus/github-rest.json',
    `openapi: ${JSON.stringify(path.join(ROOT, '.corpus/github-rest.json'))}`,
  );
  writeFileSync(
    path.join(work, 'mcpgen.yaml'),
    `${manifest}outputSchemaMaxBytes: 65536\ndiscovery:\n  mode: code\n  presets: { ci: list }\npolicy:\n  audit:\n    file: audit.jsonl\n  access:\n    default: allow\n    rules:\n      - clients: [bob]\n        deny: { names: ['pulls_list-reviews'] }\n`,
  );
  let out = '';
  const io = { stdout: (s: string) => void (out += s), stderr: (s: string) => void process.stderr.write(s), cwd: work };
  if ((await main(['build', 'mcpgen.yaml', '--format', 'json', '--report'], io)) !== 0) throw new Error('the GitHub code-mode build failed');
  const report = JSON.parse(out) as JsonReport;
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', server], { maxBuffer: 64 * 1024 * 1024 }).catch(
    (e: { stdout?: string }) => {
      throw new Error(`the generated project does not compile:\n${e.stdout ?? String(e)}`);
    },
  );
  const requests: Array<{ method: string; url: string }> = [];
  const closed: string[] = [];
  const held: http.ServerResponse[] = [];
  const backend = http.createServer((req, res) => {
    requests.push({ method: req.method!, url: req.url! });
    const url = new URL(req.url!, 'http://x');
    const reviews = /^\/repos\/o\/r\/pulls\/(\d+)\/reviews$/.exec(url.pathname);
    let body: unknown = { message: 'Not Found' };
    let status = 404;
    if (req.method === 'GET' && url.pathname === '/repos/o/r/pulls') [status, body] = [200, PULLS];
    else if (req.method === 'GET' && reviews)
      [status, body] =
        Number(reviews[1]) === 404
          ? [404, { message: 'Not Found', documentation_url: 'https://docs' }]
          : [200, Number(reviews[1]) === 2 ? [{ id: 9, state: 'APPROVED' }] : []];
    else if (req.method === 'GET' && url.pathname === '/repos/o/big/pulls')
      [status, body] = [200, Array.from({ length: 40 }, (_, i) => ({ number: i + 1, title: `PR ${i + 1}`, body: 'b'.repeat(900) }))];
    else if (url.pathname === '/repos/o/held/pulls') return void held.push(res);
    else if (url.pathname === '/repos/o/slow/pulls') {
      // never answers: the test sees whether the server gives up the request (its socket closes)
      res.on('close', () => closed.push(req.url!));
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const env = {
    GITHUB_BASE_URL: `http://127.0.0.1:${(backend.address() as { port: number }).port}`,
    GITHUB_REFLECTION_DIR: path.join(work, 'store'),
    GITHUB_AUDIT_FILE: path.join(work, 'audit.jsonl'),
    GITHUB_STATE_KEY: SECRET,
    GITHUB_CODE_TIMEOUT_MS: '3000',
  };
  const clients: AnyClient[] = [];
  return {
    work,
    server,
    env,
    report,
    requests,
    closed,
    held: () => held.length,
    releaseHeld: () => {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    },
    audit: () =>
      readFileSync(path.join(work, 'audit.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    async stdioClient(era, client = 'alice', extra = {}) {
      const c = await connectClient({ kind: 'stdio', server, env: { ...env, GITHUB_CLIENT: client, ...extra } }, era);
      clients.push(c.client);
      return c;
    },
    async close() {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
      backend.close();
    },
  };
}

/** The text of a result's blocks. */
export const text = (r: unknown): string => ((r as { content: Array<{ type: string; text?: string }> }).content ?? []).map((c) => c.text ?? '').join('\n');

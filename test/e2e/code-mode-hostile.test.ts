/**
 * Hostile code against the GitHub code-mode server (test/helpers/code-mode-github.ts): the suite of
 * test/fixtures/code-mode/hostile.json, each case refused or bounded and followed by a working
 * call, no secret in any answer, log or audit line; cancellation (a client's cancel in both eras —
 * the 2026-07-28 client's over stdio and over HTTP too —, a session's end, SIGTERM's drain) stops
 * the code and its API calls in flight; a loop holds up only its own
 * run; concurrent runs see only their own globals; memory bombs leave the process's peak RSS bounded.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CodeModeGithub } from '../helpers/code-mode-github.js';
import { codeModeGithub, SECRET, text } from '../helpers/code-mode-github.js';
import type { AnyClient } from '../helpers/eras.js';
import { callToolWith, connectClient, startHttp } from '../helpers/eras.js';
import { ROOT } from '../helpers/project.js';

const WORK = 'code-mode-hostile';
const HOSTILE = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/code-mode/hostile.json'), 'utf8')) as {
  cases: Array<{ name: string; code: string; expect: string }>;
};

let gh: CodeModeGithub;
const clients: AnyClient[] = [];
const stdioClient = (...a: Parameters<CodeModeGithub['stdioClient']>) => gh.stdioClient(...a);
const audit = () => gh.audit();

beforeAll(async () => {
  gh = await codeModeGithub(WORK);
}, 600_000);

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await gh?.close();
});

describe('cancellation, isolation and memory', () => {
  it('a client that cancels an execute stops its code and its API call in flight; the server keeps serving (legacy era: notifications/cancelled)', async () => {
    const { client } = await stdioClient('legacy');
    gh.closed.length = 0;
    gh.requests.length = 0;
    const controller = new AbortController();
    const pending = client.callTool({ name: 'execute', arguments: { code: `await api.pulls_list({ owner: 'o', repo: 'slow' }); return 'never'` } }, undefined, {
      signal: controller.signal,
    });
    const settled = pending.then(
      () => 'resolved',
      () => 'rejected',
    );
    while (!gh.requests.some((r) => r.url.startsWith('/repos/o/slow/pulls'))) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    expect(await settled).toBe('rejected');
    while (gh.closed.length === 0) await new Promise((r) => setTimeout(r, 20));
    expect(gh.closed[0]).toMatch(/^\/repos\/o\/slow\/pulls/);
    const next = await client.callTool({ name: 'execute', arguments: { code: 'return 1' } });
    expect(text(next).split('\n', 1)[0]).toBe('1');
  });

  // the 2026-07-28 client (@modelcontextprotocol/client 2.4.0, Protocol.request's cancel): over
  // stdio it sends notifications/cancelled; over Streamable HTTP it aborts the request's own POST
  // stream (hasPerRequestStream), the era's cancellation signal
  for (const transport of ['stdio', 'http'] as const) {
    it(`a 2026-07-28 client that cancels an execute (${transport}) stops its code and its API call in flight; the server keeps serving`, async () => {
      // a wall time of ten minutes: only the cancel can end this run before the test's timeout
      const long = { GITHUB_CODE_TIMEOUT_MS: '600000' };
      const proc = transport === 'http' ? await startHttp(gh.server, { ...gh.env, ...long }) : undefined;
      try {
        const client = proc ? (await connectClient({ kind: 'http', url: proc.url }, 'modern')).client : (await stdioClient('modern', 'alice', long)).client;
        clients.push(client);
        gh.closed.length = 0;
        gh.requests.length = 0;
        const controller = new AbortController();
        // (the 2.x client's callTool takes its request options second)
        const call = (client as unknown as { callTool(params: unknown, options: { signal: AbortSignal }): Promise<unknown> }).callTool(
          { name: 'execute', arguments: { code: `await api.pulls_list({ owner: 'o', repo: 'slow' }); return 'never'` } },
          { signal: controller.signal },
        );
        const settled = call.then(
          () => 'resolved',
          () => 'rejected',
        );
        while (!gh.requests.some((r) => r.url.startsWith('/repos/o/slow/pulls'))) await new Promise((r) => setTimeout(r, 20));
        controller.abort();
        expect(await settled).toBe('rejected');
        // the server gave up the backend request: only a cancel reaching it does (the backend never answers)
        while (gh.closed.length === 0) await new Promise((r) => setTimeout(r, 20));
        expect(gh.closed[0]).toMatch(/^\/repos\/o\/slow\/pulls/);
        // and the run ended as cancelled
        while (
          !audit().some(
            (l) =>
              l.event === 'tool.failed' &&
              l.primitive === 'execute' &&
              l.era === 'modern' &&
              Date.parse(String(l.time)) > Date.now() - 20_000 &&
              JSON.stringify(l).includes('cancelled'),
          )
        )
          await new Promise((r) => setTimeout(r, 20));
        const next = await client.callTool({ name: 'execute', arguments: { code: 'return 1' } });
        expect(text(next).split('\n', 1)[0]).toBe('1');
      } finally {
        proc?.kill();
      }
    });
  }

  it('a legacy HTTP session that ends stops its execute and the API call in flight', async () => {
    const proc = await startHttp(gh.server, gh.env);
    try {
      gh.closed.length = 0;
      gh.requests.length = 0;
      const { client } = await connectClient({ kind: 'http', url: proc.url }, 'legacy');
      const pending = client
        .callTool({ name: 'execute', arguments: { code: `await api.pulls_list({ owner: 'o', repo: 'slow' }); return 'never'` } })
        .catch(() => 'failed');
      while (!gh.requests.some((r) => r.url.startsWith('/repos/o/slow/pulls'))) await new Promise((r) => setTimeout(r, 20));
      // the client ends its session (DELETE), then goes
      await (client as unknown as { transport: { terminateSession(): Promise<void> } }).transport.terminateSession();
      await client.close();
      await pending;
      while (gh.closed.length === 0) await new Promise((r) => setTimeout(r, 20));
      expect(gh.closed[0]).toMatch(/^\/repos\/o\/slow\/pulls/);
    } finally {
      proc.kill();
    }
  });

  it('SIGTERM drains: an execute that would loop for ten minutes is stopped and the process exits', async () => {
    // the wall time is ten minutes and the drain 300 ms: only the drain can end this run before the test's timeout
    const proc = await startHttp(gh.server, { ...gh.env, GITHUB_CODE_TIMEOUT_MS: '600000', GITHUB_DRAIN_MS: '300' });
    const { client } = await connectClient({ kind: 'http', url: proc.url }, 'modern');
    const pending = client.callTool({ name: 'execute', arguments: { code: 'while (true) {}' } }).catch(() => 'failed');
    while (
      !audit().some(
        (l) =>
          l.event === 'tool.invoked' &&
          l.primitive === 'execute' &&
          l.era === 'modern' &&
          (l.arguments as { codeChars?: number }).codeChars === 'while (true) {}'.length &&
          Date.parse(String(l.time)) > Date.now() - 20_000,
      )
    )
      await new Promise((r) => setTimeout(r, 20));
    proc.kill('SIGTERM');
    expect(await proc.exit).not.toBeUndefined();
    await pending;
    await client.close().catch(() => undefined);
  }, 60_000);

  it('code that loops holds up only its own run: another client is served meanwhile', async () => {
    const a = await stdioClient('modern');
    const order: string[] = [];
    const loop = a.client
      .callTool({ name: 'execute', arguments: { code: 'while (true) {}' } })
      .then((r) => void order.push(`loop: ${text(r).split('\n', 1)[0]}`));
    // the loop has started when its execute is in the audit trail
    while (
      !audit().some(
        (l) => l.event === 'tool.invoked' && l.primitive === 'execute' && (l.arguments as { codeChars?: number }).codeChars === 'while (true) {}'.length,
      )
    )
      await new Promise((r) => setTimeout(r, 20));
    const quick = await a.client.callTool({ name: 'execute', arguments: { code: 'return 2' } });
    order.push(`quick: ${text(quick).split('\n', 1)[0]}`);
    await loop;
    expect(order[0]).toBe('quick: 2');
    expect(order[1]).toMatch(/^loop: Stopped by the wall time bound/);
  });

  it("a run never waits behind a loop on a shared thread: with two loops of alice under way, bob's run is answered first (HTTP)", async () => {
    const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-0123456789' };
    const proc = await startHttp(gh.server, {
      ...gh.env,
      GITHUB_HTTP_TOKENS: Object.entries(tokens)
        .map(([n, t]) => `${n}=${t}`)
        .join(','),
    });
    try {
      const connect = async (token: string) => {
        const { client } = await connectClient({ kind: 'http', url: proc.url, headers: { authorization: `Bearer ${token}` } }, 'modern');
        clients.push(client);
        return client;
      };
      const [alice, bob] = [await connect(tokens.alice), await connect(tokens.bob)];
      const order: string[] = [];
      // each loop's code has a length of its own, so its audit record tells that it has started
      const loops = [71, 72].map((n) => {
        const code = `while (true) {}${' '.repeat(n - 15)}`;
        return { n, done: alice.callTool({ name: 'execute', arguments: { code } }).then((r) => void order.push(`loop: ${text(r).split('\n', 1)[0]}`)) };
      });
      for (const { n } of loops)
        while (
          !audit().some(
            (l) =>
              l.event === 'tool.invoked' &&
              l.client === 'alice' &&
              (l.arguments as { codeChars?: number }).codeChars === n &&
              Date.parse(String(l.time)) > Date.now() - 20_000,
          )
        )
          await new Promise((r) => setTimeout(r, 20));
      const quick = await bob.callTool({ name: 'execute', arguments: { code: 'return 3' } });
      order.push(`quick: ${text(quick).split('\n', 1)[0]}`);
      await Promise.all(loops.map((l) => l.done));
      expect(order[0]).toBe('quick: 3');
      expect(order.slice(1)).toEqual([
        expect.stringMatching(/^loop: Stopped by the wall time bound/),
        expect.stringMatching(/^loop: Stopped by the wall time bound/),
      ]);
    } finally {
      proc.kill();
    }
  }, 60_000);

  it('concurrent executes of two clients see only their own globals', async () => {
    const [a, b] = await Promise.all([stdioClient('modern', 'alice'), stdioClient('legacy', 'carol')]);
    const code = (v: string) =>
      `globalThis.mine = ${JSON.stringify(v)}; for (let i = 0; i < 3; i++) await api.pulls_list({ owner: 'o', repo: 'r' }); return [globalThis.mine, typeof globalThis.other]`;
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
    const proc = await startHttp(gh.server, gh.env);
    try {
      const status = () => readFileSync(`/proc/${proc.pid}/status`, 'utf8');
      const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status())![1]);
      const { client } = await connectClient({ kind: 'http', url: proc.url }, 'modern');
      clients.push(client);
      await client.callTool({ name: 'execute', arguments: { code: 'return 1' } });
      const baseline = kib('VmRSS');
      for (const code of [
        "const a = []; while (true) a.push('y'.repeat(1e6))",
        'const a = []; while (true) a.push({ x: a.length })',
        "return 'y'.repeat(2 ** 29).length",
      ]) {
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

describe('the bound of runs under way', () => {
  // deterministic by construction: the runs admitted end only when the test releases the backend
  // (no wall time ends them: it is 10 minutes here), and each client's refusals are awaited before
  // the next client starts, so no request can arrive after a place was freed
  it("past GITHUB_CODE_MAX_RUNS (4) runs at once, or a client's share of them (2), an execute is refused at once naming the bound; peak RSS stays within 4 sandboxes; the server keeps serving", async () => {
    const tokens = { alice: 'alice-token-0123456789', bob: 'bob-token-0123456789', carol: 'carol-token-0123456789' };
    const proc = await startHttp(gh.server, {
      ...gh.env,
      GITHUB_CODE_TIMEOUT_MS: '600000',
      GITHUB_HTTP_TOKENS: Object.entries(tokens)
        .map(([n, t]) => `${n}=${t}`)
        .join(','),
    });
    try {
      const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))![1]);
      const connect = async (token: string) => {
        const { client } = await connectClient({ kind: 'http', url: proc.url, headers: { authorization: `Bearer ${token}` } }, 'modern');
        clients.push(client);
        return client;
      };
      const [alice, bob, carol] = [await connect(tokens.alice), await connect(tokens.bob), await connect(tokens.carol)];
      await alice.callTool({ name: 'execute', arguments: { code: 'return 1' } });
      const baseline = kib('VmRSS');
      // each run fills ~40 MB of its sandbox, then waits on a backend call held until the test releases it
      const fill = `const a = []; for (let i = 0; i < 40; i++) a.push('y'.repeat(1e6) + i); await api.pulls_list({ owner: 'o', repo: 'held' }); return a.length`;
      const start = (client: AnyClient, n: number) => {
        const answered: string[] = [];
        const all = Promise.all(
          Array.from({ length: n }, () =>
            callToolWith(client, { name: 'execute', arguments: { code: fill } }, { timeout: 60_000 })
              .then(text)
              .then((t) => (answered.push(t), t)),
          ),
        );
        return { all, answered };
      };
      const until = async (ok: () => boolean) => {
        while (!ok()) await new Promise((r) => setTimeout(r, 20));
      };
      gh.requests.length = 0;
      const a = start(alice, 10);
      await until(() => gh.held() === 2 && a.answered.length === 8);
      const b = start(bob, 10);
      await until(() => gh.held() === 4 && b.answered.length === 8);
      const c = await start(carol, 2).all;
      for (const answers of [a.answered, b.answered]) {
        expect(
          answers.filter((t) => t.includes('Code mode is busy for this client')),
          JSON.stringify(answers),
        ).toHaveLength(8);
        expect(answers[0]).toContain('its share (half, rounded up) of the GITHUB_CODE_MAX_RUNS=4 runs at once');
        expect(answers[0]).toContain('No code ran; no API calls were made');
      }
      for (const t of c) expect(t).toContain('Code mode is busy: 4 execute runs are under way, the bound of GITHUB_CODE_MAX_RUNS=4 runs at once');
      expect(gh.requests.filter((r) => r.url.startsWith('/repos/o/held/pulls'))).toHaveLength(4);
      // 4 sandboxes of at most 64 MiB + 4 MiB each, and room for a second worker thread's own heap
      expect(kib('VmHWM') - baseline).toBeLessThan(4 * 68 * 1024 + 160 * 1024);
      gh.releaseHeld();
      // the two runs of each client that were admitted return once the backend answers
      for (const answers of [await a.all, await b.all])
        expect(answers.filter((t) => !t.includes('Code mode is busy')).map((t) => t.split('\n', 1)[0])).toEqual(['40', '40']);
      // the runs ended, their places are free: every client runs again
      for (const client of [alice, bob, carol])
        expect(text(await client.callTool({ name: 'execute', arguments: { code: 'return 6 * 7' } })).split('\n', 1)[0]).toBe('42');
    } finally {
      gh.releaseHeld();
      proc.kill();
    }
  }, 120_000);
});

describe('hostile code', () => {
  let client: AnyClient;
  let stderr: () => string;
  beforeAll(async () => {
    ({ client, stderr } = await stdioClient('modern', 'alice', { GITHUB_CODE_MAX_CONSOLE_BYTES: '4096' }));
  });

  for (const c of HOSTILE.cases) {
    it(`${c.name}: ${c.expect}`, async () => {
      gh.requests.length = 0;
      // a generous bound for a slow or loaded machine; the runs' own bounds end each case within seconds
      const result = await callToolWith(client, { name: 'execute', arguments: { code: c.code } }, { timeout: 60_000 });
      const t = text(result);
      expect(t).not.toContain(SECRET);
      expect(t).toMatch(new RegExp(c.expect));
      // the server keeps serving
      const next = await client.callTool({ name: 'execute', arguments: { code: 'return 6 * 7' } });
      expect(text(next).split('\n', 1)[0]).toBe('42');
      expect(gh.requests.some((r) => r.method === 'DELETE')).toBe(false);
    }, 60_000);
  }

  it('left no secret in the log or the audit trail', () => {
    expect(stderr()).not.toContain(SECRET);
    expect(readFileSync(path.join(gh.work, 'audit.jsonl'), 'utf8')).not.toContain(SECRET);
  });
});

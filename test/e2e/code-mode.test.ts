/**
 * Code mode on GitHub's REST API (1,223 operations; the server of test/helpers/code-mode-github.ts):
 * the code tools in under 1,000 o200k tokens, per preset, signatures, and one `execute` that lists
 * the open pull requests, fetches each one's reviews and returns those with none — the backend saw
 * exactly those requests, the answer is small, the audit trail nests each API call under the
 * execute call, and bob's run fails naming the access rule; the whole result for code, bounds
 * settings, errors the code can catch, both eras over stdio and HTTP.
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { Project } from 'ts-morph';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { CodeModeGithub } from '../helpers/code-mode-github.js';
import { codeModeGithub, SECRET, text } from '../helpers/code-mode-github.js';
import type { AnyClient } from '../helpers/eras.js';
import { connectClient, ERAS, startHttp } from '../helpers/eras.js';

const WORK = 'code-mode-github';

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

describe('code mode on GitHub', () => {
  it('lists search_tools, describe_tool, execute (and the persist tool) in under 1,000 o200k tokens, and build --report says so', async () => {
    const { client } = await stdioClient('modern');
    const list = await client.listTools();
    expect(list.tools.map((t) => t.name)).toEqual(['search_tools', 'describe_tool', 'execute', 'persist_justification']);
    const tokens = encode(JSON.stringify(list)).length;
    expect(tokens).toBeLessThanOrEqual(1000);
    expect(gh.report.summary!.discovery).toBe('code');
    expect(gh.report.summary!.codeListTokens).toBeLessThanOrEqual(1000);
    // the project ships the sandbox's dependencies and documents code mode and its bounds
    const pkg = JSON.parse(readFileSync(path.join(gh.server, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies).toMatchObject({ 'quickjs-emscripten': '0.32.0', sucrase: '3.35.1' });
    const readme = readFileSync(path.join(gh.server, 'README.md'), 'utf8');
    expect(readme).toContain('## Code mode');
    expect(readme).toContain('| API calls | `GITHUB_CODE_MAX_CALLS` | 50 |');
    expect(readme).toMatch(/\| Runs under way at once in the server .*\| `GITHUB_CODE_MAX_RUNS` \| 4 \|/);
  });

  it("per preset: a preset in list mode lists its tools; code reaches only what the request's preset shows", async () => {
    const { client } = await stdioClient('modern');
    const meta = (preset: string) => ({ _meta: { 'io.mcpgen/concernPreset': preset } });
    const ci = await client.listTools(meta('ci'));
    expect(ci.tools.length).toBe(gh.report.summary!.presets.find((p) => p.name === 'ci')!.tools);
    expect(ci.tools.some((t) => t.name === 'execute')).toBe(false);
    const review = await client.listTools(meta('code-review'));
    expect(review.tools.map((t) => t.name)).toContain('execute');
    gh.requests.length = 0;
    // code-review shows the pulls area only: an issues operation is out of its reach, a pulls one in it
    const out = await client.callTool({
      name: 'execute',
      arguments: { code: `return await api.issues_list_for_repo({ owner: 'o', repo: 'r' })` },
      ...meta('code-review'),
    });
    expect(out.isError).toBe(true);
    expect(text(out)).toContain('issues_list-for-repo was refused: issues_list-for-repo is not reachable by this client');
    const inside = await client.callTool({
      name: 'execute',
      arguments: { code: `return (await api.pulls_list({ owner: 'o', repo: 'r' })).length` },
      ...meta('code-review'),
    });
    expect(text(inside).split('\n', 1)[0]).toBe('3');
    expect(gh.requests.map((r) => r.url)).toEqual(['/repos/o/r/pulls']);
  });

  it('search_tools and describe_tool give TypeScript signatures', async () => {
    const { client } = await stdioClient('modern');
    const found = text(await client.callTool({ name: 'search_tools', arguments: { query: 'list reviews of a pull request' } }));
    expect(found).toContain('api.pulls_list_reviews(args: { owner: string; repo: string; pull_number: number');
    const described = text(await client.callTool({ name: 'describe_tool', arguments: { name: 'pulls_list' } }));
    expect(described).toContain('api.pulls_list(args: { owner: string; repo: string; state?: "open" | "closed" | "all"');
    // the result type is the body's (a list of pull requests), not the {status, data} wrapper
    expect(described).toMatch(
      /\): Promise<\(?Array<\{ id\?: number \| null; number\?: number \| null; state\?: string \| null; locked\?: boolean \| null; title\?: string \| null;/,
    );
    // without the keys compaction drops (url, *_url, node_id), which the code never receives
    expect(described).not.toMatch(/html_url|node_id/);
    // every one of GitHub's 1,223 signatures is a valid declaration
    const { codeSignatures } = (await import(pathToFileURL(path.join(gh.server, 'dist/code-signatures.gen.js')).href)) as {
      codeSignatures: Record<string, string>;
    };
    const all = Object.values(codeSignatures);
    expect(all).toHaveLength(1223);
    const file = new Project({ useInMemoryFileSystem: true }).createSourceFile(
      'all.ts',
      all.map((sig, i) => `declare function f${i}${sig.slice(sig.indexOf('('))};`).join('\n'),
    );
    expect(
      file
        .getPreEmitDiagnostics()
        .filter((d) => d.getCode() < 2000)
        .map((d) => String(d.getMessageText())),
    ).toEqual([]);
  });

  for (const era of ERAS) {
    it(`one execute finds the open PRs without a review (${era}, stdio): exact requests, a small answer, nested audit`, async () => {
      const { client, stderr } = await stdioClient(era);
      gh.requests.length = 0;
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
      expect(gh.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
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
    gh.requests.length = 0;
    const result = await client.callTool({ name: 'execute', arguments: { code: TASK } });
    expect(result.isError).toBe(true);
    const t = text(result);
    expect(t).toContain('pulls_list-reviews was refused');
    expect(t).toContain('policy.access.rules[0]');
    expect(t).toContain('2 API calls were made: pulls_list 200, pulls_list-reviews refused');
    expect(gh.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /repos/o/r/pulls?state=open']);
    expect(
      audit().some((l) => l.event === 'tool.denied' && l.primitive === 'pulls_list-reviews' && l.client === 'bob' && typeof l.parentCallId === 'string'),
    ).toBe(true);
  });

  it("code gets an operation's whole result, not one cut to the model's token budget; execute's own answer is budgeted", async () => {
    const { client } = await stdioClient('modern');
    // 40 PRs of ~1 KB: ~40 KB of JSON, over the results budget of 8,000 tokens a direct call is cut to
    const direct = text(await client.callTool({ name: 'pulls_list', arguments: { owner: 'o', repo: 'big' } }));
    expect(direct).toMatch(/kept \d+ of 40|\d+ of 40/);
    const counted = await client.callTool({
      name: 'execute',
      arguments: { code: `const p = await api.pulls_list({ owner: 'o', repo: 'big' }); return p.length` },
    });
    expect(text(counted).split('\n', 1)[0]).toBe('40');
    const whole = text(await client.callTool({ name: 'execute', arguments: { code: `return await api.pulls_list({ owner: 'o', repo: 'big' })` } }));
    expect(whole).toMatch(/The returned list was cut to \d+ of 40 items to fit the results budget of 8000 tokens/);
  });

  it('an invalid bound setting fails execute naming the variable; the server still starts and serves', async () => {
    const { client } = await stdioClient('modern', 'alice', { GITHUB_CODE_MAX_CALLS: 'many' });
    const r = await client.callTool({ name: 'execute', arguments: { code: 'return 1' } });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('GITHUB_CODE_MAX_CALLS must be a positive whole number of calls (got "many")');
    expect((await client.listTools()).tools.length).toBe(4);
  });

  it('an API call from code whose arguments are over GITHUB_MAX_ARGUMENT_BYTES is refused as a direct call is, with an error the code can catch; nothing reaches the API', async () => {
    const { client } = await stdioClient('modern', 'alice', { GITHUB_MAX_ARGUMENT_BYTES: '4096' });
    gh.requests.length = 0;
    const code = `try { await api.pulls_list({ owner: 'x'.repeat(10000), repo: 'r' }); return 'sent'; } catch (e) { return e.message; }`;
    const caught = text(await client.callTool({ name: 'execute', arguments: { code } })).split('\n', 1)[0]!;
    expect(JSON.parse(caught)).toBe(
      'pulls_list was refused: Invalid arguments for tool pulls_list: they take more than 4096 bytes as JSON (the limit, GITHUB_MAX_ARGUMENT_BYTES); nothing was run',
    );
    expect(gh.requests).toEqual([]);
    // under the bound, the same call goes through
    expect(
      text(await client.callTool({ name: 'execute', arguments: { code: `return (await api.pulls_list({ owner: 'o', repo: 'r' })).length` } })).split(
        '\n',
        1,
      )[0],
    ).toBe('3');
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
    const httpServer = await startHttp(gh.server, { ...gh.env, GITHUB_HTTP_TOKENS: 'alice=alice-token-0123456789,bob=bob-token-0123456789' });
    onTestFinished(() => httpServer.kill());
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

/**
 * `build --report`'s results part: per tool with a JSON response example in the spec, the o200k
 * tokens of its largest example as documented and compacted with the tool's settings, and the
 * tools whose compacted example alone is over their `maxTokens` — every tool in `--format json`,
 * the ten largest in the text. Nothing is counted without `--report`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { formatResultsReport, type JsonReport } from '../../src/cli/report.js';
import { compile } from '../../src/compile.js';
import { compactJson } from '../../src/ir/tools/results.js';
import { resolveResults } from '../../src/manifest/load.js';
import type { ResultsSummary } from '../../src/summary.js';

const USER = {
  login: 'octocat',
  id: 1,
  node_id: 'MDQ6VXNlcjE=',
  avatar_url: 'https://github.com/images/error/octocat_happy.gif',
  gravatar_id: '',
  site_admin: false,
};
const ISSUE = (n: number) => ({
  number: n,
  title: `Found a bug ${n}`,
  state: 'open',
  user: USER,
  labels: [],
  assignee: null,
  body: 'I am having a problem with this. '.repeat(20),
  html_url: `https://github.com/octocat/Hello-World/issues/${n}`,
  created_at: '2011-04-22T13:33:48Z',
});
const SMALL = [ISSUE(1)];
const BIG = Array.from({ length: 25 }, (_, i) => ISSUE(i));
const REPO = { id: 1296269, name: 'Hello-World', owner: USER, html_url: 'https://github.com/octocat/Hello-World', description: null, topics: [] };

const SPEC = {
  openapi: '3.0.3',
  info: { title: 't', version: '1' },
  servers: [{ url: 'https://api.example.com' }],
  paths: {
    '/issues': {
      get: {
        operationId: 'listIssues',
        // two examples: the report shows the larger one
        responses: {
          '200': {
            description: 'ok',
            content: {
              'application/json': {
                schema: { type: 'array', items: { type: 'object' } },
                examples: { small: { value: SMALL }, big: { $ref: '#/components/examples/big' } },
              },
            },
          },
        },
      },
    },
    '/repo': {
      get: {
        operationId: 'getRepo',
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' }, example: REPO } } } },
      },
    },
    '/search': {
      get: {
        operationId: 'searchIssues',
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { type: 'array' }, examples: { big: { $ref: '#/components/examples/big' } } } },
          },
        },
      },
    },
    '/ping': { get: { operationId: 'ping', responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } } } },
  },
  components: { examples: { big: { value: BIG } } },
};

function project(manifest: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-result-report-'));
  writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(SPEC));
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: report\nopenapi: ./openapi.json\noutput: ./server\n${manifest}`);
  return dir;
}

const compacted = (v: unknown, omit = resolveResults(undefined).omit) => countTokens(JSON.stringify(compactJson(v, { omit, maxStringChars: 1000 })));
const raw = (v: unknown) => countTokens(JSON.stringify(v));

async function build(dir: string, ...flags: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await main(['build', 'mcpgen.yaml', ...flags], { stdout: (s) => void (out += s), stderr: () => undefined, cwd: dir });
  return { code, out };
}

describe('build --report: result examples', () => {
  const MANIFEST = 'overrides:\n  searchIssues: { results: { maxTokens: 1000, omit: [] } }\n';

  it('counts each tool’s largest example as documented and compacted with its own settings; JSON has every tool, in tool order', async () => {
    const { code, out } = await build(project(MANIFEST), '--report', '--format', 'json');
    expect(code).toBe(0);
    const results = (JSON.parse(out) as JsonReport).summary!.results!;
    expect(results).toStrictEqual({
      withExamples: 3,
      overBudget: ['searchIssues'],
      tools: [
        { name: 'listIssues', examples: 2, rawTokens: raw(BIG), tokens: compacted(BIG), maxTokens: 8000 },
        { name: 'getRepo', examples: 1, rawTokens: raw(REPO), tokens: compacted(REPO), maxTokens: 8000 },
        // the tool's own omit list: nothing of the links is dropped
        { name: 'searchIssues', examples: 1, rawTokens: raw(BIG), tokens: compacted(BIG, []), maxTokens: 1000 },
      ],
    });
    expect(compacted(BIG)).toBeLessThan(raw(BIG));
    expect(compacted(BIG, [])).toBeGreaterThan(1000);
  });

  it('prints the largest once compacted and the tools over budget in the text', async () => {
    const { out } = await build(project(MANIFEST), '--report');
    const n = (x: number) => x.toLocaleString('en-US');
    expect(out).toContain(
      'Result examples: 3 tools have a JSON response example in the spec; o200k tokens of the largest, as documented → compacted:\n' +
        `    searchIssues ${n(raw(BIG))} → ${n(compacted(BIG, []))} (over maxTokens 1,000)\n` +
        `    listIssues ${n(raw(BIG))} → ${n(compacted(BIG))}\n` +
        `    getRepo ${n(raw(REPO))} → ${n(compacted(REPO))}\n` +
        "  1 tool's compacted example is over its maxTokens on its own: its results will be cut (searchIssues).\n",
    );
  });

  it('counts nothing without --report', async () => {
    const { out } = await build(project(MANIFEST), '--format', 'json');
    expect((JSON.parse(out) as JsonReport).summary).not.toHaveProperty('results');
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: project(MANIFEST), emit: false });
    expect(res.ir!.resultExamples).toBeUndefined();
  });

  it('says when no tool has an example, and shows ten of many', () => {
    expect(formatResultsReport({ withExamples: 0, overBudget: [], tools: [] })).toBe('Result examples: no tool has a JSON response example in the spec.\n');
    const tools = Array.from({ length: 14 }, (_, i) => ({
      name: `t${String(i).padStart(2, '0')}`,
      examples: 1,
      rawTokens: 20_000 + i,
      tokens: 10_000 + i,
      maxTokens: 8000,
    }));
    const r: ResultsSummary = { withExamples: 14, overBudget: tools.map((t) => t.name), tools };
    const lines = formatResultsReport(r).trimEnd().split('\n');
    expect(lines).toHaveLength(12);
    expect(lines[1]).toBe('    t13 20,013 → 10,013 (over maxTokens 8,000)');
    expect(lines[11]).toBe(
      "  14 tools' compacted examples are over their maxTokens on their own: their results will be cut (t00, t01, t02, t03, t04, t05, t06, t07, t08, t09 and 4 more).",
    );
  });
});

/**
 * Results that fit, end to end on the corpus' GitHub description: a generated server (five list
 * tools, `results.projection: true`, every other results setting at its default) against a local
 * backend that answers real-shaped pages — 30 items built from the spec's own examples, with a
 * `Link` header as GitHub sends — driven by the SDK `Client` over stdio. Each result, its text and
 * its `structuredContent` alike, is under the 8,000-token budget counted with the o200k tokenizer;
 * every item shown keeps its number/id, title/name, state, user.login and created_at; the note
 * says how many items there are and gives the exact arguments of the next call; a projection
 * returns what it selects, and a bad expression is an `isError` before anything is sent. Then the
 * same tools against Prism's dynamic responses (generated from the schemas) stay within the budget.
 */

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusSpec } from '../helpers/corpus.js';
import { buildServer, type Connected, connect } from '../helpers/generated-server.js';
import { startPrism } from '../helpers/prism.js';

const OPERATIONS = ['pulls/list', 'issues/list-for-repo', 'repos/list-for-org', 'search/issues-and-pull-requests', 'actions/list-workflow-runs-for-repo'];
const BUDGET = 8000;

type Spec = { paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>>; [k: string]: unknown };
const spec = JSON.parse(readFileSync(corpusSpec('github-rest.json'), 'utf8')) as Spec;

/** Follows local $refs. */
function resolve(value: unknown): unknown {
  let cur = value as { $ref?: string } | undefined;
  for (let i = 0; i < 10 && cur?.$ref !== undefined; i++)
    cur = cur.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((a, k) => (a as Record<string, unknown>)?.[k], spec) as { $ref?: string };
  return cur;
}

/** The spec's first example of the operation's 200 response, and its path template. */
function example(operationId: string): { path: string; value: unknown } {
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const op of Object.values(item)) {
      if (op?.operationId !== operationId) continue;
      const response = resolve(op.responses?.['200']) as { content: Record<string, { examples: Record<string, unknown> }> };
      const first = Object.values(response.content['application/json']!.examples)[0];
      return { path, value: (resolve(first) as { value: unknown }).value };
    }
  }
  throw new Error(`no operation ${operationId}`);
}

/** A page of 30 items made from an example item: numbers and ids differ, the rest is the example's. */
function page(item: unknown): unknown[] {
  return Array.from({ length: 30 }, (_, i) => {
    const copy = structuredClone(item) as Record<string, unknown>;
    if (typeof copy.number === 'number') copy.number = 1000 + i;
    if (typeof copy.id === 'number') copy.id = 5000 + i;
    if (typeof copy.title === 'string') copy.title = `${copy.title} #${i}`;
    return copy;
  });
}

/** Path template → regular expression. */
const matcher = (template: string) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);

const bodies = OPERATIONS.map((id) => {
  const { path, value } = example(id);
  const body = Array.isArray(value)
    ? page(value[0])
    : Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, Array.isArray(v) ? page(v[0]) : k === 'total_count' ? 4242 : v]));
  return { id, re: matcher(path), body };
});

let backend: http.Server;
let server: Connected;
let project = '';
const requests: string[] = [];

beforeAll(async () => {
  backend = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://backend');
    requests.push(`${req.method} ${url.pathname}${url.search}`);
    const hit = bodies.find((b) => b.re.test(url.pathname));
    if (!hit) return void res.writeHead(404).end();
    const next = new URL(url);
    next.searchParams.set('page', String(Number(url.searchParams.get('page') ?? '1') + 1));
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      link: `<${`http://127.0.0.1${next.pathname}${next.search}`}>; rel="next", <http://127.0.0.1${url.pathname}?page=34>; rel="last"`,
    });
    res.end(JSON.stringify(hit.body));
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const manifest = `name: gh-results\nopenapi: ${JSON.stringify(corpusSpec('github-rest.json'))}\noutput: ./server\ninclude:\n  - operationId: ${JSON.stringify(OPERATIONS)}\nresults:\n  projection: true\n`;
  // the manifest names the corpus file itself; the helper's own spec file goes unused
  const built = await buildServer('results-budget', 'openapi: 3.0.3\n', manifest);
  project = built.server;
  server = await connect(built.server, { GH_RESULTS_BASE_URL: `http://127.0.0.1:${(backend.address() as AddressInfo).port}` });
}, 240_000);

afterAll(async () => {
  await server?.close();
  backend?.close();
});

const textOf = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** The next call's arguments: `structuredContent.next`, and the same in the note of the text. */
function nextOf(r: CallToolResult): Record<string, unknown> {
  const inText = /(?:the rest|next page): call \S+ with (\{.*?\})(?:;|\])/.exec(textOf(r))?.[1];
  expect(inText, textOf(r).slice(-400)).toBeDefined();
  const fromText = JSON.parse(inText!) as Record<string, unknown>;
  const structured = (r.structuredContent as { next?: Record<string, unknown> } | undefined)?.next;
  if (r.structuredContent !== undefined) expect(structured).toEqual(fromText);
  return fromText;
}

/** Whether the tool lists an output schema (then every result of it must carry structuredContent). */
async function listsOutputSchema(on: Connected, name: string): Promise<boolean> {
  const { tools } = await on.client.listTools();
  return tools.find((t) => t.name === name)!.outputSchema !== undefined;
}

/** The tool of an operation, by its operationId in the description's name rules. */
async function toolName(operationId: string): Promise<string> {
  const { tools } = await server.client.listTools();
  const found = tools.find((t) => t.name === operationId.replace(/\W+/g, '_') || t.name.replace(/\W+/g, '_') === operationId.replace(/\W+/g, '_'));
  if (!found) throw new Error(`no tool for ${operationId} among ${tools.map((t) => t.name).join(', ')}`);
  return found.name;
}

const ARGS: Record<string, Record<string, unknown>> = {
  'pulls/list': { owner: 'octo', repo: 'hello', state: 'open' },
  'issues/list-for-repo': { owner: 'octo', repo: 'hello' },
  'repos/list-for-org': { org: 'octo' },
  'search/issues-and-pull-requests': { q: 'is:open is:pr' },
  'actions/list-workflow-runs-for-repo': { owner: 'octo', repo: 'hello' },
};

describe('GitHub list results within the budget, with default settings', () => {
  it.each(OPERATIONS)(
    '%s: text and structuredContent under 8,000 o200k tokens, the key fields of every item shown, the count and the next call',
    async (operationId) => {
      const name = await toolName(operationId);
      const raw = bodies.find((b) => b.id === operationId)!.body;
      const rawTokens = countTokens(JSON.stringify(raw));
      expect(rawTokens).toBeGreaterThan(BUDGET);
      const result = (await server.client.callTool({ name, arguments: ARGS[operationId]! })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const text = textOf(result);
      expect(countTokens(text)).toBeLessThanOrEqual(BUDGET);
      // tools whose output schema was dropped for size return the text alone; the others structuredContent too
      expect(result.structuredContent !== undefined).toBe(await listsOutputSchema(server, name));
      if (result.structuredContent !== undefined) expect(countTokens(JSON.stringify(result.structuredContent))).toBeLessThanOrEqual(BUDGET);
      const [json, note] = text.split('\n[results: ');
      const shown = JSON.parse(json!) as unknown;
      const items = (Array.isArray(shown) ? shown : Object.values(shown as Record<string, unknown>).find(Array.isArray)) as Array<Record<string, unknown>>;
      const originals = (Array.isArray(raw) ? raw : Object.values(raw as Record<string, unknown>).find(Array.isArray)) as Array<Record<string, unknown>>;
      expect(items.length).toBeGreaterThan(0);
      items.forEach((item, i) => {
        const original = originals[i]!;
        for (const key of ['number', 'id', 'title', 'name', 'state', 'created_at'])
          if (original[key] !== undefined && original[key] !== null) expect(item[key], `${key} of item ${i}`).toEqual(original[key]);
        const login =
          (original.user as { login?: string } | undefined)?.login ??
          (original.owner as { login?: string } | undefined)?.login ??
          (original.actor as { login?: string } | undefined)?.login;
        if (login !== undefined) expect(JSON.stringify(item)).toContain(`"login":${JSON.stringify(login)}`);
      });
      // how many there are, and the exact next call
      expect(note).toMatch(
        new RegExp(`^${items.length} of 30 items( of "\\w+")? shown, cut to fit 8000 tokens; the rest: call ${name} with \\{.*"page":\\d+,"per_page":\\d+\\}`),
      );
      const next = nextOf(result);
      expect(next).toMatchObject(ARGS[operationId]!);
      expect((Number(next.page) - 1) * Number(next.per_page)).toBe(items.length);
    },
    60_000,
  );

  it('the next call continues exactly after the last item shown', async () => {
    const name = await toolName('pulls/list');
    const first = (await server.client.callTool({ name, arguments: ARGS['pulls/list']! })) as CallToolResult;
    const next = nextOf(first);
    const before = requests.length;
    await server.client.callTool({ name, arguments: next });
    expect(requests.slice(before)).toEqual([expect.stringMatching(new RegExp(`^GET /repos/octo/hello/pulls\\?.*page=${next.page}`))]);
    expect(requests.at(-1)).toContain(`per_page=${next.per_page}`);
  });

  it('fields projection returns what it selects (all 30 items fit), and is never sent to the API', async () => {
    const name = await toolName('pulls/list');
    const before = requests.length;
    const result = (await server.client.callTool({
      name,
      arguments: { ...ARGS['pulls/list']!, fields: '[].{number: number, title: title, user: user.login, state: state}' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const shown = JSON.parse(textOf(result).split('\n[results: ')[0]!) as Array<Record<string, unknown>>;
    expect(shown).toHaveLength(30);
    expect(shown[0]).toEqual({ number: 1000, title: expect.stringMatching(/ #0$/), user: 'octocat', state: 'open' });
    expect(requests.slice(before).join('\n')).not.toMatch(/fields|JMESPath|number/);
    // the whole page fits: the note gives the API's own next page
    expect(nextOf(result)).toMatchObject({ page: 2 });
  });

  it('a bad expression is an isError naming the problem, and nothing is sent', async () => {
    const name = await toolName('pulls/list');
    const before = requests.length;
    const result = (await server.client.callTool({ name, arguments: { ...ARGS['pulls/list']!, fields: '[].{number' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Invalid arguments for tool \S+: fields is not a usable JMESPath expression: Syntax error: .*Nothing was sent\.$/s);
    expect(requests.length).toBe(before);
    const unknown = (await server.client.callTool({ name, arguments: { ...ARGS['pulls/list']!, fields: 'nosuchfunction(@)' } })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/the fields expression failed on the response: Unknown function: nosuchfunction\(\)/);
  });
});

describe("against Prism's dynamic responses", () => {
  it('the five list tools answer within the budget, text and structuredContent, with no error', async () => {
    const prism = await startPrism(corpusSpec('github-rest.json'), { dynamic: true, seed: 'results-budget', startTimeoutMs: 120_000 });
    const mocked = await connect(project, { GH_RESULTS_BASE_URL: prism.url }, 'results-prism');
    try {
      for (const operationId of OPERATIONS) {
        const name = await toolName(operationId);
        const result = (await mocked.client.callTool({ name, arguments: ARGS[operationId]! })) as CallToolResult;
        expect(result.isError, `${operationId}: ${textOf(result).slice(0, 300)}`).toBeFalsy();
        expect(countTokens(textOf(result))).toBeLessThanOrEqual(BUDGET);
        expect(result.structuredContent !== undefined).toBe(await listsOutputSchema(mocked, name));
        if (result.structuredContent !== undefined) expect(countTokens(JSON.stringify(result.structuredContent))).toBeLessThanOrEqual(BUDGET);
      }
    } finally {
      await mocked.close();
      prism.stop();
    }
  }, 180_000);
});

// The "result tokens" rows of `npm run bench`: GitHub's five list tools of
// test/e2e/results-budget.test.ts, each answering a real-shaped page (30 items built from the spec's
// own example, a `Link` header as GitHub sends) from a loopback backend in this process, with the
// e2e's manifest (the five tools, `results.projection: true`, every other results setting default):
//   - raw: o200k tokens of the page as the API sends it (its JSON);
//   - delivered: o200k tokens of the result the generated server returns over stdio (SDK v1
//     `Client`) — its text, and its `structuredContent` (serialised) when the tool has one;
//   - shaping: the run-time cost of `shapeResult` (compaction + budget + note) per call, measured
//     in-process on the same parsed page with the generated project's own compiled runtime
//     (dist/runtime/operation/results.js) and tool definitions, median of many calls after a warm-up;
//   - added: p50 of a tools/call minus p50 of a direct fetch of the same page (bench/runtime.mjs
//     `overhead`), the server-side cost of the whole call that shaping is part of.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { overhead } from './runtime.mjs';

const OPERATIONS = [
  ['pulls/list', { owner: 'octo', repo: 'hello', state: 'open' }],
  ['issues/list-for-repo', { owner: 'octo', repo: 'hello' }],
  ['repos/list-for-org', { org: 'octo' }],
  ['search/issues-and-pull-requests', { q: 'is:open is:pr' }],
  ['actions/list-workflow-runs-for-repo', { owner: 'octo', repo: 'hello' }],
];
/** Wall time spent timing `shapeResult` per tool (after the warm-up), and the fewest calls timed. */
const SHAPE_MS = 1000;
const SHAPE_MIN_CALLS = 30;
const CALLS = Math.max(20, Number(process.env.BENCH_RESULT_CALLS ?? 100));

/** Runs the rows; adds them to `results.results` and prints them with `printTable`. */
export async function benchResults({ root, cacheDir, results, printTable, median }) {
  const specFile = path.join(root, '.corpus/github-rest.json');
  const spec = JSON.parse(readFileSync(specFile, 'utf8'));
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const { ListToolsResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const sdk = { Client, StdioClientTransport, ListToolsResultSchema };

  const pages = OPERATIONS.map(([id, args]) => {
    const { path: template, value } = example(spec, id);
    const body = Array.isArray(value)
      ? page(value[0])
      : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, Array.isArray(v) ? page(v[0]) : k === 'total_count' ? 4242 : v]));
    const json = JSON.stringify(body);
    return {
      id,
      args,
      re: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      urlPath: template.replace(/\{([^}]+)\}/g, (_, name) => encodeURIComponent(String(args[name] ?? name))),
      json,
    };
  });
  const backend = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://backend');
    const hit = pages.find((p) => p.re.test(url.pathname));
    if (!hit) return void res.writeHead(404).end();
    const next = new URL(url);
    next.searchParams.set('page', String(Number(url.searchParams.get('page') ?? '1') + 1));
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      link: `<http://127.0.0.1${next.pathname}${next.search}>; rel="next", <http://127.0.0.1${url.pathname}?page=34>; rel="last"`,
    });
    res.end(hit.json);
  });
  await new Promise((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const backendUrl = `http://127.0.0.1:${backend.address().port}`;

  // the e2e's project, inside the repository so it resolves its dependencies from mcpgen's node_modules
  const dir = path.join(cacheDir, 'result-tokens');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'mcpgen.yaml'),
    `name: gh-results\nopenapi: ${JSON.stringify(specFile)}\noutput: ./server\ninclude:\n  - operationId: ${JSON.stringify(OPERATIONS.map(([id]) => id))}\nresults:\n  projection: true\n`,
  );
  execFileSync(process.execPath, [path.join(root, 'bin/mcpgen.js'), 'build', path.join(dir, 'mcpgen.yaml'), '--quiet'], { cwd: root, stdio: 'pipe' });
  const out = path.join(dir, 'server');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', out], { stdio: 'inherit' });
  const runtime = await import(pathToFileURL(path.join(out, 'dist/runtime/operation/results.js')).href);
  const { tools } = await import(pathToFileURL(path.join(out, 'dist/tools.gen.js')).href);
  const { config } = await import(pathToFileURL(path.join(out, 'dist/config.gen.js')).href);
  const server = { command: [path.join(out, 'dist/server.js')], env: { [`${config.envPrefix}_BASE_URL`]: backendUrl } };

  console.log(
    `\nresult tokens: GitHub's five list tools, 30-item pages built from the spec's examples, default results settings (o200k tokens); shaping = shapeResult per call in-process (median); added = call p50 − direct fetch p50 over stdio (${CALLS} each)\n`,
  );
  const rows = [['tool', 'raw tokens', 'delivered (text / structured)', 'items shown', 'shaping per call', 'call added (p50)']];
  results.results = {};
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: server.command, env: { PATH: process.env.PATH ?? '', ...server.env }, stderr: 'ignore' }),
  );
  try {
    const listed = (await client.request({ method: 'tools/list', params: {} }, ListToolsResultSchema)).tools;
    for (const p of pages) {
      const tool = tools.find((t) => t.name === p.id.replace(/\//g, '_'));
      if (!tool || !listed.some((t) => t.name === tool.name)) throw new Error(`no tool for ${p.id}`);
      const res = await client.callTool({ name: tool.name, arguments: p.args });
      const text = res.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      if (res.isError) throw new Error(`${tool.name}: ${text.slice(0, 300)}`);
      const shown = /\[results: (\d+) of (\d+) items/.exec(text);
      const r = {
        tool: tool.name,
        rawBytes: Buffer.byteLength(p.json),
        rawTokens: countTokens(p.json),
        textTokens: countTokens(text),
        structuredTokens: res.structuredContent !== undefined ? countTokens(JSON.stringify(res.structuredContent)) : null,
        itemsShown: shown ? Number(shown[1]) : 30,
        items: shown ? Number(shown[2]) : 30,
        shapeUs: shapingUs(runtime, tool, config, p, median),
        ...(await overhead(sdk, { ...server, tool: () => tool.name }, p.args, `${backendUrl}${p.urlPath}`, CALLS)),
      };
      r.addedP50Ms = r.p50Ms - r.directP50Ms;
      results.results[p.id] = r;
      const n = (x) => x.toLocaleString('en-US');
      rows.push([
        p.id,
        n(r.rawTokens),
        `${n(r.textTokens)} / ${r.structuredTokens === null ? 'none' : n(r.structuredTokens)}`,
        `${r.itemsShown} of ${r.items}`,
        `${n(Math.round(r.shapeUs))} µs`,
        `${r.addedP50Ms.toFixed(2)} ms`,
      ]);
    }
  } finally {
    await client.close();
    backend.close();
  }
  printTable(rows);
  const all = Object.values(results.results);
  const share = all.map((r) => r.shapeUs / 1000 / r.addedP50Ms);
  console.log(`shaping is ${(100 * Math.min(...share)).toFixed(0)}–${(100 * Math.max(...share)).toFixed(0)}% of the added call time of the same tools/call`);
  const meta = results.runtime?.GitHub?.mcpgen;
  if (meta) console.log(`(the runtime section's call overhead of GitHub's meta_root, a small body: +${(meta.p50Ms - meta.directP50Ms).toFixed(2)} ms at p50)`);
}

/** Median µs of `shapeResult` on the page, parsed once (the server parses each body once too), over at least SHAPE_MS after a warm-up. */
function shapingUs(runtime, tool, config, p, median) {
  const parsed = JSON.parse(p.json);
  const policy = runtime.policyFor(tool, config.results);
  const link = `<http://127.0.0.1${p.urlPath}?page=2>; rel="next"`;
  const once = () => runtime.shapeResult(tool, parsed, policy, p.args, link);
  if (once().note === undefined) throw new Error(`${tool.name}: the page was not shaped`);
  for (let i = 0; i < 10; i++) once();
  const times = [];
  const until = performance.now() + SHAPE_MS;
  while (times.length < SHAPE_MIN_CALLS || performance.now() < until) {
    const t = performance.now();
    once();
    times.push((performance.now() - t) * 1000);
  }
  return median(times);
}

/** Follows local `$ref`s of `spec`. */
function resolve(spec, value) {
  let cur = value;
  for (let i = 0; i < 10 && cur?.$ref !== undefined; i++)
    cur = cur.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((a, k) => a?.[k], spec);
  return cur;
}

/** The spec's first example of the operation's 200 response, and its path template (as the e2e test takes it). */
function example(spec, operationId) {
  for (const [p, item] of Object.entries(spec.paths)) {
    for (const op of Object.values(item)) {
      if (op?.operationId !== operationId) continue;
      const response = resolve(spec, op.responses?.['200']);
      const first = Object.values(response.content['application/json'].examples)[0];
      return { path: p, value: resolve(spec, first).value };
    }
  }
  throw new Error(`no operation ${operationId}`);
}

/** A page of 30 items made from an example item: numbers and ids differ, the rest is the example's. */
function page(item) {
  return Array.from({ length: 30 }, (_, i) => {
    const copy = structuredClone(item);
    if (typeof copy.number === 'number') copy.number = 1000 + i;
    if (typeof copy.id === 'number') copy.id = 5000 + i;
    if (typeof copy.title === 'string') copy.title = `${copy.title} #${i}`;
    return copy;
  });
}

// Code mode's costs (`npm run bench`, section codeMode): GitHub built with `discovery: code`, served
// over stdio against a loopback backend that answers every request with a small JSON list.
//   - the sandbox's start: a QuickJS runtime and context (in an idle bounded WebAssembly instance) running
//     `return 1`, in this process with the generated server's own runtime/code/sandbox.js (p50; goal ≤ 5 ms);
//   - `execute` of `return 1` against a direct tools/call of `pulls_list`, as the client sees them (p50);
//   - the cost of one nested API call: (execute with 20 `api.pulls_list` calls − execute with none) / 20,
//     against a direct tools/call in the same run (goal: at most +1 ms), as a ratio.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Runs the code-mode rows; fills results.codeMode. */
export async function benchCodeMode({ root, cacheDir, results, printTable, median }) {
  const spec = path.join(root, '.corpus/github-rest.json');
  if (!existsSync(spec)) {
    console.log('\n(skipping code mode: .corpus/github-rest.json is missing; `npm run corpus` fetches it)');
    return;
  }
  const dir = path.join(cacheDir, 'code-mode');
  mkdirSync(dir, { recursive: true });
  const manifest = readFileSync(path.join(root, 'test/fixtures/github/mcpgen.yaml'), 'utf8').replace(
    'openapi: ../../../.corpus/github-rest.json',
    `openapi: ${JSON.stringify(spec)}`,
  );
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `${manifest}discovery: code\n`);
  execFileSync(process.execPath, [path.join(root, 'bin/mcpgen.js'), 'build', path.join(dir, 'mcpgen.yaml'), '--quiet'], { cwd: dir, stdio: 'pipe' });
  const server = path.join(dir, 'server');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', server], { stdio: 'inherit' });

  const backend = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify([{ number: 1, title: 'a' }]));
    });
  });
  await new Promise((r) => backend.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${backend.address().port}`;

  // the sandbox alone, in this process
  const { runSandbox } = await import(pathToFileURL(path.join(server, 'dist/runtime/code/sandbox.js')).href);
  const limits = { timeoutMs: 30_000, memoryBytes: 64 << 20, maxCalls: 50, maxOutputBytes: 1 << 18, maxConsoleBytes: 1 << 14 };
  const never = new AbortController().signal;
  const host = async () => ({ ok: true, data: null });
  for (let i = 0; i < 10; i++) await runSandbox('return 1', host, limits, never);
  const starts = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    await runSandbox('return 1', host, limits, never);
    starts.push(performance.now() - t);
  }

  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const client = new Client({ name: 'bench-code', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.join(server, 'dist/server.js')],
      env: { PATH: process.env.PATH ?? '', GITHUB_BASE_URL: base },
      stderr: 'ignore',
    }),
  );
  const direct = () => client.callTool({ name: 'pulls_list', arguments: { owner: 'o', repo: 'r' } });
  const execute = (code) => client.callTool({ name: 'execute', arguments: { code } });
  const loop = `for (let i = 0; i < 20; i++) await api.pulls_list({ owner: 'o', repo: 'r' }); return 1`;
  // pulls_list is not listed in code mode, but a direct call of it still runs (the same pipeline)
  for (let i = 0; i < 10; i++) await Promise.all([direct(), execute('return 1'), execute(loop)].map((p) => p));
  const times = { direct: [], empty: [], loop: [] };
  for (let i = 0; i < 60; i++) {
    // alternate the order each round
    const order = i % 2 ? ['direct', 'empty', 'loop'] : ['loop', 'empty', 'direct'];
    for (const k of order) {
      const t = performance.now();
      const r = await (k === 'direct' ? direct() : execute(k === 'empty' ? 'return 1' : loop));
      if (r.isError) throw new Error(`${k}: ${JSON.stringify(r.content)}`);
      times[k].push(performance.now() - t);
    }
  }
  await client.close();
  backend.close();

  const start = median(starts);
  const d = median(times.direct);
  const e = median(times.empty);
  const perCall = (median(times.loop) - e) / 20;
  results.codeMode = { sandboxStartP50Ms: start, executeP50Ms: e, directCallP50Ms: d, nestedCallMs: perCall, nestedOverDirect: perCall / d };
  const ms = (x) => `${x.toFixed(2)} ms`;
  console.log('\nCode mode (GitHub, discovery: code, stdio; p50, same run)\n');
  printTable([
    ['figure', 'code mode', 'direct tools/call', 'ratio', 'goal'],
    ['sandbox start (QuickJS runtime + context, return 1)', ms(start), '', '', '≤ 5 ms'],
    ['execute return 1 / direct pulls_list', ms(e), ms(d), `${(e / d).toFixed(2)}×`, ''],
    [
      'one nested api call / direct pulls_list',
      ms(perCall),
      ms(d),
      `${(perCall / d).toFixed(2)}×`,
      `≤ direct + 1 ms (${perCall - d <= 1 ? 'met' : 'not met'})`,
    ],
  ]);
}

// The runtime rows of `npm run bench` (issue 15), for the generated Petstore and GitHub servers and
// openapi-mcp-generator's (OMG) servers of the same specs, in the same run:
//   - type-check: `tsc --noEmit -p <project>` wall (mcpgen: median of up to 3; OMG: once, with a
//     timeout, as its GitHub project takes ~20 s and fails);
//   - cold start: spawn → connect → first `tools/list` answer, with the v1 SDK `Client` over stdio;
//   - first call: the first `tools/call` after that, timed by the client, against a loopback
//     backend (a node:http server in this process answering every path with a small pet object);
//   - call overhead: N sequential `tools/call`s against N direct `fetch`es of the same backend URL
//     (alternating blocks after a warm-up), p50 and p99 of each, and the difference.
// OMG's projects are generated inside .cache/bench/omg, whose node_modules holds the two packages
// its servers import that mcpgen does not have (axios, dotenv; installed on the first run); they
// are compiled with `tsc --noCheck` to run (their type-check fails), and read `API_BASE_URL`.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const TYPECHECK_TIMEOUT_MS = 90_000;
const CALLS = Math.max(20, Number(process.env.BENCH_CALLS ?? 300));
const PET = { id: 1, name: 'Rex', status: 'available', photoUrls: [], tags: [] };

/** Per case: the spec, the mcpgen manifest, the tool to call, its arguments and backend path, and which tool of OMG's server is the same. */
function plans(root, cases) {
  const byName = Object.fromEntries(cases.map((c) => [c.name, c]));
  const out = [];
  if (byName.Petstore) out.push({ ...byName.Petstore, tool: 'getPetById', args: { petId: 1 }, urlPath: '/pets/1', omgTool: /^getPetById$/ });
  if (byName.GitHub) out.push({ ...byName.GitHub, tool: 'meta_root', args: {}, urlPath: '/', omgTool: /^meta[-_/]?root$/i });
  return out;
}

/** Runs the rows; adds them to `results.runtime` and prints them with `printTable`. */
export async function benchRuntime({ root, cacheDir, results, printTable, cases, runs, omgBin, median }) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const { ListToolsResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const sdk = { Client, StdioClientTransport, ListToolsResultSchema };
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  const omgDir = path.join(cacheDir, 'omg');
  const omgReady = ensureOmgDeps(omgDir);

  const backend = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ...PET, path: req.url }));
  });
  await new Promise((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const backendUrl = `http://127.0.0.1:${backend.address().port}`;
  console.log(
    `\nruntime over stdio (SDK v1 Client): type-check, cold start to the first tools/list answer (a raw request: no client-side output-schema compiling), first tools/call against a loopback backend (${RUNS(runs)} starts), then ${CALLS} calls vs ${CALLS} direct fetches\n`,
  );

  const rows = [['figure', 'mcpgen', 'OMG', 'mcpgen/OMG', 'goal']];
  results.runtime = {};
  try {
    for (const p of plans(root, cases)) {
      const r = (results.runtime[p.name] = {});
      // mcpgen's project, inside the repository so it resolves the SDK and @types/node from its node_modules
      const out = path.join(cacheDir, `server-${p.name}`);
      execFileSync(process.execPath, [path.join(root, 'bin/mcpgen.js'), 'build', p.manifest, '--out', out, '--quiet'], { cwd: root, stdio: 'pipe' });
      execFileSync(process.execPath, [tsc, '-p', out], { stdio: 'inherit' });
      const prefix = /"envPrefix":\s*"([^"]+)"/.exec(readFileSync(path.join(out, 'src/config.gen.ts'), 'utf8'))?.[1];
      const mcpgen = { command: [path.join(out, 'dist/server.js')], env: { [`${prefix}_BASE_URL`]: backendUrl }, tool: () => p.tool };
      const checks = [];
      for (let i = 0; i < Math.min(3, runs); i++) checks.push(typecheck(tsc, ['-p', out]));
      r.typecheck = { mcpgen: { ...checks[0], wallMs: median(checks.map((c) => c.wallMs)) } };

      // OMG's project of the same spec
      let omg;
      if (omgReady) {
        const odir = path.join(omgDir, p.name);
        rmSync(odir, { recursive: true, force: true });
        execFileSync(process.execPath, [omgBin, '-i', p.spec, '-o', odir, '-b', 'http://127.0.0.1:9', '--force'], { cwd: root, stdio: 'pipe' });
        r.typecheck.OMG = typecheck(tsc, ['-p', odir, '--rootDir', path.join(odir, 'src'), '--noEmit'], TYPECHECK_TIMEOUT_MS);
        const built = spawnSync(process.execPath, [tsc, '-p', odir, '--rootDir', path.join(odir, 'src'), '--noCheck'], {
          encoding: 'utf8',
          timeout: TYPECHECK_TIMEOUT_MS,
        });
        if (existsSync(path.join(odir, 'build/index.js'))) {
          let name;
          omg = {
            command: [path.join(odir, 'build/index.js')],
            env: { API_BASE_URL: backendUrl },
            tool: (tools) => (name ??= tools.find((t) => p.omgTool.test(t.name))?.name),
          };
        } else r.omgError = `OMG's project did not compile: ${(built.stdout + built.stderr).slice(0, 300)}`;
      }

      // cold start and first call: alternating starts of the two servers
      const servers = { mcpgen, ...(omg ? { OMG: omg } : {}) };
      const starts = Object.fromEntries(Object.keys(servers).map((k) => [k, []]));
      for (let i = 0; i < RUNS(runs); i++) {
        for (const k of i % 2 ? Object.keys(servers).reverse() : Object.keys(servers)) starts[k].push(await startAndCall(sdk, servers[k], p.args));
      }
      for (const [k, s] of Object.entries(starts)) {
        r[k] = {
          coldStartMs: median(s.map((x) => x.coldMs)),
          firstCallMs: median(s.map((x) => x.firstCallMs)),
          firstCallMaxMs: Math.max(...s.map((x) => x.firstCallMs)),
          tool: s[0].tool,
          samples: s,
        };
      }
      // call overhead over a direct fetch
      for (const k of Object.keys(servers)) Object.assign(r[k], await overhead(sdk, servers[k], p.args, `${backendUrl}${p.urlPath}`));

      const m = r.mcpgen;
      const o = r.OMG;
      const plus = (x) => `${x >= 0 ? '+' : '−'}${ms(Math.abs(x))}`;
      const ms = (x) => (x === undefined ? 'n/a' : `${x.toFixed(x < 10 ? 2 : 0)} ms`);
      const ratio = (a, b) => (a === undefined || b === undefined ? 'n/a' : `${(a / b).toFixed(2)}×`);
      const tc = (t) => (t === undefined ? 'n/a' : `${(t.wallMs / 1000).toFixed(2)} s${t.timedOut ? ' (timed out)' : t.ok ? '' : `, fails ${t.firstError}`}`);
      rows.push([
        `type-check ${p.name} (tsc --noEmit)`,
        tc(r.typecheck.mcpgen),
        tc(r.typecheck.OMG),
        ratio(r.typecheck.mcpgen.wallMs, r.typecheck.OMG?.wallMs),
        p.name === 'GitHub' ? '≤ 4 s' : '',
      ]);
      rows.push([
        `cold start to tools/list ${p.name}`,
        ms(m.coldStartMs),
        ms(o?.coldStartMs),
        ratio(m.coldStartMs, o?.coldStartMs),
        p.name === 'GitHub' ? '≤ OMG' : '',
      ]);
      rows.push([
        `first tools/call ${p.name} (${m.tool}; max)`,
        `${ms(m.firstCallMs)} (${ms(m.firstCallMaxMs)})`,
        o ? `${ms(o.firstCallMs)} (${ms(o.firstCallMaxMs)})` : 'n/a',
        ratio(m.firstCallMs, o?.firstCallMs),
        p.name === 'GitHub' ? '≤ 30 ms' : '',
      ]);
      rows.push([
        `call p50 ${p.name} (direct; added)`,
        `${ms(m.p50Ms)} (${ms(m.directP50Ms)}; ${plus(m.p50Ms - m.directP50Ms)})`,
        o ? `${ms(o.p50Ms)} (${ms(o.directP50Ms)}; ${plus(o.p50Ms - o.directP50Ms)})` : 'n/a',
        ratio(m.p50Ms - m.directP50Ms, o ? o.p50Ms - o.directP50Ms : undefined),
        p.name === 'GitHub' ? '≤ +0.75 ms' : '',
      ]);
      rows.push([
        `call p99 ${p.name} (direct; added; ratio of p99s)`,
        `${ms(m.p99Ms)} (${ms(m.directP99Ms)}; ${plus(m.p99Ms - m.directP99Ms)})`,
        o ? `${ms(o.p99Ms)} (${ms(o.directP99Ms)}; ${plus(o.p99Ms - o.directP99Ms)})` : 'n/a',
        ratio(m.p99Ms, o?.p99Ms),
        '',
      ]);
    }
  } finally {
    backend.close();
  }
  printTable(rows);
}

const RUNS = (runs) => Math.max(3, runs);

/** `tsc <args>` timed from outside; `ok` when it exits 0, else the first `error TSxxxx` it printed. */
function typecheck(tsc, args, timeout) {
  const t = performance.now();
  const r = spawnSync(process.execPath, [tsc, ...args], { encoding: 'utf8', maxBuffer: 64 << 20, ...(timeout ? { timeout } : {}) });
  const wallMs = performance.now() - t;
  const text = `${r.stdout}${r.stderr}`;
  return {
    wallMs,
    ok: r.status === 0,
    timedOut: r.error?.code === 'ETIMEDOUT',
    firstError: /error (TS\d+)/.exec(text)?.[1] ?? (r.status === 0 ? undefined : `exit ${r.status ?? r.signal}`),
    errors: (text.match(/error TS\d+/g) ?? []).length,
  };
}

/** One start: spawn → connect → tools/list (cold), then the first tools/call (first), then close. */
async function startAndCall({ Client, StdioClientTransport, ListToolsResultSchema }, server, args) {
  const t0 = performance.now();
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: server.command, env: { PATH: process.env.PATH ?? '', ...server.env }, stderr: 'ignore' }),
  );
  // the answer itself: listTools() would also compile the client's validators of every output schema
  const { tools } = await client.request({ method: 'tools/list', params: {} }, ListToolsResultSchema);
  const t1 = performance.now();
  const name = server.tool(tools);
  if (!name) throw new Error(`no tool to call among ${tools.length}`);
  const res = await client.callTool({ name, arguments: args });
  const t2 = performance.now();
  await client.close();
  if (res.isError || !JSON.stringify(res.content).includes('Rex')) throw new Error(`${name}: ${JSON.stringify(res).slice(0, 300)}`);
  return { coldMs: t1 - t0, firstCallMs: t2 - t1, tool: name };
}

/** `calls` (default `CALLS`) sequential tools/calls and as many direct fetches of `url`, in alternating blocks after a warm-up; p50/p99 of each. */
export async function overhead({ Client, StdioClientTransport, ListToolsResultSchema }, server, args, url, calls = CALLS) {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: server.command, env: { PATH: process.env.PATH ?? '', ...server.env }, stderr: 'ignore' }),
  );
  const name = server.tool((await client.request({ method: 'tools/list', params: {} }, ListToolsResultSchema)).tools);
  const mcp = async () => {
    const res = await client.callTool({ name, arguments: args });
    if (res.isError) throw new Error(`${name}: ${JSON.stringify(res).slice(0, 300)}`);
  };
  const direct = async () => {
    const res = await fetch(url);
    await res.json();
  };
  const timed = async (fn, n, into) => {
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await fn();
      into?.push(performance.now() - t);
    }
  };
  await timed(mcp, 30);
  await timed(direct, 30);
  const m = [];
  const d = [];
  const block = 25;
  for (let done = 0; done < calls; done += block) {
    await timed(mcp, Math.min(block, calls - done), m);
    await timed(direct, Math.min(block, calls - done), d);
  }
  await client.close();
  return { calls, p50Ms: pct(m, 50), p99Ms: pct(m, 99), directP50Ms: pct(d, 50), directP99Ms: pct(d, 99) };
}

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** axios and dotenv in .cache/bench/omg/node_modules (OMG's servers import them); false when they cannot be installed. */
function ensureOmgDeps(dir) {
  mkdirSync(dir, { recursive: true });
  if (existsSync(path.join(dir, 'node_modules/axios')) && existsSync(path.join(dir, 'node_modules/dotenv'))) return true;
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'omg-bench-deps', private: true, type: 'module' }) + '\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error', 'axios@1.21.1', 'dotenv@16.6.1'], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) {
    console.log(`(OMG's servers are not run: installing axios and dotenv for them failed: ${(r.stderr || '').trim().slice(0, 200)})`);
    return false;
  }
  return true;
}

// The HTTP rows of `npm run bench` (issue 11): tools/call throughput and per-call latency of the
// generated Petstore server over Streamable HTTP with 1, 8 and 32 concurrent clients, against a
// direct `fetch` of the same loopback backend at the same concurrency, printed as ratios.
//
// Three processes: the backend (examples/petstore/backend.mjs in a child of its own), the
// generated server (`dist/server.js --transport http --port 0`, default settings) and this one,
// which runs the clients. Each row is a closed loop: N clients each make one call at a time for a
// fixed duration after a warm-up; calls/s counts the calls completed in that window, p50/p99 are
// taken from every call's latency in it. The direct rows do `GET /pets/<id>` with the global
// `fetch` (keep-alive, as the SDK transports use it); the MCP rows call `getPetById` with the same
// id. The CPU time the server process and this (client) process spend in the measured window,
// per call, comes from /proc (Linux; absent elsewhere). On a 2-core machine the three processes share the cores: the ratios are what one machine
// gives end to end, not the server's cost alone.
// The runtime's floor: the same loads against bench/floor-server.mjs, a bare v2-SDK server with one
// getPetById tool doing the same fetch (no validation, no pipeline), both eras, 1/8/32 clients; the
// generated server's CPU per call over the floor's is what mcpgen's runtime adds (goal ≤ 1.15×).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

const CONCURRENCY = [1, 8, 32];
const TOOL = { name: 'getPetById', arguments: { petId: 1 } };

/** Runs the rows; adds them to `results.http` and prints them with `printTable`. */
export async function benchHttp({ root, cacheDir, results, printTable }) {
  const seconds = Math.max(0.5, Number(process.env.BENCH_HTTP_SECONDS ?? 4));
  const warmup = Math.min(1, seconds / 4);
  const out = path.join(cacheDir, 'server-Petstore');
  // Inside the repository, so the generated project resolves the SDK and @types/node from its node_modules.
  execFileSync(process.execPath, [path.join(root, 'bin/mcpgen.js'), 'build', path.join(root, 'examples/petstore/mcpgen.yaml'), '--out', out, '--quiet'], {
    cwd: root,
    stdio: 'pipe',
  });
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', out], { stdio: 'inherit' });

  const { Client: LegacyClient } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport: LegacyHttp } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { Client: ModernClient, StreamableHTTPClientTransport: ModernHttp } = await import('@modelcontextprotocol/client');

  const backend = await startBackendProcess(root);
  const server = await startHttp(out, { PETSTORE_BASE_URL: backend.url });
  const floor = await startFloor(root, { PETSTORE_BASE_URL: backend.url });
  const direct = `${backend.url}/pets/${TOOL.arguments.petId}`;
  const directCall = async () => {
    const res = await fetch(direct);
    const pet = await res.json();
    if (res.status !== 200 || pet.id !== TOOL.arguments.petId) throw new Error(`direct GET ${direct}: ${res.status} ${JSON.stringify(pet)}`);
  };

  const connect = async (era, target = server, headers = {}) => {
    const init = { requestInit: { headers } };
    if (era === 'legacy') {
      const client = new LegacyClient({ name: 'bench', version: '1.0.0' }, { capabilities: {} });
      const transport = new LegacyHttp(new URL(target.url), init);
      await client.connect(transport);
      return {
        client,
        close: async () => {
          await transport.terminateSession().catch(() => {});
          await client.close();
        },
      };
    }
    const client = new ModernClient({ name: 'bench', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ModernHttp(new URL(target.url), init));
    return { client, close: () => client.close() };
  };
  const mcpCalls = async (era, n, target = server, headers = {}) => {
    const clients = await Promise.all(Array.from({ length: n }, () => connect(era, target, headers)));
    const calls = clients.map(({ client }) => async () => {
      const res = await client.callTool(TOOL);
      if (res.isError || !JSON.stringify(res.content).includes('Rex')) throw new Error(`${TOOL.name}: ${JSON.stringify(res)}`);
    });
    return { calls, close: () => Promise.all(clients.map((c) => c.close())) };
  };

  const rows = [];
  const plan = [...CONCURRENCY.map((n) => ({ n, era: 'legacy' })), ...CONCURRENCY.map((n) => ({ n, era: 'modern' }))];
  console.log(
    `\ntools/call ${TOOL.name} over Streamable HTTP against the loopback backend vs a direct fetch of GET /pets/${TOOL.arguments.petId}, same concurrency; ${seconds} s per load after ${warmup} s of warm-up\n`,
  );
  try {
    for (const { n, era } of plan) {
      // The direct load first, then the MCP load, each with its own warm-up.
      const d = await load(
        Array.from({ length: n }, () => directCall),
        seconds,
        warmup,
      );
      const m = await mcpCalls(era, n);
      let r;
      try {
        r = await load(m.calls, seconds, warmup, server.pid);
      } finally {
        await m.close();
      }
      // the bare-SDK floor under the same load, right after
      const f = await mcpCalls(era, n, floor);
      let fl;
      try {
        fl = await load(f.calls, seconds, warmup, floor.pid);
      } finally {
        await f.close();
      }
      const key = `${n} client${n === 1 ? '' : 's'}${era === 'modern' ? ' (modern)' : ''}`;
      results.http[key] = {
        clients: n,
        era,
        seconds,
        mcp: r,
        direct: d,
        floor: fl,
        throughputRatio: r.perSecond / d.perSecond,
        p50DeltaMs: r.p50Ms - d.p50Ms,
        p99DeltaMs: r.p99Ms - d.p99Ms,
        serverCpuOverFloor: r.serverCpuMsPerCall / fl.serverCpuMsPerCall,
      };
      rows.push(key);
    }
    // the policy layer's cost: the same calls against examples/petstore-policy (audit trail with a
    // hash chain to a file, access rules, limits), as the admin client, and against the same
    // manifest without its `policy` block (its concerns and everything else kept)
    const policyOut = path.join(cacheDir, 'server-Petstore-policy');
    const offOut = path.join(cacheDir, 'server-Petstore-policy-off');
    const manifest = YAML.parse(readFileSync(path.join(root, 'examples/petstore-policy/mcpgen.yaml'), 'utf8'));
    delete manifest.policy;
    manifest.openapi = path.join(root, 'examples/petstore/openapi.yaml');
    manifest.output = offOut;
    const offManifest = path.join(cacheDir, 'petstore-policy-off.yaml');
    writeFileSync(offManifest, YAML.stringify(manifest));
    for (const [m, out] of [
      [path.join(root, 'examples/petstore-policy/mcpgen.yaml'), policyOut],
      [offManifest, offOut],
    ]) {
      execFileSync(process.execPath, [path.join(root, 'bin/mcpgen.js'), 'build', m, '--out', out, '--quiet'], { cwd: root, stdio: 'pipe' });
      execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', out], { stdio: 'inherit' });
    }
    const unguarded = await startHttp(offOut, {
      PETSTORE_POLICY_BASE_URL: backend.url,
      PETSTORE_POLICY_HTTP_TOKENS: 'admin=bench-admin-token-0123456789abcdef',
    });
    const token = 'bench-admin-token-0123456789abcdef';
    const auditFile = path.join(cacheDir, `policy-audit-${process.pid}.jsonl`);
    rmSync(auditFile, { force: true });
    const guarded = await startHttp(policyOut, {
      PETSTORE_POLICY_BASE_URL: backend.url,
      PETSTORE_POLICY_HTTP_TOKENS: `admin=${token}`,
      PETSTORE_POLICY_AUDIT_FILE: auditFile,
    });
    try {
      for (const n of [1, 8]) {
        const off = await mcpCalls('legacy', n, unguarded, { authorization: `Bearer ${token}` });
        let plain;
        try {
          plain = await load(off.calls, seconds, warmup, unguarded.pid);
        } finally {
          await off.close();
        }
        const on = await mcpCalls('legacy', n, guarded, { authorization: `Bearer ${token}` });
        let policed;
        try {
          policed = await load(on.calls, seconds, warmup, guarded.pid);
        } finally {
          await on.close();
        }
        results.http[`policy ${n}`] = {
          clients: n,
          off: plain,
          on: policed,
          cpuRatio: policed.serverCpuMsPerCall / plain.serverCpuMsPerCall,
          throughputRatio: policed.perSecond / plain.perSecond,
        };
      }
    } finally {
      guarded.kill();
      unguarded.kill();
      await Promise.all([guarded.exit, unguarded.exit]);
      rmSync(auditFile, { force: true });
    }
  } finally {
    server.kill();
    floor.kill();
    backend.kill();
    await Promise.all([server.exit, floor.exit, backend.exit]);
  }

  const ms = (x) => `${x.toFixed(2)} ms`;
  const plus = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)} ms`;
  const table = [
    ['figure', 'MCP calls/s', 'direct/s', 'MCP/direct', 'p50 MCP', 'p50 direct', 'p50 added', 'p99 MCP', 'p99 direct', 'p99 added', 'CPU/call server / client'],
  ];
  for (const key of rows) {
    const { mcp: r, direct: d, throughputRatio } = results.http[key];
    table.push([
      `http ${key}`,
      r.perSecond.toFixed(0),
      d.perSecond.toFixed(0),
      `${throughputRatio.toFixed(2)}×`,
      ms(r.p50Ms),
      ms(d.p50Ms),
      plus(r.p50Ms - d.p50Ms),
      ms(r.p99Ms),
      ms(d.p99Ms),
      plus(r.p99Ms - d.p99Ms),
      r.serverCpuMsPerCall === undefined ? 'n/a' : `${ms(r.serverCpuMsPerCall)} / ${ms(r.clientCpuMsPerCall)}`,
    ]);
  }
  printTable(table);

  console.log(
    `\nserver CPU per call, the generated server against the bare-SDK floor (bench/floor-server.mjs: one tool, the same fetch, no validation) under the same load; goal ≤ 1.15×\n`,
  );
  const floorTable = [
    ['figure', 'calls/s generated', 'calls/s floor', 'server CPU/call generated', 'server CPU/call floor', 'generated/floor', 'p50 generated', 'p50 floor'],
  ];
  for (const key of rows) {
    const { mcp: r, floor: f, serverCpuOverFloor } = results.http[key];
    const cpu = (x) => (x === undefined ? 'n/a' : ms(x));
    floorTable.push([
      `http ${key}`,
      r.perSecond.toFixed(0),
      f.perSecond.toFixed(0),
      cpu(r.serverCpuMsPerCall),
      cpu(f.serverCpuMsPerCall),
      Number.isFinite(serverCpuOverFloor) ? `${serverCpuOverFloor.toFixed(2)}×` : 'n/a',
      ms(r.p50Ms),
      ms(f.p50Ms),
    ]);
  }
  printTable(floorTable);

  console.log(
    `\nthe policy layer (examples/petstore-policy: chained audit file, access rules, limits) against the same manifest without its policy block, ${TOOL.name}, legacy era; goal: server CPU per call at most 1.2× without it\n`,
  );
  const policyTable = [['figure', 'calls/s off', 'calls/s on', 'on/off', 'server CPU/call off', 'server CPU/call on', 'on/off']];
  for (const n of [1, 8]) {
    const r = results.http[`policy ${n}`];
    if (r === undefined) continue;
    const cpu = (x) => (x === undefined ? 'n/a' : ms(x));
    policyTable.push([
      `policy ${n} client${n === 1 ? '' : 's'}`,
      r.off.perSecond.toFixed(0),
      r.on.perSecond.toFixed(0),
      `${r.throughputRatio.toFixed(2)}×`,
      cpu(r.off.serverCpuMsPerCall),
      cpu(r.on.serverCpuMsPerCall),
      Number.isFinite(r.cpuRatio) ? `${r.cpuRatio.toFixed(2)}×` : 'n/a',
    ]);
  }
  printTable(policyTable);
}

/** N closed loops (one per entry of `calls`) for `warmup` + `seconds`; counts and times the calls that start after the warm-up and end within the window. */
export async function load(calls, seconds, warmup, serverPid) {
  const start = performance.now();
  const from = start + warmup * 1000;
  const until = from + seconds * 1000;
  const latencies = [];
  let cpu;
  const sample = setTimeout(() => void (cpu = { server: procCpuMs(serverPid), client: process.cpuUsage() }), from - start);
  const endSample = new Promise((resolve) => setTimeout(() => resolve({ server: procCpuMs(serverPid), client: process.cpuUsage(cpu?.client) }), until - start));
  const running = Promise.all(
    calls.map(async (call) => {
      for (;;) {
        const t = performance.now();
        if (t >= until) return;
        await call();
        const end = performance.now();
        if (t >= from && end <= until) latencies.push(end - t);
      }
    }),
  );
  const [end] = await Promise.all([endSample, running]);
  clearTimeout(sample);
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.max(0, Math.ceil((p / 100) * latencies.length) - 1))];
  const result = { calls: latencies.length, perSecond: latencies.length / seconds, p50Ms: pct(50), p99Ms: pct(99) };
  if (serverPid !== undefined && cpu?.server !== undefined && end.server !== undefined) {
    result.serverCpuMsPerCall = (end.server - cpu.server) / latencies.length;
    result.clientCpuMsPerCall = (end.client.user + end.client.system) / 1000 / latencies.length;
  }
  return result;
}

/** User + system CPU time of a process so far, in ms, from /proc/<pid>/stat (Linux; undefined elsewhere). */
function procCpuMs(pid) {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ ticks (100 on Linux)
  } catch {
    return undefined;
  }
}

/** The Petstore backend in a child process (its request log emptied twice a second: it would grow for the whole run). */
export async function startBackendProcess(root) {
  const script = `import { startBackend } from ${JSON.stringify(path.join(root, 'examples/petstore/backend.mjs'))};
const { url, requests } = await startBackend({ port: 0 });
setInterval(() => { requests.length = 0; }, 500);
console.log('backend at ' + url);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return listening(child, /backend at (http:\/\/\S+)/, 'stdout');
}

/**
 * `--cpu-prof` into BENCH_CPU_PROF (a folder) for every server this section starts, so the
 * generated server and the floor can be profiled side by side under the same load; none unset.
 */
const profile = () => (process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : []);

/** bench/floor-server.mjs (the bare-SDK floor) on a free loopback port; resolves once it listens. */
export async function startFloor(root, env) {
  const child = spawn(process.execPath, [...profile(), path.join(root, 'bench/floor-server.mjs')], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.resume();
  return listening(child, /Streamable HTTP at (http:\/\/\S+?\/mcp)\b/, 'stderr');
}

/** `<server>/dist/server.js --transport http --port 0`, as test/helpers/eras.ts `startHttp` starts it; resolves once it listens. */
export async function startHttp(server, env) {
  const child = spawn(process.execPath, [...profile(), path.join(server, 'dist/server.js'), '--transport', 'http', '--port', '0'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.resume();
  return listening(child, /Streamable HTTP at (http:\/\/\S+?\/mcp)\b/, 'stderr');
}

/** Waits for `pattern` on the child's `stream`; keeps draining it afterwards (a full pipe would block the child). */
function listening(child, pattern, stream) {
  let text = '';
  const exit = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start listening within 20 s; ${stream}:\n${text}`)), 20_000);
    let found = false;
    child[stream].on('data', (d) => {
      if (found) return;
      text += d.toString('utf8');
      const m = pattern.exec(text);
      if (m) {
        found = true;
        clearTimeout(timer);
        resolve({ url: m[1], pid: child.pid, exit, output: () => text, kill: (signal = 'SIGTERM') => void child.kill(signal) });
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      if (!found) reject(new Error(`exited with ${code} before listening; ${stream}:\n${text}`));
    });
  });
}

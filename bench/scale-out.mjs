// The scale-out rows of `npm run bench` (issue 22): what sharing state through Redis costs.
// examples/petstore-policy (audit trail, access rules, limits: every call takes a concurrency slot,
// so with Redis every call makes Redis round trips) serves tools/call getPetById over Streamable
// HTTP to the same 8 modern-era clients, closed loops as in bench/http.mjs, in three set-ups:
//   1. one instance, no Redis (everything in the process);
//   2. one instance with <PREFIX>_REDIS_URL (slots, gate store and bus in Redis);
//   3. three instances with the same Redis, the clients spread over them round robin.
// It prints calls/s, p50 and p99 of each, and each as a ratio to set-up 1. All processes (the
// backend, redis-server, the instances, the clients) share this machine's cores: one instance is one
// Node.js thread, so three may use more of them, but never more than the machine has; the ratios say
// what sharing costs here, not what N machines would give. Skipped, saying so, without redis-server.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { load, startBackendProcess, startHttp } from './http.mjs';

const TOOL = { name: 'getPetById', arguments: { petId: 1 } };
const CLIENTS = 8;
const TOKEN = 'bench-admin-token-0123456789abcdef';

/** Runs the rows; adds them to `results.scaleOut` and prints them with `printTable`. */
export async function benchScaleOut({ root, cacheDir, results, printTable }) {
  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status !== 0) {
    console.log('\n(skipping the scale-out rows: redis-server is not installed; Debian/Ubuntu: apt-get install redis-server)');
    return;
  }
  const seconds = Math.max(0.5, Number(process.env.BENCH_HTTP_SECONDS ?? 4));
  const warmup = Math.min(1, seconds / 4);
  const out = path.join(cacheDir, 'server-scale-out');
  execFileSync(
    process.execPath,
    [path.join(root, 'bin/mcpgen.js'), 'build', path.join(root, 'examples/petstore-policy/mcpgen.yaml'), '--out', out, '--quiet'],
    { cwd: root, stdio: 'pipe' },
  );
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', out], { stdio: 'inherit' });
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');

  const work = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-bench-redis-'));
  const backend = await startBackendProcess(root);
  const redis = await startRedis(work);
  const env = (i, shared) => ({
    PETSTORE_POLICY_BASE_URL: backend.url,
    PETSTORE_POLICY_HTTP_TOKENS: `admin=${TOKEN}`,
    PETSTORE_POLICY_STATE_KEY: 'bench-state-key-0123456789abcdef0123',
    PETSTORE_POLICY_AUDIT_FILE: path.join(work, `audit-${i}.jsonl`),
    ...(shared ? { PETSTORE_POLICY_REDIS_URL: redis.url } : {}),
  });
  const run = async (instances) => {
    const clients = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, i) => {
        const client = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(instances[i % instances.length].url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }),
        );
        return client;
      }),
    );
    try {
      return await load(
        clients.map((client) => async () => {
          const res = await client.callTool(TOOL);
          if (res.isError || !JSON.stringify(res.content).includes('Rex')) throw new Error(`${TOOL.name}: ${JSON.stringify(res)}`);
        }),
        seconds,
        warmup,
      );
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  };
  const setups = [
    ['1 instance, no Redis', 1, false],
    ['1 instance, Redis', 1, true],
    ['3 instances, Redis', 3, true],
  ];
  results.scaleOut = {};
  console.log(
    `\nscale-out: tools/call ${TOOL.name} of examples/petstore-policy, ${CLIENTS} modern clients (spread round robin over the instances), ${seconds} s per load after ${warmup} s of warm-up; every process on this machine\n`,
  );
  try {
    for (const [label, n, shared] of setups) {
      const instances = await Promise.all(Array.from({ length: n }, (_, i) => startHttp(out, env(i, shared))));
      try {
        results.scaleOut[label] = { instances: n, redis: shared, clients: CLIENTS, seconds, ...(await run(instances)) };
      } finally {
        for (const p of instances) p.kill();
        await Promise.all(instances.map((p) => p.exit));
      }
    }
  } finally {
    backend.kill();
    redis.kill();
    await backend.exit;
    rmSync(work, { recursive: true, force: true });
  }
  const base = results.scaleOut[setups[0][0]];
  const ms = (x) => `${x.toFixed(2)} ms`;
  const table = [['set-up', 'calls/s', '÷ no Redis', 'p50', '÷ no Redis', 'p99', '÷ no Redis']];
  for (const [label] of setups) {
    const r = results.scaleOut[label];
    r.ratios = { perSecond: r.perSecond / base.perSecond, p50: r.p50Ms / base.p50Ms, p99: r.p99Ms / base.p99Ms };
    table.push([
      label,
      r.perSecond.toFixed(0),
      `${r.ratios.perSecond.toFixed(2)}×`,
      ms(r.p50Ms),
      `${r.ratios.p50.toFixed(2)}×`,
      ms(r.p99Ms),
      `${r.ratios.p99.toFixed(2)}×`,
    ]);
  }
  printTable(table);
}

/** redis-server on a free loopback port in `dir` (no persistence: a bench, not a store). */
async function startRedis(dir) {
  const port = await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const p = srv.address().port;
      srv.close(() => resolve(p));
    });
  });
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', ''], {
    stdio: 'ignore',
  });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await new Promise((resolve) => {
      const s = new Socket();
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
      s.connect(port, '127.0.0.1');
    });
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return { url: `redis://127.0.0.1:${port}`, kill: () => child.kill('SIGKILL') };
}

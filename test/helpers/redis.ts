/**
 * A real redis-server per test file: a free loopback port, a throwaway directory, append-only
 * file with `appendfsync always` (an acknowledged write survives a kill), killed at the end.
 *
 * When redis-server is missing: on CI (`CI=true`) the tests FAIL (`redisTest` throws); on a
 * developer's machine they are skipped, and a loud message says which and how to install it.
 */

import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'vitest';

/** Whether redis-server can be run here. */
export const REDIS_AVAILABLE = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

/**
 * `describe` for tests that need redis-server: skipped (loudly) without it, except on CI, where a
 * missing redis-server fails the file.
 */
export function describeWithRedis(name: string, fn: () => void): void {
  if (REDIS_AVAILABLE) return describe(name, fn);
  if (process.env.CI === 'true' || process.env.CI === '1') {
    describe(name, () => {
      it('has redis-server', () => {
        throw new Error(
          'redis-server is not installed, and CI must not skip the scale-out tests: install it (Debian/Ubuntu: apt-get install redis-server; .ci/run does)',
        );
      });
    });
    return;
  }
  const line = '!'.repeat(78);
  process.stderr.write(
    `\n${line}\n!! SKIPPED: "${name}" needs redis-server, which is not installed.\n!! Install it (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis)\n!! to run these tests. CI installs it and never skips them.\n${line}\n\n`,
  );
  describe.skip(name, fn);
}

/** A free TCP port on 127.0.0.1 (free when asked; redis-server binds it right after). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether something accepts connections on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.connect(port, '127.0.0.1');
  });
}

/** A running redis-server. */
export type RedisServer = {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** Kills it (SIGKILL by default: a crash) and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and directory (the append-only file is reloaded). */
  restart(): Promise<void>;
  /** Kills it and removes its directory. */
  stop(): Promise<void>;
};

async function launch(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
      '--daemonize',
      'no',
      '--logfile',
      '',
      '--loglevel',
      'warning',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => void (err += d.toString('utf8')));
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${err}`);
    if (await accepts(port)) return child;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not accept connections on ${port} in time: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Starts redis-server on a free loopback port in a throwaway directory. */
export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcpgen-redis-'));
  let port = 0;
  let child: ChildProcess | undefined;
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, dir);
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
  let current: ChildProcess | undefined = child;
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const c = current;
    current = undefined;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill(signal);
    });
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    kill,
    restart: async () => {
      await kill();
      current = await launch(port, dir);
    },
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

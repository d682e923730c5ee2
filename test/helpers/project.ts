/** Helpers shared by the end-to-end tests: build generated projects and run them. */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);

/** Repository root. */
export const ROOT = path.resolve(import.meta.dirname, '../..');

/** Copies a generated project to a fresh temp dir (outside the repo, so nothing resolves from mcpgen's node_modules). */
export function copyToTemp(dir: string, prefix: string): string {
  const dest = mkdtempSync(path.join(os.tmpdir(), prefix));
  cpSync(dir, dest, { recursive: true, filter: (src) => !/[\\/](node_modules|dist)$/.test(src) });
  return dest;
}

/** `npm install && npm run build` in a generated project, as its README says. */
export async function installAndBuild(dir: string): Promise<void> {
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, timeout: 240_000 });
  await run('npm', ['run', 'build', '--silent'], { cwd: dir, timeout: 120_000 });
}

/** Type-checks a project with mcpgen's own TypeScript 7 compiler. */
export async function typecheck(dir: string): Promise<{ ok: boolean; output: string }> {
  try {
    const r = await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir, '--noEmit'], {
      maxBuffer: 64 * 1024 * 1024,
      timeout: 240_000,
    });
    return { ok: true, output: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    return { ok: false, output: (err.stdout ?? '') + (err.stderr ?? '') };
  }
}

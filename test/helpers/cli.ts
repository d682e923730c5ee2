/** Runs the built `mcpgen` binary and takes snapshots of folders, for the CLI and bad-input tests. */
import { execFile } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './project.js';

/** What one run of the binary gave. */
export type Run = { code: number; stdout: string; stderr: string };

/** Runs `bin/mcpgen.js` with `args` in `cwd` (killed after `timeoutMs`, default 60 s). */
export function mcpgen(args: string[], cwd = ROOT, timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin/mcpgen.js'), ...args],
      { cwd, timeout: timeoutMs, env: { ...process.env, FORCE_COLOR: '0', MCPGEN_DEBUG: '' } },
      (err, stdout, stderr) => {
        const e = err as (Error & { code?: number | string; killed?: boolean }) | null;
        resolve({ code: e ? (e.killed ? -1 : typeof e.code === 'number' ? e.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/**
 * Every entry under `dir` (relative path ⇒ content; `dir/` for folders, `-> target` for links,
 * `<fifo>`-style markers for other kinds), without following links or opening special files.
 */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d).sort()) {
      const p = path.join(d, e);
      const rel = path.relative(dir, p).split(path.sep).join('/');
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out[rel] = `-> ${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[`${rel}/`] = '';
        walk(p);
      } else if (st.isFile()) out[rel] = readFileSync(p, 'utf8');
      else out[rel] = '<special>';
    }
  };
  walk(dir);
  return out;
}

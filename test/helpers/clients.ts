/**
 * Real MCP clients from the command line, as a user runs them: the Claude Code CLI (a pinned
 * devDependency, started through the package's own launcher) on PATH, and shell lines run with a
 * throwaway HOME so no user configuration leaks in or out.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** A folder with a `claude` on it: the CLI's own launcher, which finds the platform binary whether or not its postinstall ran. */
export function claudeOnPath(): string {
  const bin = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-claude-bin-'));
  const wrapper = require.resolve('@anthropic-ai/claude-code/cli-wrapper.cjs');
  writeFileSync(path.join(bin, 'claude'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(wrapper)} "$@"\n`);
  chmodSync(path.join(bin, 'claude'), 0o755);
  return bin;
}

/** The environment a shell line runs in: PATH with `bin` first, a throwaway HOME, no colours, no update checks. */
export function clientEnv(env: { home: string; bin: string }, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: `${env.bin}:${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    HOME: env.home,
    TERM: 'dumb',
    CI: 'true',
    NO_COLOR: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    ...extra,
  };
}

/** Runs a shell line as a user would type it, with a throwaway HOME and `claude` on PATH. */
export function shell(line: string, env: { home: string; bin: string; cwd: string }): Promise<{ code: number; out: string; stdout: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', line], { cwd: env.cwd, env: clientEnv(env), timeout: 90_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: `${stdout}${stderr}`, stdout });
    });
  });
}

/** The JSON document the Inspector CLI printed (its output may also hold the server's stderr lines). */
export function inspectorJson(out: string): Record<string, unknown> {
  const text = out.startsWith('{') ? out : out.slice(out.indexOf('\n{') + 1);
  const end = text.lastIndexOf('\n}');
  if (end < 0) throw new Error(`no JSON document in the Inspector's output:\n${out}`);
  return JSON.parse(text.slice(0, end + 2)) as Record<string, unknown>;
}

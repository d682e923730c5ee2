/**
 * The README's quickstart, as written: its `sh` block runs in bash from the repository's root
 * with a throwaway HOME, `claude` (the pinned Claude Code CLI) on PATH, and `mcpgen` linked to this
 * checkout — which is what the block's first line (`npm ci && npm run build && npm link`) does,
 * so that line is checked for what it says and not run (it would reinstall the repository's own
 * node_modules under the running tests). Everything after it runs for real: `init` with a slice,
 * `build`, `npm install` and `npm run build` of the generated project (from the npm registry),
 * `claude mcp add` and `claude mcp list`, and a tool call through the MCP Inspector CLI.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeOnPath, clientEnv, inspectorJson } from '../helpers/clients.js';
import { ROOT } from '../helpers/project.js';

/** The lines of the first `sh` block under `## Quickstart`. */
function quickstart(): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf('\n## Quickstart\n');
  expect(at).toBeGreaterThan(0);
  const m = /```sh\n([\s\S]*?)\n```/.exec(readme.slice(at));
  expect(m).not.toBeNull();
  return m![1]!.split('\n');
}

describe('the README quickstart', () => {
  it('is at most 15 lines and runs end to end: init with a slice, build, install, Claude Code connected, a tool called', async () => {
    const lines = quickstart();
    expect(lines.length).toBeLessThanOrEqual(15);
    expect(lines[0]).toMatch(/^npm ci && npm run build && npm link\s+#/);

    const bin = claudeOnPath();
    writeFileSync(path.join(bin, 'mcpgen'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(ROOT, 'bin/mcpgen.js'))} "$@"\n`);
    chmodSync(path.join(bin, 'mcpgen'), 0o755);
    const home = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-quickstart-'));
    // the generated project's `npm install` is real; the user's npm cache only makes it faster
    const env = clientEnv({ home, bin }, { npm_config_cache: path.join(os.homedir(), '.npm') });
    const script = ['set -e', ...lines.slice(1)].join('\n');

    const child = spawn('bash', ['-c', script], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => void (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => void (stderr += d.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      process.kill(-child.pid!, 'SIGTERM'); // the backend the script left running in the background
    } catch {
      // already gone
    }
    expect(code, `${stdout}\n${stderr}`).toBe(0);

    expect(stdout).toMatch(/^Built petstore into server: 5 tools/m);
    expect(stdout).toMatch(/^petstore: node \S+\/petstore-mcp\/server\/dist\/server\.js - ✔ Connected$/m);
    const result = inspectorJson(stdout.slice(stdout.lastIndexOf('✔ Connected'))) as {
      isError?: boolean;
      structuredContent: { items: Array<{ name: string }> };
    };
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent.items.map((p) => p.name)).toEqual(['Rex', 'Tom']);
  }, 600_000);
});

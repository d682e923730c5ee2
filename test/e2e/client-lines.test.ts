/**
 * The `claude mcp add` lines a generated README prints, run with the client they are for: the
 * Claude Code CLI (a pinned devDependency, run with a throwaway HOME) is given each line exactly as
 * printed — only its placeholders filled in — and `claude mcp list` must show the server
 * connected: over stdio with a required variable, and over HTTP with a bearer token.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../../examples/petstore/backend.mjs';
import { startHttp, type HttpProcess } from '../helpers/eras.js';
import { buildServer, type BuiltServer } from '../helpers/generated-server.js';
import { ROOT } from '../helpers/project.js';

const require = createRequire(import.meta.url);

/** A folder with a `claude` on it: the CLI's own launcher, which finds the platform binary whether or not its postinstall ran. */
function claudeOnPath(): string {
  const bin = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-claude-bin-'));
  const wrapper = require.resolve('@anthropic-ai/claude-code/cli-wrapper.cjs');
  writeFileSync(path.join(bin, 'claude'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(wrapper)} "$@"\n`);
  chmodSync(path.join(bin, 'claude'), 0o755);
  return bin;
}

/** Runs a shell line as a user would type it, with a throwaway HOME and `claude` on PATH. */
function shell(line: string, env: { home: string; bin: string; cwd: string }): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const e: NodeJS.ProcessEnv = { PATH: `${env.bin}:${process.env.PATH ?? ''}`, HOME: env.home, TERM: 'dumb', CI: 'true', NO_COLOR: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
    execFile('bash', ['-c', line], { cwd: env.cwd, env: e, timeout: 90_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

/** The README's one-line `claude mcp add …` in the section starting at `heading`. */
function addLine(readme: string, heading: string): string {
  const start = readme.indexOf(heading);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const m = /```sh\n(claude mcp add [^\n]*)\n```/.exec(readme.slice(start));
  expect(m, `a claude mcp add line under ${heading}`).not.toBeNull();
  return m![1]!;
}

// the Petstore spec without its servers: the base URL becomes a required variable, so the stdio line carries `-e`
const spec = readFileSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), 'utf8').replace(/^servers:\n(?: {2}- url: .*\n)+/m, '');
const manifest = 'name: petstore\nversion: 1.0.0\nopenapi: ./openapi.yaml\noutput: ./server\n';

let built: BuiltServer;
let backend: { url: string; server: { close: () => void } };
let bin: string;
let http: HttpProcess | undefined;

beforeAll(async () => {
  built = await buildServer('client-lines', spec, manifest);
  backend = await startBackend({ port: 0 });
  bin = claudeOnPath();
}, 180_000);

afterAll(() => {
  http?.kill('SIGKILL');
  backend?.server.close();
});

/** A fresh HOME and project folder for one client configuration. */
function scratch(): { home: string; bin: string; cwd: string } {
  const home = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-claude-home-'));
  const cwd = path.join(home, 'project');
  mkdirSync(cwd);
  return { home, bin, cwd };
}

describe('claude mcp add, as the generated README prints it', () => {
  it('over stdio: the line adds the server with its variable, and claude mcp list shows it connected', async () => {
    const readme = readFileSync(path.join(built.server, 'README.md'), 'utf8');
    const printed = addLine(readme, '### Over stdio');
    expect(printed).toBe('claude mcp add petstore -e PETSTORE_BASE_URL=... -- node /absolute/path/to/petstore/dist/server.js');
    const line = printed.replace('PETSTORE_BASE_URL=...', `PETSTORE_BASE_URL=${backend.url}`).replace('/absolute/path/to/petstore', built.server);
    const env = scratch();
    const added = await shell(line, env);
    expect(added.out).not.toMatch(/error/i);
    expect(added.code, added.out).toBe(0);
    const list = await shell('claude mcp list', env);
    expect(list.out).toMatch(/^petstore: node \S+\/dist\/server\.js - ✔ Connected$/m);
  }, 120_000);

  it('over HTTP with a token: the line adds the server with its header, and claude mcp list shows it connected', async () => {
    const token = 'tok-client-lines-0123456789abcdef';
    http = await startHttp(built.server, { PETSTORE_BASE_URL: backend.url, PETSTORE_HTTP_TOKENS: `claude=${token}` });
    const readme = readFileSync(path.join(built.server, 'README.md'), 'utf8');
    const printed = addLine(readme, '### Over HTTP');
    expect(printed).toBe("claude mcp add --transport http petstore http://127.0.0.1:3000/mcp --header 'Authorization: Bearer <token>'");
    const line = printed.replace('http://127.0.0.1:3000/mcp', http.url).replace('<token>', token);
    const env = scratch();
    const added = await shell(line, env);
    expect(added.code, added.out).toBe(0);
    const list = await shell('claude mcp list', env);
    expect(list.out).toMatch(new RegExp(`^petstore: ${http.url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(HTTP\\) - ✔ Connected$`, 'm'));

    // the line as printed before this fix (the variadic --header swallowed the name): the client refuses it
    const old = await shell(`claude mcp add --transport http --header 'Authorization: Bearer ${token}' petstore ${http.url}`, scratch());
    expect(old.code).not.toBe(0);
    expect(old.out).toMatch(/missing required argument/);

    // a wrong token: the server refuses it, and the client does not show it connected
    const wrong = scratch();
    await shell(line.replace(token, 'not-the-token'), wrong);
    const refused = await shell('claude mcp list', wrong);
    expect(refused.out).toMatch(/^petstore: .*Failed to connect.*HTTP 401/m);
    expect(refused.out).not.toMatch(/^petstore: .*Connected/m);
  }, 120_000);
});

/**
 * The client lines a generated README and `mcpgen build` print, run with the clients they are
 * for, exactly as printed (only placeholders filled in) and with a throwaway HOME: `claude mcp add`
 * (the Claude Code CLI, a pinned devDependency) over stdio and over HTTP with a bearer token, then
 * `claude mcp list` must show the server connected; the MCP Inspector CLI's lines (pinned too)
 * must list the tools and call one; and the line `mcpgen build` ends with must connect.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../../examples/petstore/backend.mjs';
import { claudeOnPath, inspectorJson, shell } from '../helpers/clients.js';
import { type HttpProcess, startHttp } from '../helpers/eras.js';
import { type BuiltServer, buildServer } from '../helpers/generated-server.js';
import { ROOT } from '../helpers/project.js';

/** The README's one-line command starting with `start` in the first `sh` block of it after `heading`. */
function printedLine(readme: string, heading: string, start = 'claude mcp add '): string {
  const at = readme.indexOf(heading);
  expect(at, heading).toBeGreaterThanOrEqual(0);
  const m = new RegExp(`\`\`\`sh\\n(${start.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}[^\\n]*)\\n\`\`\``).exec(readme.slice(at));
  expect(m, `a "${start}…" line under ${heading}`).not.toBeNull();
  return m![1]!;
}
const addLine = (readme: string, heading: string) => printedLine(readme, heading);
const inspectorLine = (readme: string, heading: string) => printedLine(readme, heading, 'npx -y @modelcontextprotocol/inspector@');

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

describe('the MCP Inspector CLI, as the generated README prints it', () => {
  it('over stdio, from the project folder: lists the tools, and calls one the way the README says', async () => {
    const readme = readFileSync(path.join(built.server, 'README.md'), 'utf8');
    // editor snippets say which folder `${workspaceFolder}` must be, and what to write from a parent folder
    expect(readme).toContain('these snippets assume it is this generated project');
    expect(readme).toContain('`${workspaceFolder}/server/dist/server.js`');
    const printed = inspectorLine(readme, '### Over stdio');
    expect(printed).toBe('npx -y @modelcontextprotocol/inspector@2.12.0 --cli -e PETSTORE_BASE_URL=... node dist/server.js --method tools/list');
    const line = printed.replace('PETSTORE_BASE_URL=...', `PETSTORE_BASE_URL=${backend.url}`);
    const env = { ...scratch(), cwd: built.server };
    const listed = await shell(line, env);
    expect(listed.code, listed.out).toBe(0);
    const tools = (inspectorJson(listed.out).tools as Array<{ name: string }>).map((t) => t.name);
    expect(tools).toContain('listPets');
    expect(tools).toHaveLength(6);

    // "`--method tools/call --tool-name <tool> --tool-arg <name>=<value>` calls a tool instead"
    expect(readme).toContain('`--method tools/call --tool-name <tool> --tool-arg <name>=<value>` calls a tool instead');
    const called = await shell(line.replace('--method tools/list', '--method tools/call --tool-name listPets --tool-arg limit=2'), env);
    expect(called.code, called.out).toBe(0);
    const result = inspectorJson(called.out) as { isError?: boolean; structuredContent: { items: unknown[] } };
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent.items).toHaveLength(2);
  }, 120_000);

  it('over HTTP with a token: lists the tools; without the token the server refuses it', async () => {
    const token = 'tok-inspector-0123456789abcdef';
    const server = await startHttp(built.server, { PETSTORE_BASE_URL: backend.url, PETSTORE_HTTP_TOKENS: `inspector=${token}` });
    try {
      const readme = readFileSync(path.join(built.server, 'README.md'), 'utf8');
      const printed = inspectorLine(readme, '### Over HTTP');
      expect(printed).toBe(
        "npx -y @modelcontextprotocol/inspector@2.12.0 --cli http://127.0.0.1:3000/mcp --transport http --header 'Authorization: Bearer <token>' --method tools/list",
      );
      const line = printed.replace('http://127.0.0.1:3000/mcp', server.url).replace('<token>', token);
      const env = { ...scratch(), cwd: built.server };
      const listed = await shell(line, env);
      expect(listed.code, listed.out).toBe(0);
      expect((inspectorJson(listed.out).tools as unknown[]).length).toBe(6);
      const refused = await shell(line.replace(token, 'not-the-token'), env);
      expect(refused.code).not.toBe(0);
      // what the Inspector prints for a refused token (the generated README's troubleshooting quotes it)
      expect(refused.out).toMatch(/"code":"auth_required"/);
    } finally {
      server.kill('SIGKILL');
    }
  }, 120_000);
});

describe('mcpgen build prints its next two commands', () => {
  it('builds the project, then the printed claude mcp add line connects Claude Code to it', async () => {
    const out = await shell(`${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(ROOT, 'bin/mcpgen.js'))} build mcpgen.yaml`, {
      ...scratch(),
      cwd: built.dir,
    });
    expect(out.code, out.out).toBe(0);
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines.at(-3)).toBe('Next:');
    expect(lines.at(-2)).toBe('  cd server && npm install && npm run build');
    const add = lines.at(-1)!.trim();
    expect(add).toBe(`claude mcp add petstore -e PETSTORE_BASE_URL=... -- node ${path.join(built.server, 'dist/server.js')}`);
    const env = scratch();
    const added = await shell(add.replace('PETSTORE_BASE_URL=...', `PETSTORE_BASE_URL=${backend.url}`), env);
    expect(added.code, added.out).toBe(0);
    const list = await shell('claude mcp list', env);
    expect(list.out).toMatch(/^petstore: node \S+\/dist\/server\.js - ✔ Connected$/m);
  }, 120_000);
});

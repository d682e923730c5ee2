/**
 * A refused HTTP request, as the user meets it (issue 32): a generated server with a client token
 * in `<PREFIX>_HTTP_TOKENS`, and the real Claude Code CLI and MCP Inspector CLI (pinned
 * devDependencies, throwaway HOME) connecting without the token and with a wrong one. What they
 * print must be what the generated README's Troubleshooting section quotes (the URL and server
 * name filled in), the refusal must name the variable, and the server must log the refusals —
 * never the token.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeOnPath, shell } from '../helpers/clients.js';
import { type HttpProcess, startHttp } from '../helpers/eras.js';
import { type BuiltServer, buildServer } from '../helpers/generated-server.js';
import { ROOT } from '../helpers/project.js';

const TOKEN = 'tok-refusals-0123456789abcdef';
const WRONG = 'wrong-token-fedcba9876543210';
const spec = readFileSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), 'utf8');
const manifest = 'name: petstore\nversion: 1.0.0\nopenapi: ./openapi.yaml\noutput: ./server\n';
const DEFAULT_URL = 'http://127.0.0.1:3000/mcp';

let built: BuiltServer;
let http: HttpProcess;
let bin: string;
let readme: string;

beforeAll(async () => {
  built = await buildServer('http-refusals', spec, manifest);
  readme = readFileSync(path.join(built.server, 'README.md'), 'utf8');
  http = await startHttp(built.server, { PETSTORE_HTTP_TOKENS: `me=${TOKEN}` });
  bin = claudeOnPath();
}, 180_000);

afterAll(() => {
  http?.kill('SIGKILL');
});

function scratch(): { home: string; bin: string; cwd: string } {
  const home = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-refusals-home-'));
  const cwd = path.join(home, 'project');
  mkdirSync(cwd);
  return { home, bin, cwd };
}

/** The lines of the fenced blocks of the README's Troubleshooting section, the URL made the running server's. */
function quoted(): string[] {
  const at = readme.indexOf('## Troubleshooting');
  expect(at).toBeGreaterThanOrEqual(0);
  const section = readme.slice(at, readme.indexOf('\n## ', at + 5));
  return [...section.matchAll(/```\n([^]*?)\n\s*```/g)].map((m) => m[1]!.trim().split(DEFAULT_URL).join(http.url));
}

describe('a request without a valid client token', () => {
  it('Claude Code prints what the README quotes, naming the token variable, without the header and with a wrong token', async () => {
    const env = scratch();
    expect((await shell(`claude mcp add --transport http petstore ${http.url}`, env)).code).toBe(0);
    const none = await shell('claude mcp list', env);
    const wrongEnv = scratch();
    expect((await shell(`claude mcp add --transport http petstore ${http.url} --header 'Authorization: Bearer ${WRONG}'`, wrongEnv)).code).toBe(0);
    const wrong = await shell('claude mcp list', wrongEnv);
    const [, withoutHeader, withWrongToken] = quoted();
    expect(withoutHeader).toContain('PETSTORE_HTTP_TOKENS');
    expect(none.out.split('\n')).toContain(withoutHeader);
    expect(wrong.out.split('\n')).toContain(withWrongToken);
    expect(wrong.out).not.toContain(WRONG);
  }, 180_000);

  it("the Inspector prints what the README quotes, and with --stored-auth-only the server's reason", async () => {
    const env = { ...scratch(), cwd: built.server };
    const base = `npx -y @modelcontextprotocol/inspector@2.12.0 --cli ${http.url} --transport http`;
    const none = await shell(`${base} --method tools/list </dev/null`, env);
    const wrong = await shell(`${base} --header 'Authorization: Bearer ${WRONG}' --method tools/list </dev/null`, env);
    const inspector = quoted()[3]!;
    expect(none.out.trim().split('\n')).toContain(inspector);
    expect(wrong.out.trim().split('\n')).toContain(inspector);
    const reason = await shell(`${base} --stored-auth-only --method tools/list </dev/null`, env);
    expect(reason.out).toContain('Error POSTing to endpoint: ');
    expect(reason.out).toContain(
      'Unauthorized: this MCP server needs a client token: send \\\\\\"Authorization: Bearer <token>\\\\\\" with a token listed in PETSTORE_HTTP_TOKENS (or PETSTORE_HTTP_TOKENS_FILE)',
    );
  }, 180_000);

  it('the server logged the refusals as the README shows, and never the token (the rate limit: test/unit/runtime/http-refusals.test.ts)', () => {
    const lines = http
      .stderr()
      .split('\n')
      .filter((l) => l.includes('refused a request'));
    expect(lines.length).toBeGreaterThan(0);
    const shown = quoted()[0]!.replace(/^… /, 'TIME ');
    const shape = (l: string) =>
      l
        .replace(/^\S+ /, '')
        .replace(/,"suppressed":\d+/, '')
        .replace(/"reason":"[^"]*"/, '"reason":…');
    expect(lines.map(shape)).toContain(shape(shown));
    for (const l of lines)
      expect(l).toMatch(
        /^\S+Z WARN http: refused a request without a valid client token \(401\) \{"remote":"(::ffff:)?127\.0\.0\.1","reason":"(no Authorization header|the bearer token is not one of the client tokens)"(,"suppressed":\d+)?\}$/,
      );
    expect(http.stderr()).not.toContain(WRONG.slice(0, 12));
    expect(http.stderr()).not.toContain(TOKEN.slice(0, 12));
  });
});

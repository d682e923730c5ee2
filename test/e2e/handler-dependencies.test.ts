/**
 * A handler with dependencies, for real (issue 32, item 3): one library declared in the manifest's
 * `package.dependencies`, another added with a real `npm install <folder>` in the generated
 * project. `mcpgen build` keeps npm's edit (no MCPGEN_OUTPUT_CONFLICT, `--check` clean), the
 * project installs and compiles, and the tool's handler calls both libraries over stdio.
 * The libraries are local folders (`file:` specs), so only the generated project's own
 * dependencies come from the registry (or npm's cache), as for any generated project.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, expect, it } from 'vitest';
import { mcpgen } from '../helpers/cli.js';
import { ROOT, run } from '../helpers/project.js';

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** A tiny ES module package with its own types. */
function library(dir: string, name: string, body: string, types: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name, version: '1.0.0', type: 'module', main: 'index.js', types: 'index.d.ts' }, null, 2) + '\n',
  );
  writeFileSync(path.join(dir, 'index.js'), body);
  writeFileSync(path.join(dir, 'index.d.ts'), types);
}

const MANIFEST = `name: greeter
version: 1.0.0
openapi: ./openapi.yaml
output: ./server
baseUrl: http://127.0.0.1:9
include:
  - operationId: getInventory
extraTools:
  - name: greet
    description: Greets someone, loudly and then quietly.
    inputSchema:
      type: object
      properties:
        name: { type: string }
      required: [name]
      additionalProperties: false
    handler: handlers/greet.ts#greet
package:
  dependencies:
    shout: file:../libs/shout
`;

const HANDLER = `import { shout } from 'shout';
import { whisper } from 'whisper';
import type { GreetArgs, GreetResult } from '../extra-tools.gen.js';

export async function greet(args: GreetArgs): Promise<GreetResult> {
  return \`\${shout('hello ' + args.name)} \${whisper('BYE')}\`;
}
`;

it('keeps a real npm install across builds, and the handler runs with both libraries', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-deps-'));
  temps.push(dir);
  writeFileSync(path.join(dir, 'openapi.yaml'), readFileSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), 'utf8'));
  writeFileSync(path.join(dir, 'mcpgen.yaml'), MANIFEST);
  library(path.join(dir, 'libs/shout'), 'shout', 'export const shout = (s) => s.toUpperCase() + "!";\n', 'export declare function shout(s: string): string;\n');
  library(
    path.join(dir, 'libs/whisper'),
    'whisper',
    'export const whisper = (s) => s.toLowerCase() + "...";\n',
    'export declare function whisper(s: string): string;\n',
  );
  const server = path.join(dir, 'server');

  const first = await mcpgen(['build', 'mcpgen.yaml'], dir);
  expect(first.code, first.stderr).toBe(0);
  expect(JSON.parse(readFileSync(path.join(server, 'package.json'), 'utf8')).dependencies.shout).toBe('file:../libs/shout');
  writeFileSync(path.join(server, 'src/handlers/greet.ts'), HANDLER);

  // what the README says after a build that changed the dependencies, then the user's own install
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: server, timeout: 240_000 });
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '../libs/whisper'], { cwd: server, timeout: 240_000 });
  const installed = readFileSync(path.join(server, 'package.json'), 'utf8');
  expect(JSON.parse(installed).dependencies.whisper).toBe('file:../libs/whisper');

  const check = await mcpgen(['build', 'mcpgen.yaml', '--check'], dir);
  expect(check.code, check.stdout + check.stderr).toBe(0);
  const rebuilt = await mcpgen(['build', 'mcpgen.yaml'], dir);
  expect(rebuilt.code, rebuilt.stderr).toBe(0);
  expect(readFileSync(path.join(server, 'package.json'), 'utf8')).toBe(installed);
  expect(readFileSync(path.join(server, 'package-lock.json'), 'utf8')).toMatch(/"node_modules\/whisper"/);

  await run('npm', ['run', 'build', '--silent'], { cwd: server, timeout: 120_000 });
  const client = new Client({ name: 'deps-e2e', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.join(server, 'dist/server.js')],
      env: { PATH: process.env.PATH ?? '' },
      stderr: 'pipe',
      cwd: server,
    }),
  );
  try {
    const res = (await client.callTool({ name: 'greet', arguments: { name: 'Ada' } })) as CallToolResult;
    expect(res.isError).toBeFalsy();
    expect(res.content).toEqual([{ type: 'text', text: 'HELLO ADA! bye...' }]);
  } finally {
    await client.close();
  }
}, 600_000);

/**
 * A spec and a manifest that put quotes, backticks, `${…}`, comment terminators, U+2028,
 * `</script>`, reserved words and unicode into every string field: the generated project
 * type-checks, runs, and none of the injected `process.exit(7)` ever fires. Path arguments
 * such as `../admin` or `a/b?c` stay inside their path segment.
 */

import { cpSync, mkdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { main } from '../../src/cli/main.js';
import { ROOT, run, typecheck } from '../helpers/project.js';

const work = path.join(ROOT, '.cache/hostile');
const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders }> = [];
let backend: http.Server;
let url: string;
let client: Client;
let exitCode: number | null = null;

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(path.join(ROOT, 'test/fixtures/hostile'), work, { recursive: true });
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: work };
  expect(await main(['build', 'mcpgen.yaml'], io)).toBe(0);
  backend = http.createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":"yes"}');
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(backend.address() as { port: number }).port}`;
});

afterAll(async () => {
  await client?.close();
  backend?.close();
});

describe('hostile spec', () => {
  it('type-checks under strict', async () => {
    const r = await typecheck(path.join(work, 'server'));
    expect(r.output).toBe('');
  });

  it('runs, lists its tools with the hostile text intact, and never executes injected code', async () => {
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(work, 'server')]);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(work, 'server/dist/server.js')],
      env: { PATH: process.env.PATH ?? '', HOSTILE_BASE_URL: url },
      stderr: 'pipe',
    });
    client = new Client({ name: 'hostile', version: '1' });
    await client.connect(transport);
    transport.onclose = () => {
      exitCode = exitCode ?? -1;
    };
    expect(client.getServerVersion()).toEqual({ name: 'hostile', version: '1.0.0' });
    expect(client.getInstructions()).toBe('"; process.exit(7); " */ /* ${process.exit(7)} `backtick` </script> \u2028');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).slice(0, 2)).toEqual(['class', 'delete']);
    // a 300-character operationId is cut to 64 with a hash; a 30 kB description to 1024
    const long = tools[2]!;
    expect(long.name).toMatch(/^veryLongOperationIdX+_[0-9a-f]{8}$/);
    expect(long.name.length).toBeLessThanOrEqual(64);
    expect(long.description!.length).toBeLessThanOrEqual(1024);
    expect(long.title).toMatch(/^日本語のサマリー — ünïcödé 🐶 é+$/);
    expect(tools[0]!.title).toBe('*/ process.exit(7); /*');
    expect(tools[0]!.description).toContain('${process.exit(7)} and \u2028 and </script>');
    const props = tools[0]!.inputSchema.properties as Record<string, { enum?: unknown[] }>;
    const queryName = 'x"\'`${process.exit(7)}';
    const queryArg = queryName.replace(/[^A-Za-z0-9_.-]/g, '_');
    expect(Object.keys(props)).toEqual(['id', queryArg, 'X-Evil-_Header']);
    expect(props[queryArg]!.enum).toEqual(['a"b', '*/', '${process.exit(7)}', '\u2028', '</script>']);

    const res = await client.callTool({ name: 'class', arguments: { id: '../admin', [queryArg]: '${process.exit(7)}' } });
    expect(res.isError).toBeFalsy();
    const req = seen.at(-1)!;
    expect(req.url.startsWith('/items/..%2Fadmin/')).toBe(true);
    expect(new URL(req.url, url).searchParams.get(queryName)).toBe('${process.exit(7)}');
    // a header name HTTP cannot carry is a tool error, not a crash
    const badHeader = await client.callTool({ name: 'class', arguments: { id: 'x', 'X-Evil-_Header': 'v' } });
    expect(badHeader.isError).toBe(true);

    // `constructor` is an argument like any other: not confused with Object.prototype.constructor
    expect((await client.callTool({ name: 'delete', arguments: { path: 'a/b?c', body: { typeof: 1 } } })).isError).toBeFalsy();
    expect(seen.at(-1)!.url).toBe('/echo/a%2Fb%3Fc');
    const dots = await client.callTool({ name: 'delete', arguments: { path: '..' } });
    expect(dots.isError).toBe(true);
    expect(seen.at(-1)!.url).toBe('/echo/a%2Fb%3Fc'); // refused before any request

    // custom primitives and concerns carry the same hostile text through the build
    const evil = (await client.listTools()).tools.find((t) => t.name === 'evil_tool')!;
    expect(evil.title).toBe('*/ process.exit(7); /*');
    expect(Object.keys(evil.inputSchema.properties!)).toEqual(['x"\'`${process.exit(7)}', 'constructor']);
    // its handler is the stub mcpgen wrote (hostile text stays inside string literals there too)
    const stub = await client.callTool({ name: 'evil_tool', arguments: { constructor: '*/' } });
    expect(stub).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'Tool evil_tool failed: the evil_tool tool is not implemented yet: edit src/handlers/evil.ts' }],
    });
    const prompt = await client.getPrompt({ name: 'evil_prompt', arguments: { arg: '{{arg}} ${x}' } });
    expect(prompt.messages[0]!.content).toEqual({ type: 'text', text: '{{arg}} ${x} "; process.exit(7); " */ ${process.exit(7)} `backtick` \u2028' });
    const uri = 'evil://x"\'`${process.exit(7)}*/';
    expect((await client.readResource({ uri })).contents).toEqual([{ uri, text: '"; process.exit(7); " */ ${process.exit(7)} </script> \u2028' }]);
    expect((await client.listResourceTemplates()).resourceTemplates[0]!.description).toBe('*/ process.exit(7); /*');
    const concerns = (client.getServerCapabilities()!.experimental as { concerns: { declarations: unknown[] } }).concerns;
    expect(concerns.declarations).toEqual([
      { name: 'danger', description: '*/ process.exit(7); /* ${process.exit(7)}', values: ['"\'`${process.exit(7)}', '*/'] },
    ]);

    // the reflection gate renders hostile templates and arguments as text, never as code
    const gated = await client.callTool({ name: 'evil_gated', arguments: { [queryName]: '*/ ${x}' } });
    expect(gated.isError).toBe(true);
    const hint = gated.structuredContent as { prompt: string; prompt_args: Record<string, string>; domain: string };
    expect(hint).toMatchObject({ prompt: 'evil_gate', prompt_args: { arg: '*/ ${x}' }, domain: 'x.-_' });
    // leaving `arguments` out is `{}`: it cannot slip a tool with only optional arguments past its gate
    const bare = await client.callTool({ name: 'evil_gated' });
    expect(bare.isError).toBe(true);
    expect(bare.structuredContent).toMatchObject({ prompt: 'evil_gate', prompt_args: { arg: '' } });
    const gatePrompt = await client.getPrompt({ name: 'evil_gate', arguments: hint.prompt_args });
    expect(gatePrompt.messages[0]!.content).toEqual({ type: 'text', text: '*/ ${x} "; process.exit(7); " */ ${process.exit(7)} `backtick` \u2028' });
    expect((await client.listPrompts()).prompts.find((p) => p.name === 'evil_gate')!.description).toBe('*/ process.exit(7); /* ${process.exit(7)}');
    // so do preprocessors: listed with their hostile description, run as the stub mcpgen wrote
    const listed = await client.request(
      { method: 'preprocessors/list' } as unknown as Parameters<Client['request']>[0],
      z.looseObject({ preprocessors: z.array(z.looseObject({ name: z.string(), description: z.string() })) }),
    );
    expect(listed.preprocessors).toMatchObject([{ name: 'evil_pre', description: '"; process.exit(7); " */ ${process.exit(7)} `backtick` </script> \u2028' }]);
    const withContext = await client.getPrompt({ name: 'with_context', arguments: { input: '${process.exit(7)}' } });
    expect(withContext.messages.map((m) => (m.content as { text: string }).text)).toEqual([
      '[preprocessor evil_pre: error] the evil_pre preprocessor is not implemented yet: edit src/handlers/evil.ts',
      '${process.exit(7)}',
    ]);
    expect(exitCode).toBeNull();
  });
});

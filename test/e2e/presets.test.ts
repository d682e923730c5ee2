/**
 * Per-preset surfaces: for each of the three concern presets of the committed
 * `examples/petstore-plus`, the bytes the build reports (summary of `--format json`) equal the
 * UTF-8 length of `JSON.stringify` of the `tools` an SDK `Client` receives over stdio after
 * selecting that preset, and the tools are the same, in the same order.
 */
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { main } from '../../src/cli/main.js';
import { ROOT, run } from '../helpers/project.js';
import type { JsonReport } from '../../src/cli/report.js';

const EXAMPLE = path.join(ROOT, 'examples/petstore-plus');
const work = path.join(ROOT, '.cache/presets');
const project = path.join(work, 'server');
const clients: Client[] = [];
let report: JsonReport;

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(path.join(EXAMPLE, 'server'), project, { recursive: true, filter: (src) => !/[\\/](node_modules|dist)$/.test(src) });
  let out = '';
  const io = { stdout: (s: string) => void (out += s), stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', 'examples/petstore-plus/mcpgen.yaml', '--out', path.relative(ROOT, project), '--format', 'json', '--report'], io)).toBe(0);
  report = JSON.parse(out) as JsonReport;
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
}, 300_000);

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function connect(capabilities: Record<string, unknown> = {}): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(project, 'dist/server.js')], env: { PATH: process.env.PATH ?? '', PETSTORE_PLUS_BASE_URL: 'http://127.0.0.1:9' }, stderr: 'pipe' });
  const client = new Client({ name: 'presets-e2e', version: '1' }, { capabilities });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const Updated = z.looseObject({ concerns: z.record(z.string(), z.string()) });

describe('per-preset surface', () => {
  it('the summary measures every preset, with tokens and top contributors under --report', () => {
    const s = report.summary!;
    expect(s.presets.map((p) => p.name)).toEqual(['front-desk', 'back-office', 'low-risk']);
    for (const p of s.presets) {
      expect(p.listTokens).toBeGreaterThan(0);
      expect(p.largest.length).toBeGreaterThan(0);
      expect(p.largest[0]!.tokens).toBeGreaterThan(0);
      expect(['description', 'inputSchema', 'outputSchema']).toContain(p.largest[0]!.dominant);
      expect(p.listBytes).toBeLessThan(s.listBytes!);
    }
    // front-desk: customer tools of low risk, the customer prompts, policies and the care template
    expect(s.presets[0]).toMatchObject({ tools: 4, prompts: 2, resources: 2, resourceTemplates: 1 });
    expect(s.largest[0]).toMatchObject({ name: 'updatePet', dominant: 'inputSchema' });
  });

  it.each(['front-desk', 'back-office', 'low-risk'])('%s: the reported bytes are the bytes a Client receives after selecting it', async (preset) => {
    const client = await connect();
    const everything = (await client.listTools()).tools;
    expect(Buffer.byteLength(JSON.stringify(everything))).toBe(report.summary!.listBytes);
    await client.request({ method: 'concerns/update', params: { preset } } as unknown as Parameters<Client['request']>[0], Updated);
    const { tools } = await client.listTools();
    const p = report.summary!.presets.find((x) => x.name === preset)!;
    expect(tools.length).toBe(p.tools);
    expect(Buffer.byteLength(JSON.stringify(tools))).toBe(p.listBytes);
    // the same list when the preset is named in the initialize request, or in one request's _meta
    const named = await connect({ experimental: { concernPreset: { name: preset } } });
    expect(Buffer.byteLength(JSON.stringify((await named.listTools()).tools))).toBe(p.listBytes);
    const once = await client.request({ method: 'tools/list', params: { _meta: { 'io.mcpgen/concernPreset': preset } } }, ListToolsResultSchema);
    expect(Buffer.byteLength(JSON.stringify(once.tools))).toBe(p.listBytes);
  });
});

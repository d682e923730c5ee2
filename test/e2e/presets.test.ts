/**
 * Per-preset surfaces: for each of the three concern presets of the committed
 * `examples/petstore-plus`, the bytes the build reports (summary of `--format json`) equal the
 * UTF-8 length of `JSON.stringify` of the `tools` an SDK `Client` receives over stdio for that
 * preset, and the tools are the same, in the same order, in both protocol eras: a v1 `Client`
 * (legacy era) selecting the preset with `concerns/update`, in its initialize request or in one
 * request's `_meta`; a v2 `Client` pinned to 2026-07-28 (modern era, no session) naming it in
 * each request's `_meta["io.mcpgen/concernPreset"]`. (A modern result may carry an SDK-added
 * result-level `_meta`; what is measured is the `tools` array.)
 */
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { main } from '../../src/cli/main.js';
import type { JsonReport } from '../../src/cli/report.js';
import type { AnyClient, Era } from '../helpers/eras.js';
import { connectClient } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const EXAMPLE = path.join(ROOT, 'examples/petstore-plus');
const work = path.join(ROOT, '.cache/presets');
const project = path.join(work, 'server');
const PRESETS = ['front-desk', 'back-office', 'low-risk'] as const;
const PRESET_META = 'io.mcpgen/concernPreset';
const clients: AnyClient[] = [];
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

async function connect(era: Era, capabilities: Record<string, unknown> = {}): Promise<AnyClient> {
  const { client } = await connectClient({ kind: 'stdio', server: project, env: { PETSTORE_PLUS_BASE_URL: 'http://127.0.0.1:9' } }, era, { capabilities });
  clients.push(client);
  return client;
}

/** The `tools` array of a `tools/list`, optionally naming a preset in the request's `_meta`, and its UTF-8 JSON length. */
async function listed(client: AnyClient, preset?: string): Promise<{ names: string[]; bytes: number }> {
  const result = await client.listTools(preset !== undefined ? { _meta: { [PRESET_META]: preset } } : undefined);
  return { names: result.tools.map((t) => t.name), bytes: Buffer.byteLength(JSON.stringify(result.tools)) };
}

const Updated = z.looseObject({ concerns: z.record(z.string(), z.string()) });
const presetOf = (name: string) => report.summary!.presets.find((x) => x.name === name)!;

describe('per-preset surface', () => {
  it('the summary measures every preset, with tokens and top contributors under --report', () => {
    const s = report.summary!;
    expect(s.presets.map((p) => p.name)).toEqual([...PRESETS]);
    for (const p of s.presets) {
      expect(p.discovery).toBe('list');
      expect(p.listTokens).toBeGreaterThan(0);
      expect(p.largest.length).toBeGreaterThan(0);
      expect(p.largest[0]!.tokens).toBeGreaterThan(0);
      expect(['description', 'inputSchema', 'outputSchema']).toContain(p.largest[0]!.dominant);
      expect(p.listBytes).toBeLessThan(s.listBytes!);
    }
    // front-desk: customer tools of low risk, the customer prompts, policies and the care template
    expect(s.presets[0]).toMatchObject({ tools: 5, prompts: 2, resources: 2, resourceTemplates: 1 });
    expect(s.largest[0]).toMatchObject({ name: 'updatePet', dominant: 'inputSchema' });
  });

  it('legacy era (v1 Client): the reported bytes are the bytes it receives after selecting each preset, by concerns/update, initialize or _meta', async () => {
    const client = await connect('legacy');
    expect((await listed(client)).bytes).toBe(report.summary!.listBytes);
    for (const preset of PRESETS) {
      const p = presetOf(preset);
      await (client as Client).request({ method: 'concerns/update', params: { preset } } as unknown as Parameters<Client['request']>[0], Updated);
      const selected = await listed(client);
      expect(selected.names.length).toBe(p.tools);
      expect(selected.bytes).toBe(p.listBytes);
      // the same list when the preset is named in the initialize request, or in one request's _meta
      const named = await connect('legacy', { experimental: { concernPreset: { name: preset } } });
      expect(await listed(named)).toEqual(selected);
      const fresh = await connect('legacy');
      expect(await listed(fresh, preset)).toEqual(selected);
      expect((await listed(fresh)).bytes).toBe(report.summary!.listBytes);
    }
  });

  it("modern era (v2 Client, 2026-07-28): the reported bytes are the bytes it receives naming each preset in a request's _meta", async () => {
    const client = await connect('modern');
    expect((await listed(client)).bytes).toBe(report.summary!.listBytes);
    const legacy = await connect('legacy');
    for (const preset of PRESETS) {
      const p = presetOf(preset);
      const once = await listed(client, preset);
      expect(once.names.length).toBe(p.tools);
      expect(once.bytes).toBe(p.listBytes);
      // the same tools, in the same order, as the legacy era lists for the preset
      expect(await listed(legacy, preset)).toEqual(once);
      // no session state: the next request without _meta lists everything again
      expect((await listed(client)).bytes).toBe(report.summary!.listBytes);
    }
  });
});

/**
 * Contract over the whole corpus, with made-up but schema-shaped responses: for every spec, the
 * generated server runs against Prism in dynamic mode (`-d`, seeded, so each run sees the same
 * bodies) and answers a deterministic sample of its operations (all of them for small specs),
 * driven by the SDK `Client` over stdio. A recording proxy between the server and Prism tells
 * what Prism answered to each call. The contract: a call whose upstream response was 2xx is a
 * non-error result that the `Client` accepts (it validates `structuredContent` against the
 * published output schema, so `callTool` would throw). Non-2xx answers are allowed (Prism
 * rejects some sampled requests), but each spec must see a floor of 2xx answers, so the test
 * cannot pass by having none.
 *
 * The same servers also go through the official MCP Inspector CLI's strict schema check (no
 * finding, every tool seen), the SDK `Client` must read `tools/list` with its default settings,
 * and the bytes it receives must be what the build reported; GitHub and Kubernetes must fit in
 * what the leading peer generator publishes.
 *
 * Cost control: each project is built once with mcpgen's tsc and resolves its (identical,
 * pinned) dependencies from mcpgen's node_modules; specs run one after the other.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error a plain ES module script without type declarations
import { ensureInspector, inspectTools } from '../../scripts/inspector.mjs';
import { CORPUS_SPECS, corpusSpec, specSlug } from '../helpers/corpus.js';
import { connectClient as connectEraClient, startHttp } from '../helpers/eras.js';
import { buildContractProject, connectClient, dependencyMismatches, serverEnv, startPrism, stopPrisms } from '../helpers/prism.js';
import { ROOT } from '../helpers/project.js';
import { startRecordingProxy } from '../helpers/recording-proxy.js';
import { sampleArguments } from './sample.js';

/** Operations called per spec; specs with at most {@link ALL_UP_TO} operations have all of them called. */
const SAMPLE = 24;
const ALL_UP_TO = 30;
const SEED = 'mcpgen-contract';
/** At least this share of the sampled calls (and at least {@link MIN_2XX_CALLS}) must get a 2xx from Prism. */
const MIN_2XX_SHARE = 0.25;
const MIN_2XX_CALLS = 3;
/** Beyond the SDK's 10 MiB default, only to keep checking calls when `tools/list` is too big (itself reported as a failure). */
const LARGE_BUFFER = 512 * 1024 * 1024;

/** `n` items spread evenly over `items` (the middle of each of `n` equal slices), or all of them when there are few. */
function spreadSample<T>(items: readonly T[], n = SAMPLE, allUpTo = ALL_UP_TO): T[] {
  if (items.length <= allUpTo) return [...items];
  return Array.from({ length: n }, (_, i) => items[Math.floor(((i + 0.5) * items.length) / n)]!);
}

type Outcome = { tool: string; request?: string; status?: number; isError: boolean; threw?: string; text: string; outputSchema: boolean; structured: boolean };
const is2xx = (s: number | undefined) => s !== undefined && s >= 200 && s < 300;

/**
 * Specs Prism 5.14.2 cannot serve: it never gets past "Starting Prism…" on them (Stripe's 2.5 MB
 * description: still starting after 7 minutes at 100% CPU, measured alone). They are shown as
 * skipped here; the corpus build, portability, type-check and init tests still run on them.
 */
const PRISM_CANNOT_START: ReadonlySet<string> = new Set(['stripe.json']);

/** Largest `tools/list` by default: what openapi-mcp-generator 4.0.1 publishes for the same spec (measured side by side). */
const SIZE_LIMITS: Record<string, number> = { 'github-rest.json': 1_700_000, 'kubernetes.json': 2_900_000 };

beforeAll(() => {
  ensureInspector();
}, 600_000);
afterAll(stopPrisms);

describe('contract: Prism dynamic responses over the whole corpus', () => {
  it.skip.each(CORPUS_SPECS.filter((f) => PRISM_CANNOT_START.has(f)))('%s: Prism does not start on it', () => undefined);
  it.each(CORPUS_SPECS.filter((f) => !PRISM_CANNOT_START.has(f)))(
    '%s: every sampled call answered 2xx is a non-error result the SDK Client accepts',
    async (file) => {
      const spec = corpusSpec(file);
      const slug = specSlug(file);
      const times: Record<string, number> = {};
      let t = Date.now();
      const lap = (name: string) => {
        times[name] = Date.now() - t;
        t = Date.now();
      };
      const project = await buildContractProject(spec, path.join(ROOT, '.cache/contract-corpus', slug), `contract-corpus-${slug}`);
      expect(dependencyMismatches(project.serverDir)).toEqual([]);
      lap('build');
      const prism = await startPrism(spec, { dynamic: true, seed: SEED, startTimeoutMs: 180_000 });
      lap('prism');
      const proxy = await startRecordingProxy(prism.url);
      const env = serverEnv(project.ir, proxy.url);
      const problems: string[] = [];
      let conn = await connectClient(project.serverJs, env);
      try {
        let tools: Tool[];
        try {
          tools = (await conn.client.listTools()).tools;
        } catch (err) {
          problems.push(`tools/list with the SDK Client's default settings failed: ${(err as Error).message}`);
          await conn.client.close();
          conn = await connectClient(project.serverJs, env, { maxBufferSize: LARGE_BUFFER });
          tools = (await conn.client.listTools()).tools;
        }
        lap('listTools');
        expect(tools.length).toBe(project.ir.tools.length);
        // the surface the build reported is, byte for byte, what the client received
        expect(Buffer.byteLength(JSON.stringify(tools))).toBe(project.ir.surface!.listBytes);
        const surface = project.ir.surface!;
        if (SIZE_LIMITS[file]) {
          // by default, at most what openapi-mcp-generator 4.0.1 publishes (with no output schemas)
          expect(surface.listBytes, `${file} tools/list bytes`).toBeLessThanOrEqual(SIZE_LIMITS[file]!);
          // slim, not dropped wholesale: at least half the tools whose 2xx has a JSON schema keep one
          expect(
            surface.describedResults - surface.outputSchemasDropped.length,
            `${file} output schemas kept of ${surface.describedResults}`,
          ).toBeGreaterThanOrEqual(surface.describedResults / 2);
        }
        // the official MCP Inspector's strict schema check: no finding (warnings included), every tool seen
        const inspected = inspectTools(process.execPath, [project.serverJs], env);
        lap('inspector');
        expect({ code: inspected.code, tools: inspected.tools.length, findings: inspected.findings.slice(0, 3) }, inspected.stderr).toEqual({
          code: 0,
          tools: tools.length,
          findings: [],
        });
        const byName = new Map(tools.map((tool) => [tool.name, tool]));
        const sampled = spreadSample(project.ir.tools).map((op) => byName.get(op.name)!);
        expect(sampled.length).toBeGreaterThanOrEqual(Math.min(20, project.ir.tools.length));

        const outcomes: Outcome[] = [];
        for (const tool of sampled) outcomes.push(await callOnce(conn.client, tool, proxy.exchanges));
        lap('calls');

        const ok = outcomes.filter((o) => is2xx(o.status) && !o.isError && !o.threw);
        const bad = outcomes.filter((o) => is2xx(o.status) && (o.isError || o.threw));
        const other = outcomes.filter((o) => o.status !== undefined && !is2xx(o.status));
        const notSent = outcomes.filter((o) => o.status === undefined);
        const statuses = other.reduce<Record<number, number>>((acc, o) => ({ ...acc, [o.status!]: (acc[o.status!] ?? 0) + 1 }), {});
        console.log(
          `${file}: ${tools.length} tools, ${sampled.length} called: 2xx ok ${ok.length} (${ok.filter((o) => o.outputSchema).length} checked by the Client against an output schema), 2xx-but-error ${bad.length}, non-2xx ${other.length} ${JSON.stringify(statuses)}, not sent ${notSent.length}` +
            ` | tools/list ${surface.listBytes} bytes, ${surface.withOutputSchema} output schemas | build+tsc ${times.build} ms, prism start ${times.prism} ms, listTools ${times.listTools} ms, inspector ${times.inspector} ms, calls ${times.calls} ms`,
        );
        writeFileSync(path.join(ROOT, '.cache/contract-corpus', slug, 'calls.json'), JSON.stringify(outcomes, null, 2));

        if (SIZE_LIMITS[file]) {
          // at real size over Streamable HTTP, to a modern-era client (2026-07-28): the same list, byte
          // for byte, and a call that got a 2xx over stdio gets one again
          const served = await startHttp(project.serverDir, env);
          try {
            const { client: modern } = await connectEraClient({ kind: 'http', url: served.url }, 'modern');
            try {
              const listed = (await modern.listTools()).tools;
              expect(Buffer.byteLength(JSON.stringify(listed)), `${file} tools/list bytes to a modern client over HTTP`).toBe(surface.listBytes);
              const first = ok[0];
              expect(first, `${file}: a call with a 2xx to repeat`).toBeDefined();
              const again = await callOnce(modern as unknown as Client, byName.get(first!.tool)!, proxy.exchanges);
              expect({ tool: again.tool, status: again.status, isError: again.isError, threw: again.threw }).toEqual({
                tool: first!.tool,
                status: first!.status,
                isError: false,
                threw: undefined,
              });
            } finally {
              await modern.close();
            }
          } finally {
            served.kill('SIGKILL');
          }
          lap('http');
        }
        for (const o of bad)
          problems.push(
            `${o.tool}: ${o.request} answered ${o.status}, but ${o.threw ? `the Client rejected the result: ${o.threw}` : `the result is isError: ${o.text}`}`.slice(
              0,
              800,
            ),
          );
        // calls that never reached Prism: the sample's arguments were refused (a limit of the
        // sampler, not of the server) — anything else means the server itself broke
        for (const o of notSent)
          if (o.threw || !/^(Invalid arguments|Missing)/.test(o.text))
            problems.push(`${o.tool}: no request reached Prism: ${(o.threw ?? o.text).slice(0, 300)}`);
        for (const o of outcomes) if (o.status === 0) problems.push(`${o.tool}: the proxy could not reach Prism`);
        const floor = Math.max(Math.min(MIN_2XX_CALLS, sampled.length), Math.ceil(sampled.length * MIN_2XX_SHARE));
        if (ok.length + bad.length < floor)
          problems.push(
            `only ${ok.length + bad.length} of ${sampled.length} calls got a 2xx from Prism (at least ${floor} expected): ${JSON.stringify(statuses)}`,
          );
        expect(problems, `${file}:\n${problems.join('\n')}`).toEqual([]);
      } finally {
        await conn.client.close();
        await proxy.close();
        prism.stop();
      }
    },
    600_000,
  );
});

/** Calls one tool with sample arguments and notes what Prism answered (the last upstream exchange of the call). */
async function callOnce(client: Client, tool: Tool, exchanges: Array<{ method: string; path: string; status: number }>): Promise<Outcome> {
  exchanges.length = 0;
  const args = sampleArguments(tool.inputSchema as Record<string, unknown>);
  let isError = false;
  let text = '';
  let threw: string | undefined;
  let structured = false;
  try {
    const res = await client.callTool({ name: tool.name, arguments: args });
    isError = res.isError === true;
    structured = res.structuredContent !== undefined;
    const full = (res.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? `[${c.type}]`).join('\n');
    // an error result carries the body first and the reason last, in a `[note: …]`
    const note = full.lastIndexOf('\n\n[note: ');
    text = note >= 0 ? `${full.slice(note + 2)} (body: ${full.slice(0, Math.min(note, 200))}…)` : full.slice(0, 1000);
  } catch (err) {
    threw = (err as Error).message;
  }
  const last = exchanges.at(-1);
  const outcome: Outcome = { tool: tool.name, isError, text, outputSchema: tool.outputSchema !== undefined, structured };
  if (last) {
    outcome.request = `${last.method} ${last.path}`;
    outcome.status = last.status;
  }
  if (threw !== undefined) outcome.threw = threw;
  return outcome;
}

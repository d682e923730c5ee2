import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, CreateMessageRequest, Tool } from '@modelcontextprotocol/server';
import { Server } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import { renderPrompt } from '../../../templates/runtime/primitives/prompts.js';
import type { GateHint, ReflectionConfig, ReflectionGateConfig } from '../../../templates/runtime/reflection/reflection.js';
import { hintTtlVariable, PERSIST_TOOL_NAME, ReflectionGate, reflectionConfigFromEnv } from '../../../templates/runtime/reflection/reflection.js';
import { gateKey } from '../../../templates/runtime/reflection/reflection-key.js';
import { signHint, withRoundState } from '../../../templates/runtime/shared/state.js';
import type { AnyClient, Era } from '../../helpers/linked.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

const work = mkdtempSync(path.join(tmpdir(), 'mcpgen-reflection-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let dirs = 0;
const freshDir = (): string => path.join(work, `store${++dirs}`);

const logs: string[] = [];
beforeAll(() => {
  setLogSink((line) => logs.push(line));
});
const open: AnyClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const KEY = randomBytes(32);

const CRS_TEMPLATE = 'Before reprojecting from {{source}} to {{target}}, justify the target CRS.';
const DATUM_TEMPLATE = 'Justify the datum transformation for {{source}}.';
const crsGate = { domain: 'crs', prompt: 'justify_crs', template: CRS_TEMPLATE, promptArgs: { source: '{{src}}', target: '{{dst}}' } };
const datumGate = { domain: 'datum', prompt: 'justify_datum', template: DATUM_TEMPLATE, promptArgs: { source: '{{src}}' } };

const GOOD = { intent: 'web map tiles', alternatives: ['EPSG:4326', 'EPSG:3857'], choice: 'EPSG:3857 for tiles', confidence: 0.8 };

function baseConfig(overrides: Partial<ReflectionGateConfig> = {}): ReflectionGateConfig {
  return {
    storeDir: freshDir(),
    domains: ['crs', 'datum'],
    gates: { reproject: [crsGate], warp: [crsGate], transform: [crsGate, datumGate], structured: [datumGate] },
    toolsWithOutputSchema: ['structured'],
    stateKey: KEY,
    ...overrides,
  };
}

const TOOLS: Tool[] = ['reproject', 'warp', 'transform', 'plain', 'structured', 'structured_unlisted'].map((name) => ({
  name,
  inputSchema: { type: 'object' },
  ...(name.startsWith('structured') ? { outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } : {}),
}));

type Model = (req: CreateMessageRequest) => string | Promise<string>;

/**
 * A v2 server whose tools/call handler does what the pipeline does: it builds a GateCall whose
 * callId/state travel in the sealed requestState (state.ts withRoundState).
 */
function factoryFor(gate: ReflectionGate, runs: string[]) {
  return ({ era }: { era: Era }): Server => {
    const server = new Server({ name: 'r', version: '1' }, { capabilities: { tools: {}, prompts: {} } });
    server.setRequestHandler('tools/list', () => ({ tools: gate.exposesPersistTool ? [...TOOLS, gate.persistTool as Tool] : TOOLS }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, arguments: args } = request.params;
      if (name === PERSIST_TOOL_NAME) return gate.persist(args);
      return withRoundState(KEY, ctx.mcpReq.requestState(), async (round) => {
        const verdict = await gate.check(name, args, { server, ctx, era, signal: ctx.mcpReq.signal, callId: round.callId, state: round.state });
        if (!verdict.ok) return verdict.result;
        runs.push(name);
        return name.startsWith('structured')
          ? { content: [{ type: 'text', text: '{"ok":true}' }], structuredContent: { ok: true } }
          : { content: [{ type: 'text', text: `ran ${name}` }] };
      });
    });
    const prompts = gate.promptsFor();
    server.setRequestHandler('prompts/list', () => ({
      prompts: prompts.map((p) => ({ name: p.name, ...(p.description ? { description: p.description } : {}), arguments: [...(p.arguments ?? [])] })),
    }));
    server.setRequestHandler('prompts/get', (request) => {
      const def = prompts.find((p) => p.name === request.params.name);
      if (def?.messages === undefined) throw new Error('no such prompt');
      return { messages: renderPrompt(def as Parameters<typeof renderPrompt>[0], request.params.arguments ?? {}) };
    });
    return server;
  };
}

async function connect(
  era: Era,
  gate: ReflectionGate,
  model?: Model,
): Promise<{ client: AnyClient; samplingRequests: CreateMessageRequest[]; runs: string[] }> {
  const runs: string[] = [];
  const samplingRequests: CreateMessageRequest[] = [];
  const handler = async (req: CreateMessageRequest) => {
    samplingRequests.push(req);
    return { role: 'assistant' as const, model: 'fake', content: { type: 'text' as const, text: await (model as Model)(req) } };
  };
  const client = await linkedClient(factoryFor(gate, runs), era, {
    ...(model ? { capabilities: { sampling: {} } } : {}),
    setup: (c) => {
      if (!model) return;
      if (era === 'legacy') (c as LegacyClient).setRequestHandler(CreateMessageRequestSchema, (req) => handler(req as CreateMessageRequest));
      else
        (c as unknown as { setRequestHandler: (m: string, h: (r: CreateMessageRequest) => unknown) => void }).setRequestHandler(
          'sampling/createMessage',
          handler,
        );
    },
  });
  open.push(client);
  await client.listTools();
  return { client, samplingRequests, runs };
}

const ARGS = { src: 'EPSG:4326', dst: 'EPSG:3857' };
const call = (client: AnyClient, name: string, args: Record<string, unknown> = ARGS) =>
  (client as LegacyClient).callTool({ name, arguments: args }) as Promise<CallToolResult>;
const textOf = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const hintOf = (r: CallToolResult): GateHint => r.structuredContent as unknown as GateHint;
const keyOf = (h: GateHint): string => h.hash.split('.')[0] as string;
/** Text of a sampling message's content (a block or an array of blocks). */
const samplingText = (content: unknown): string =>
  ((Array.isArray(content) ? content : content === undefined ? [] : [content]) as { type: string; text?: string }[])
    .map((c) => (c.type === 'text' ? (c.text ?? '') : ''))
    .join('\n');

describe.each(ERAS)('%s era', (era) => {
  describe('reflection gate: host flow (client without sampling)', () => {
    it('hints, serves the prompt, persists, then the retry runs the tool', async () => {
      const gate = new ReflectionGate(baseConfig());
      const { client, runs } = await connect(era, gate);
      expect(await call(client, 'plain')).toMatchObject({ content: [{ text: 'ran plain' }] });

      const miss = await call(client, 'reproject');
      expect(miss.isError).toBe(true);
      const hint = hintOf(miss);
      const expectedHash = gateKey({ domain: 'crs', templateText: CRS_TEMPLATE, promptArgs: { source: 'EPSG:4326', target: 'EPSG:3857' } });
      expect(hint).toEqual({
        prompt: 'justify_crs',
        prompt_args: { source: 'EPSG:4326', target: 'EPSG:3857' },
        hash: expect.stringMatching(/^[0-9a-f]{64}\.\d+\.[A-Za-z0-9_-]+$/),
        domain: 'crs',
        remaining: 1,
      });
      expect(keyOf(hint)).toBe(expectedHash);
      // valid about 24 h
      const expiry = Number(hint.hash.split('.')[1]) * 1000;
      expect(Math.abs(expiry - Date.now() - 24 * 3600_000)).toBeLessThan(60_000);
      const text = textOf(miss);
      expect(text).toContain('1. Get the prompt: prompts/get with name "justify_crs"');
      expect(text).toContain('2. Have the model answer it with only a JSON object');
      expect(text).toContain(`3. Call the tool persist_justification with {"hash": "${hint.hash}", "domain": "crs"`);
      expect(text).toContain('Then call reproject again with the same arguments.');
      expect(text).toContain('Before reprojecting from EPSG:4326 to EPSG:3857');
      expect(JSON.parse(miss.content[1]?.type === 'text' ? miss.content[1].text : '')).toEqual(hint);

      const prompt = await client.getPrompt({ name: hint.prompt, arguments: hint.prompt_args });
      expect(prompt.messages).toEqual([
        { role: 'user', content: { type: 'text', text: 'Before reprojecting from EPSG:4326 to EPSG:3857, justify the target CRS.' } },
      ]);

      const stored = await call(client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: hint.domain, justification: GOOD });
      expect(stored.isError).toBeFalsy();
      expect(textOf(stored)).toMatch(/Justification stored .* call reproject again/);
      const file = JSON.parse(readFileSync(path.join(gate.store.dir, 'crs', `${expectedHash}.json`), 'utf8')) as Record<string, unknown>;
      expect(file).toMatchObject({
        hash: expectedHash,
        domain: 'crs',
        tool: 'reproject',
        prompt: 'justify_crs',
        promptArgs: hint.prompt_args,
        justification: GOOD,
        source: 'host',
      });

      expect(await call(client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
      expect(await call(client, 'reproject', { dst: 'EPSG:3857  ', src: ' EPSG:4326' })).toMatchObject({ content: [{ text: 'ran reproject' }] });
      expect(runs).toEqual(['plain', 'reproject', 'reproject']);
      expect((await call(client, 'reproject', { ...ARGS, dst: 'EPSG:2154' })).isError).toBe(true);
    });

    it('lists the gate prompts with their arguments and the persist tool with domains and schema', async () => {
      const gate = new ReflectionGate(baseConfig());
      const { client } = await connect(era, gate);
      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(['justify_crs', 'justify_datum']);
      expect(prompts[0]?.arguments).toEqual([
        { name: 'source', required: true },
        { name: 'target', required: true },
      ]);
      const persist = (await client.listTools()).tools.find((t) => t.name === PERSIST_TOOL_NAME);
      expect(persist?.inputSchema).toMatchObject({
        required: ['hash', 'domain', 'justification'],
        properties: { domain: { enum: ['crs', 'datum'] }, justification: { required: ['intent', 'alternatives', 'choice', 'confidence'] } },
      });
      expect(persist?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    });

    it('satisfies chained gates one after another', async () => {
      const gate = new ReflectionGate(baseConfig());
      const { client, runs } = await connect(era, gate);
      const first = hintOf(await call(client, 'transform'));
      expect(first).toMatchObject({ domain: 'crs', remaining: 2 });
      expect((await call(client, PERSIST_TOOL_NAME, { hash: first.hash, domain: 'crs', justification: GOOD })).isError).toBeFalsy();
      const second = hintOf(await call(client, 'transform'));
      expect(second).toMatchObject({ domain: 'datum', prompt: 'justify_datum', prompt_args: { source: 'EPSG:4326' }, remaining: 1 });
      expect((await call(client, PERSIST_TOOL_NAME, { hash: second.hash, domain: 'datum', justification: GOOD })).isError).toBeFalsy();
      expect(await call(client, 'transform')).toMatchObject({ content: [{ text: 'ran transform' }] });
      expect(runs).toEqual(['transform']);
    });

    it('counts only the unsatisfied gates in remaining', async () => {
      const gate = new ReflectionGate(baseConfig());
      const { client } = await connect(era, gate);
      // `structured` has the same datum gate: satisfying it satisfies the second gate of `transform`
      const miss = await call(client, 'structured');
      const datumHint = JSON.parse(miss.content[1]?.type === 'text' ? miss.content[1].text : '') as GateHint;
      await call(client, PERSIST_TOOL_NAME, { hash: datumHint.hash, domain: 'datum', justification: GOOD });
      expect(hintOf(await call(client, 'transform'))).toMatchObject({ domain: 'crs', remaining: 1 });
    });

    it('shares a domain-scoped justification between tools, not a tool-scoped one', async () => {
      const shared = new ReflectionGate(baseConfig());
      const a = await connect(era, shared);
      const hint = hintOf(await call(a.client, 'reproject'));
      await call(a.client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: 'crs', justification: GOOD });
      expect(await call(a.client, 'warp')).toMatchObject({ content: [{ text: 'ran warp' }] });

      const perTool = new ReflectionGate(baseConfig({ scope: 'tool' }));
      const b = await connect(era, perTool);
      const h1 = hintOf(await call(b.client, 'reproject'));
      await call(b.client, PERSIST_TOOL_NAME, { hash: h1.hash, domain: 'crs', justification: GOOD });
      expect(await call(b.client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
      const h2 = hintOf(await call(b.client, 'warp'));
      expect(keyOf(h2)).not.toBe(keyOf(h1));
      expect(keyOf(h1)).toBe(gateKey({ domain: 'crs', templateText: CRS_TEMPLATE, promptArgs: h1.prompt_args, tool: 'reproject' }));
    });

    it('a changed template gives a new key, so old justifications are not hit', async () => {
      const config = baseConfig();
      const gate = new ReflectionGate(config);
      const { client } = await connect(era, gate);
      const hint = hintOf(await call(client, 'reproject'));
      await call(client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: 'crs', justification: GOOD });
      expect((await call(client, 'reproject')).isError).toBeFalsy();

      const changed = new ReflectionGate({ ...config, gates: { reproject: [{ ...crsGate, template: CRS_TEMPLATE + ' Be brief.' }] } });
      const next = await connect(era, changed);
      const again = await call(next.client, 'reproject');
      expect(again.isError).toBe(true);
      expect(keyOf(hintOf(again))).not.toBe(keyOf(hint));
    });

    it('treats a stored justification that no longer matches the schema as a miss', async () => {
      const config = baseConfig();
      const gate = new ReflectionGate(config);
      const { client } = await connect(era, gate);
      const hint = hintOf(await call(client, 'reproject'));
      await call(client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: 'crs', justification: GOOD });
      const stricter = new ReflectionGate({ ...config, justificationSchema: { type: 'object', required: ['risk'] } });
      const next = await connect(era, stricter);
      expect((await call(next.client, 'reproject')).isError).toBe(true);
    });

    it('keeps structuredContent out of the hint of a tool with an output schema', async () => {
      const gate = new ReflectionGate(baseConfig({ gates: { structured: [datumGate], structured_unlisted: [datumGate] } }));
      const { client } = await connect(era, gate);
      const miss = await call(client, 'structured');
      expect(miss.isError).toBe(true);
      expect(miss.structuredContent).toBeUndefined();
      expect(JSON.parse(miss.content[1]?.type === 'text' ? miss.content[1].text : '')).toMatchObject({ domain: 'datum', remaining: 1 });
      // why: the v1 SDK client checks structuredContent against the output schema even on isError
      if (era === 'legacy') await expect(call(client, 'structured_unlisted')).rejects.toThrow(/output schema/);
    });
  });

  describe('reflection gate: persist_justification refusals', () => {
    async function issued(): Promise<{ client: AnyClient; hint: GateHint; gate: ReflectionGate }> {
      const gate = new ReflectionGate(baseConfig({ store: { maxJustificationBytes: 2048 } }));
      const { client } = await connect(era, gate);
      return { client, gate, hint: hintOf(await call(client, 'reproject')) };
    }
    const persist = async (client: AnyClient, args: unknown): Promise<string> => {
      const r = await call(client, PERSIST_TOOL_NAME, args as Record<string, unknown>);
      expect(r.isError).toBe(true);
      return textOf(r);
    };

    it('refuses forged, foreign-key or malformed hashes', async () => {
      const { client, hint, gate } = await issued();
      const bare = gateKey({ domain: 'crs', templateText: CRS_TEMPLATE, promptArgs: { source: 'x', target: 'y' } });
      const malformed = 'hash: must be the `hash` of a gate hint exactly as given';
      expect(await persist(client, { hash: bare, domain: 'crs', justification: GOOD })).toContain(malformed);
      expect(await persist(client, { hash: `sha256:${hint.hash}`, domain: 'crs', justification: GOOD })).toContain(malformed);
      expect(await persist(client, { hash: hint.hash.toUpperCase(), domain: 'crs', justification: GOOD })).toContain(malformed);
      expect(await persist(client, { hash: 42, domain: 'crs', justification: GOOD })).toContain(malformed);
      const foreign = signHint(randomBytes(32), bare, 'crs', 60_000);
      expect(await persist(client, { hash: foreign, domain: 'crs', justification: GOOD })).toContain(
        'hash: was not issued by this server nor by one sharing its state key',
      );
      // a signed hash whose key part was swapped
      const [, expiry, mac] = hint.hash.split('.');
      expect(await persist(client, { hash: `${bare}.${expiry}.${mac}`, domain: 'crs', justification: GOOD })).toContain(
        'hash: was not issued by this server nor by one sharing its state key',
      );
      expect(await gate.store.get('crs', bare)).toBeUndefined();
    });

    it('refuses an expired hint, saying to call the gated tool again', async () => {
      const gate = new ReflectionGate(baseConfig({ hintTtlMs: 1 }));
      const { client } = await connect(era, gate);
      const hint = hintOf(await call(client, 'reproject'));
      await new Promise((r) => setTimeout(r, 1100));
      const text = await persist(client, { hash: hint.hash, domain: 'crs', justification: GOOD });
      expect(text).toMatch(/- hash: this hint expired at \d{4}-\d\d-\d\dT[^;]+; call the gated tool again with the same arguments for a fresh hint/);
      expect(await gate.store.get('crs', keyOf(hint))).toBeUndefined();
    });

    it('refuses traversal, undeclared and mismatched domains', async () => {
      const { client, hint, gate } = await issued();
      expect(await persist(client, { hash: hint.hash, domain: '../x', justification: GOOD })).toContain(
        'domain: must be one of the declared reflection domains ("crs", "datum")',
      );
      expect(await persist(client, { hash: hint.hash, domain: '../../etc', justification: GOOD })).toContain('domain: must be one of the declared');
      expect(await persist(client, { hash: hint.hash, domain: 'other', justification: GOOD })).toContain('domain: must be one of the declared');
      expect(await persist(client, { hash: hint.hash, domain: 'datum', justification: GOOD })).toContain(
        'domain: must be "crs", the domain of the hint that issued this hash',
      );
      expect(await gate.store.get('crs', keyOf(hint))).toBeUndefined();
    });

    it('reports invalid justifications field by field', async () => {
      const { client, hint } = await issued();
      const text = await persist(client, {
        hash: hint.hash,
        domain: 'crs',
        justification: { alternatives: ['a', 3], choice: '', confidence: 1.5, extra: true },
      });
      expect(text).toContain('- justification.confidence: must be <= 1');
      expect(text).toContain('- justification.intent: is required');
      expect(text).toContain('- justification.alternatives[1]: must be string');
      expect(text).toContain('- justification.choice: must NOT have fewer than 1 characters');
      expect(text).toContain('- justification.extra: is not an accepted property');
      expect(await persist(client, { hash: hint.hash, domain: 'crs', justification: 'because' })).toContain('- justification: must be object');
    });

    it('refuses missing fields, unknown arguments and oversize justifications', async () => {
      const { client, hint } = await issued();
      const missing = await persist(client, {});
      expect(missing).toContain('- hash: is required');
      expect(missing).toContain('- domain: is required');
      expect(missing).toContain('- justification: is required');
      expect(await persist(client, { hash: hint.hash, domain: 'crs', justification: GOOD, note: 1 })).toContain('- note: is not an accepted argument');
      expect(await persist(client, { hash: hint.hash, domain: 'crs', justification: { ...GOOD, intent: 'x'.repeat(5000) } })).toMatch(
        /justification: is \d+ bytes of JSON; the limit is 2048 bytes/,
      );
    });
  });

  describe('reflection gate: sampling (client with sampling)', () => {
    it('asks the model, validates, persists and runs in one call; then hits the cache with no sampling', async () => {
      const gate = new ReflectionGate(baseConfig());
      const { client, samplingRequests, runs } = await connect(
        era,
        gate,
        () => 'Sure! Here it is:\n```json\n' + JSON.stringify(GOOD) + '\n```\nHope that helps.',
      );
      expect(await call(client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
      expect(samplingRequests).toHaveLength(1);
      const params = samplingRequests[0]?.params;
      expect(params?.maxTokens).toBe(800);
      expect(params?.systemPrompt).toMatch(/exactly one JSON object/);
      expect(samplingText(params?.messages[0]?.content)).toContain('Before reprojecting from EPSG:4326 to EPSG:3857, justify the target CRS.');
      const hash = gateKey({ domain: 'crs', templateText: CRS_TEMPLATE, promptArgs: { source: 'EPSG:4326', target: 'EPSG:3857' } });
      expect(await gate.store.get('crs', hash)).toMatchObject({ source: 'sampling', justification: GOOD, tool: 'reproject' });

      expect(await call(client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
      expect(await call(client, 'warp')).toMatchObject({ content: [{ text: 'ran warp' }] });
      expect(samplingRequests).toHaveLength(1);
      expect(runs).toEqual(['reproject', 'reproject', 'warp']);
    });

    it('retries once with the validation errors, then succeeds', async () => {
      const gate = new ReflectionGate(baseConfig());
      const replies = [JSON.stringify({ ...GOOD, confidence: 7 }), `{"intent": "x", "alternatives": [], "choice": "y", "confidence": 0.5}`];
      const { client, samplingRequests } = await connect(era, gate, () => replies.shift() ?? '');
      expect(await call(client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
      expect(samplingRequests).toHaveLength(2);
      const retry = samplingRequests[1]?.params.messages ?? [];
      expect(retry.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(samplingText(retry[2]?.content)).toContain('justification.confidence: must be <= 1');
    });

    it('falls back to the host hint after two invalid answers (mode auto)', async () => {
      const gate = new ReflectionGate(baseConfig());
      const { client, samplingRequests } = await connect(era, gate, () => 'I would rather not.');
      const miss = await call(client, 'reproject');
      expect(miss.isError).toBe(true);
      expect(hintOf(miss)).toMatchObject({ domain: 'crs', remaining: 1 });
      expect(samplingRequests).toHaveLength(2);
      const hint = hintOf(miss);
      expect((await call(client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: 'crs', justification: GOOD })).isError).toBeFalsy();
      expect(await call(client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
      expect(samplingRequests).toHaveLength(2);
    });

    it('a refused sampling request: legacy falls back to the hint (mode auto) or explains (mode sampling); a modern client fails its own call', async () => {
      const decline = () => {
        throw new Error('user declined');
      };
      const gate = new ReflectionGate(baseConfig());
      const { client, runs } = await connect(era, gate, decline);
      const outcome = await call(client, 'reproject').then(
        (r) => r,
        (err: unknown) => err as Error,
      );
      expect(runs).toEqual([]);
      if (era === 'legacy') {
        // the server sent the request itself and heard the refusal: the host flow can still satisfy the gate
        const result = outcome as CallToolResult;
        expect(result.isError).toBe(true);
        expect(hintOf(result)).toMatchObject({ domain: 'crs', remaining: 1 });
        expect(logs.some((l) => l.includes('sampling refused or failed for reproject (crs)'))).toBe(true);
        const strict = await connect(era, new ReflectionGate(baseConfig({ mode: 'sampling' })), decline);
        const refused = await call(strict.client, 'reproject');
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain('- sampling: the client refused or failed the request: ');
        expect(textOf(refused)).toContain('user declined');
      } else {
        // the 2026-07-28 client answers input requests itself: its model's refusal never reaches the server
        expect(String(outcome instanceof Error ? outcome.message : textOf(outcome))).toMatch(/user declined/);
      }
    });

    it('sampling.timeoutMs bounds the wait for a silent model: the call returns the hint, and the late answer is never used', async () => {
      let release: () => void = () => {};
      const silent = new Promise<void>((resolve) => (release = resolve));
      const gate = new ReflectionGate(baseConfig({ sampling: { timeoutMs: 100 } }));
      const { client, samplingRequests, runs } = await connect(era, gate, async () => {
        await silent; // answers only once the test lets it, long after the timeout
        return JSON.stringify(GOOD);
      });
      try {
        if (era === 'legacy') {
          // without the timeout this call would wait for the SDK's own round timeout (10 minutes)
          const miss = await call(client, 'reproject');
          expect(miss.isError).toBe(true);
          expect(hintOf(miss)).toMatchObject({ domain: 'crs', remaining: 1 });
          expect(samplingRequests).toHaveLength(1);
          expect(runs).toEqual([]);
          expect(logs.some((l) => l.includes('no sampled justification in time for reproject (crs)'))).toBe(true);
        } else {
          // a modern client holds its own call while its model thinks; the server judges the answer when it comes
          const pending = call(client, 'reproject');
          // the deadline was set before the request reached the model: release the answer well after it
          while (samplingRequests.length === 0) await new Promise((r) => setTimeout(r, 10));
          await new Promise((r) => setTimeout(r, 150));
          release();
          const late = await pending;
          expect(late.isError).toBe(true);
          expect(hintOf(late)).toMatchObject({ domain: 'crs', remaining: 1 });
          expect(runs).toEqual([]);
        }
      } finally {
        release();
      }
    });

    it('remembers gate 1 of a chain in the round state, even when the store cannot keep it', async () => {
      const gate = new ReflectionGate(
        baseConfig({
          store: {
            beforeRename: () => {
              throw new Error('disk full');
            },
          },
        }),
      );
      const { client, samplingRequests, runs } = await connect(era, gate, () => JSON.stringify(GOOD));
      expect(await call(client, 'transform')).toMatchObject({ content: [{ text: 'ran transform' }] });
      expect(samplingRequests.map((r) => samplingText(r.params.messages[0]?.content).split('\n')[0])).toEqual([
        'Before reprojecting from EPSG:4326 to EPSG:3857, justify the target CRS.',
        'Justify the datum transformation for EPSG:4326.',
      ]);
      expect(runs).toEqual(['transform']);
      expect(logs.some((l) => l.includes('cannot store the sampled justification crs/'))).toBe(true);
    });

    it('a reply after the sampling timeout is refused like an invalid one (fallback to the hint)', async () => {
      const gate = new ReflectionGate(baseConfig({ sampling: { timeoutMs: 50 } }));
      const { client, samplingRequests } = await connect(era, gate, async () => {
        await new Promise((r) => setTimeout(r, 120));
        return JSON.stringify(GOOD);
      });
      const miss = await call(client, 'reproject');
      expect(miss.isError).toBe(true);
      expect(hintOf(miss)).toMatchObject({ domain: 'crs', remaining: 1 });
      expect(samplingRequests).toHaveLength(1);
      const strict = new ReflectionGate(baseConfig({ mode: 'sampling', sampling: { timeoutMs: 50 } }));
      const late = await connect(era, strict, async () => {
        await new Promise((r) => setTimeout(r, 120));
        return JSON.stringify(GOOD);
      });
      expect(textOf(await call(late.client, 'reproject'))).toContain("- sampling: the client's model did not answer within 50 ms");
    });

    it('chained gates are sampled one after another', async () => {
      const gate = new ReflectionGate(baseConfig());
      const { client, samplingRequests } = await connect(era, gate, () => JSON.stringify(GOOD));
      expect(await call(client, 'transform')).toMatchObject({ content: [{ text: 'ran transform' }] });
      expect(samplingRequests).toHaveLength(2);
    });

    it('mode host never samples', async () => {
      const gate = new ReflectionGate(baseConfig({ mode: 'host' }));
      const { client, samplingRequests } = await connect(era, gate, () => JSON.stringify(GOOD));
      expect(hintOf(await call(client, 'reproject'))).toMatchObject({ domain: 'crs' });
      expect(samplingRequests).toHaveLength(0);
    });

    it('mode sampling fails without client sampling and never hints', async () => {
      const gate = new ReflectionGate(baseConfig({ mode: 'sampling' }));
      expect(gate.exposesPersistTool).toBe(false);
      const { client } = await connect(era, gate);
      const r = await call(client, 'reproject');
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toBeUndefined();
      expect(textOf(r)).toMatch(
        /the client does not support MCP sampling, which this server requires for its reflection gates \(reflection mode "sampling"\)\.$/,
      );

      const withModel = await connect(era, gate, () => 'nope');
      const bad = await call(withModel.client, 'reproject');
      expect(bad.structuredContent).toBeUndefined();
      expect(textOf(bad)).toContain("no valid justification could be obtained from the client's model:\n- justification: the reply contained no JSON object");
      expect(textOf(bad)).toMatch(/\nCalling the tool again asks again\.$/);
    });
  });

  describe('reflection gate: hints across instances', () => {
    it('accepts a hint issued by another instance with the same key (no memory of it)', async () => {
      const config = baseConfig();
      const a = await connect(era, new ReflectionGate(config));
      const gateB = new ReflectionGate({ ...config });
      const b = await connect(era, gateB);
      const hint = hintOf(await call(a.client, 'reproject'));
      const stored = await call(b.client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: 'crs', justification: GOOD });
      expect(stored.isError).toBeFalsy();
      expect(textOf(stored)).toContain(`Justification stored (domain "crs", hash ${keyOf(hint)}). Now call the gated tool again with the same arguments.`);
      const record = await gateB.store.get('crs', keyOf(hint));
      expect(record).toMatchObject({ hash: keyOf(hint), domain: 'crs', prompt: 'justify_crs', promptArgs: {}, justification: GOOD, source: 'host' });
      expect(record?.tool).toBeUndefined();
      // both instances share the store: the retry runs on either
      expect(await call(a.client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
      expect(await call(b.client, 'reproject')).toMatchObject({ content: [{ text: 'ran reproject' }] });
    });

    it('refuses a hint signed under another key', async () => {
      const config = baseConfig();
      const a = await connect(era, new ReflectionGate(config));
      const other = new ReflectionGate({ ...config, stateKey: randomBytes(32) });
      const c = await connect(era, other);
      const hint = hintOf(await call(a.client, 'reproject'));
      const refused = await call(c.client, PERSIST_TOOL_NAME, { hash: hint.hash, domain: 'crs', justification: GOOD });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(
        '- hash: was not issued by this server nor by one sharing its state key (signed under another key, or altered); call the gated tool again',
      );
      expect(await other.store.get('crs', keyOf(hint))).toBeUndefined();
    });
  });

  describe('reflection gate: configuration', () => {
    it('refuses undeclared domains and one prompt with two templates', () => {
      expect(() => new ReflectionGate(baseConfig({ gates: { a: [{ ...crsGate, domain: 'nope' }] } }))).toThrow(/not declared/);
      expect(() => new ReflectionGate(baseConfig({ gates: { a: [crsGate], b: [{ ...crsGate, template: 'other' }] } }))).toThrow(/two different templates/);
    });

    it('marks a prompt argument optional when some gate does not supply it', () => {
      const gate = new ReflectionGate(baseConfig({ gates: { a: [crsGate], b: [{ ...crsGate, promptArgs: { source: '{{src}}' } }] } }));
      expect(gate.promptsFor()[0]?.arguments).toEqual([
        { name: 'source', required: true },
        { name: 'target', required: false },
      ]);
      expect(gate.gatedTools()).toEqual(['a', 'b']);
    });

    it('renders prompt arguments from nested tool arguments and the json helper', async () => {
      const gate = new ReflectionGate(baseConfig({ gates: { t: [{ ...datumGate, promptArgs: { source: '{{body.crs}} {{json body.opts}}' } }] } }));
      const { client } = await connect(era, gate);
      const hint = hintOf(await call(client, 't', { body: { crs: 'EPSG:2154', opts: { a: 1 } } }));
      expect(hint.prompt_args).toEqual({ source: 'EPSG:2154 {"a":1}' });
    });

    it('renders {{json}} canonically, so key order in the tool arguments does not change the key', async () => {
      const gate = new ReflectionGate(baseConfig({ gates: { t: [{ ...datumGate, promptArgs: { source: '{{json body}}' } }] } }));
      const { client } = await connect(era, gate);
      const a = hintOf(await call(client, 't', { body: { b: [1, { y: 2, x: 1 }], a: 'z' } }));
      const b = hintOf(await call(client, 't', { body: { a: 'z', b: [1, { x: 1, y: 2 }] } }));
      expect(a.prompt_args).toEqual({ source: '{"a":"z","b":[1,{"x":1,"y":2}]}' });
      expect(keyOf(b)).toBe(keyOf(a));
    });

    it('gates only the tools it names: inherited property names are not gates', () => {
      const gate = new ReflectionGate(baseConfig());
      expect(['constructor', 'toString', '__proto__', 'plain'].map((t) => gate.isGated(t))).toEqual([false, false, false, false]);
      expect(['reproject', 'transform'].map((t) => gate.isGated(t))).toEqual([true, true]);
    });
  });
});

describe('reflectionConfigFromEnv', () => {
  const config: ReflectionConfig = { storeDir: 'a', domains: ['crs'], gates: {} };
  it('adds the state key, and reads the store directory and hint lifetime overrides', () => {
    expect(reflectionConfigFromEnv(config, 'PET', KEY, {})).toEqual({ ...config, stateKey: KEY });
    expect(hintTtlVariable('PET')).toBe('PET_HINT_TTL_MS');
    expect(reflectionConfigFromEnv(config, 'PET', KEY, { PET_REFLECTION_DIR: '/tmp/j', PET_HINT_TTL_MS: ' 3600000 ' })).toEqual({
      ...config,
      stateKey: KEY,
      storeDir: '/tmp/j',
      hintTtlMs: 3_600_000,
    });
    expect(reflectionConfigFromEnv(config, 'PET', KEY, { PET_REFLECTION_DIR: '', PET_HINT_TTL_MS: '' })).toEqual({ ...config, stateKey: KEY });
    expect(() => reflectionConfigFromEnv(config, 'PET', KEY, { PET_HINT_TTL_MS: '1h' })).toThrow(
      /PET_HINT_TTL_MS must be a positive whole number of milliseconds/,
    );
  });

  it('the gate needs the key', () => {
    expect(() => new ReflectionGate({ ...config, stateKey: undefined as unknown as Buffer })).toThrow(/state key/);
  });
});

describe('what a stored justification holds', () => {
  it('is redacted like the audit trail: secrets anywhere and the configured fields, prompt arguments too', async () => {
    const secret = 'sk-live-0123456789abcdef';
    const gate = new ReflectionGate(baseConfig({ justificationSchema: { type: 'object' }, redact: { fields: ['ssn'], secrets: () => [secret] } }));
    const { client } = await connect('modern', gate);
    const hint = hintOf(await call(client, 'reproject', { src: `key ${secret}`, dst: 'EPSG:3857' }));
    const justification = { ...GOOD, intent: `tiles for ${secret}`, ssn: '123-45-6789', alternatives: ['EPSG:4326', `x${secret}y`] };
    const stored = await (client as LegacyClient).callTool({ name: PERSIST_TOOL_NAME, arguments: { hash: hint.hash, domain: 'crs', justification } });
    expect(stored.isError).toBeFalsy();
    const text = readFileSync(gate.store.pathFor('crs', keyOf(hint)), 'utf8');
    expect(text).not.toContain(secret);
    expect(text).not.toContain('123-45-6789');
    const record = JSON.parse(text) as { justification: Record<string, unknown>; promptArgs: Record<string, string> };
    expect(record.justification).toMatchObject({ intent: 'tiles for [redacted]', ssn: '[redacted]', alternatives: ['EPSG:4326', 'x[redacted]y'] });
    expect(record.promptArgs.source).toBe('key [redacted]');
  });

  it('a store that cannot be written tells the client what kind of failure, never the server path', async () => {
    const blocker = path.join(work, `blocker${++dirs}`);
    // the store directory's parent is a file: mkdir fails (ENOTDIR) with the path in its message
    writeFileSync(blocker, 'not a directory');
    const gate = new ReflectionGate(baseConfig({ storeDir: path.join(blocker, 'store') }));
    const { client } = await connect('modern', gate);
    const hint = hintOf(await call(client, 'reproject'));
    const res = (await (client as LegacyClient).callTool({
      name: PERSIST_TOOL_NAME,
      arguments: { hash: hint.hash, domain: 'crs', justification: GOOD },
    })) as CallToolResult;
    expect(res.isError).toBe(true);
    expect(textOf(res)).toMatch(/^Cannot store the justification: the server could not write it \(E[A-Z]+\); try again later$/);
    expect(textOf(res)).not.toContain(work);
  });
});

describe('how the gate tells the caller to run the call again', () => {
  // a legacy call of a client without sampling or elicitation: the gate answers with its host-flow instructions
  const call = (retry?: string) => ({
    server: { getClientCapabilities: () => ({}) } as unknown as Server,
    ctx: {} as never,
    era: 'legacy' as const,
    signal: new AbortController().signal,
    callId: 'c1',
    state: {},
    ...(retry !== undefined ? { retry } : {}),
  });

  it("ends the instructions with the caller's own retry (code mode, call_tool), else with the tool again; the sentence is built once, in the gate", async () => {
    const gate = new ReflectionGate(baseConfig());
    const plain = await gate.check('reproject', {}, call());
    expect(plain.ok).toBe(false);
    const plainText = textOf((plain as { result: CallToolResult }).result);
    expect(plainText).toContain('\nThen call reproject again with the same arguments.\n');
    const own = await gate.check('reproject', {}, call('Then run execute again with the same code.'));
    const ownText = textOf((own as { result: CallToolResult }).result);
    expect(ownText).toContain('\nThen run execute again with the same code.\n');
    expect(ownText).not.toContain('Then call reproject again');
    // everything else is the same instructions
    const rest = (text: string, retry: string): string => text.replace(retry, '').replace(/[0-9a-f]{64}\.\d+\.[A-Za-z0-9_-]+/g, '<hash>');
    expect(rest(ownText, 'Then run execute again with the same code.')).toBe(rest(plainText, 'Then call reproject again with the same arguments.'));
  });
});

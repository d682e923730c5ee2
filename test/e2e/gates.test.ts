/**
 * The reflection gate and preprocessors end to end: the committed `examples/petstore-guarded`
 * project (Petstore with two chained gates on deletePet and one on updatePet, and two
 * preprocessors, `pet_lookup` after `house_rules`) is checked against its manifest (`--check`),
 * copied into `.cache/gates`, compiled with tsc and started over stdio once per SDK `Client`,
 * against the example's HTTP backend on 127.0.0.1. Each client gets its own justification store
 * (`PETSTORE_GUARDED_REFLECTION_DIR`).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, CreateMessageRequest, LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { startBackend } from '../../examples/petstore/backend.mjs';
import { main } from '../../src/cli/main.js';
import { runPreprocessors, toSystemContext } from '../../templates/runtime/preprocessors/preprocessors-host.js';
import { rejection } from '../helpers/mcp.js';
import { ROOT, run, typecheck } from '../helpers/project.js';

const EXAMPLE = path.join(ROOT, 'examples/petstore-guarded');
const work = path.join(ROOT, '.cache/gates');
const project = path.join(work, 'server');
const GOOD = {
  intent: 'remove a duplicate record',
  alternatives: ['mark it sold', 'leave it'],
  choice: 'delete: the record was entered twice',
  confidence: 0.9,
};
const HEX64 = /^[0-9a-f]{64}$/;
/** A hint's hash: the 64-hex key of the justification, its expiry and an HMAC under the server's state key. */
const SIGNED = /^[0-9a-f]{64}\.[0-9]+\.[A-Za-z0-9_-]+$/;
const key = (hash: string) => hash.split('.')[0]!;

type Backend = { url: string; server: { close(): void }; requests: Array<{ method: string; path: string; body: string }> };
let backend: Backend;
/** A server on 127.0.0.1 that accepts requests and never answers them (for timeouts). */
let silent: { url: string; server: http.Server };
const clients: Client[] = [];

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  cpSync(path.join(EXAMPLE, 'server'), project, { recursive: true, filter: (src) => !/[\\/](node_modules|dist|\.preflight)$/.test(src) });
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', 'examples/petstore-guarded/mcpgen.yaml', '--out', path.relative(ROOT, project), '--check'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  backend = (await startBackend({ port: 0 })) as Backend;
  const hung = http.createServer(() => undefined);
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  silent = { url: `http://127.0.0.1:${(hung.address() as AddressInfo).port}`, server: hung };
});

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  backend?.server.close();
  silent?.server.closeAllConnections();
  silent?.server.close();
});

type Model = (req: CreateMessageRequest) => string;
type Session = { client: Client; store: string; sampling: CreateMessageRequest[]; logs: LoggingMessageNotification['params'][]; stderr: () => string };

/** Starts one server process with a fresh store and connects a Client; `model` makes it a client with sampling. */
async function connect(opts: { model?: Model; baseUrl?: string; env?: Record<string, string>; store?: string } = {}): Promise<Session> {
  const store = opts.store ?? mkdtempSync(path.join(work, 'store-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(project, 'dist/server.js')],
    env: {
      PATH: process.env.PATH ?? '',
      PETSTORE_GUARDED_BASE_URL: opts.baseUrl ?? backend.url,
      PETSTORE_GUARDED_REFLECTION_DIR: store,
      PETSTORE_GUARDED_LOG_LEVEL: 'debug',
      ...opts.env,
    },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (chunk: Buffer) => void (err += chunk.toString('utf8')));
  const client = new Client({ name: 'gates-e2e', version: '1' }, opts.model ? { capabilities: { sampling: {} } } : {});
  const sampling: CreateMessageRequest[] = [];
  if (opts.model) {
    const model = opts.model;
    client.setRequestHandler(CreateMessageRequestSchema, (req) => {
      sampling.push(req);
      return { role: 'assistant', model: 'scripted', content: { type: 'text', text: model(req) } };
    });
  }
  const logs: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
  await client.connect(transport);
  clients.push(client);
  return { client, store, sampling, logs, stderr: () => err };
}

const call = (s: Session, name: string, args: Record<string, unknown>) => s.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const samplingText = (req: CreateMessageRequest) =>
  req.params.messages.map((m) => (Array.isArray(m.content) ? m.content : [m.content]).map((c) => (c.type === 'text' ? c.text : '')).join('')).join('\n');
/** Justification files of a store: `<domain>/<hash>.json`, sorted. */
const stored = (store: string) =>
  existsSync(store)
    ? readdirSync(store, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.json'))
        .sort()
    : [];
type Hint = { prompt: string; prompt_args: Record<string, string>; hash: string; domain: string; remaining: number };

describe('what the justification store keeps', () => {
  it('secrets are redacted from stored justifications, stale temp files of crashed writes are removed at start, and a store error shows the client no server path', async () => {
    const secret = 'state-key-0123456789abcdef0123456789abcdef';
    const store = mkdtempSync(path.join(work, 'store-'));
    // what a crash between writing and renaming leaves, an hour ago; and one a writer may still be renaming
    mkdirSync(path.join(store, 'pets'), { recursive: true });
    const stale = path.join(store, 'pets', `${'a'.repeat(64)}.json.123.0123456789ab.tmp`);
    const fresh = path.join(store, 'pets', `${'b'.repeat(64)}.json.123.0123456789ab.tmp`);
    writeFileSync(stale, '{');
    writeFileSync(fresh, '{');
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(stale, hourAgo, hourAgo);
    const s = await connect({ store, env: { PETSTORE_GUARDED_STATE_KEY: secret }, model: () => JSON.stringify({ ...GOOD, intent: `the key is ${secret}` }) });
    // a pet of its own: the other tests share the backend's pets
    const created = await call(s, 'createPet', { body: { name: 'Doomed', status: 'available' } });
    const id = (created.structuredContent as { id: number }).id;
    const result = await call(s, 'deletePet', { petId: id });
    expect(result.isError, text(result)).toBeFalsy();
    const files = stored(store);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const body = readFileSync(path.join(store, f), 'utf8');
      expect(body).not.toContain(secret);
      expect(JSON.parse(body)).toMatchObject({ justification: { intent: 'the key is [redacted]' } });
    }
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(fresh)).toBe(true);

    // the host flow against a store that cannot be written
    const blocker = path.join(mkdtempSync(path.join(work, 'blocked-')), 'a-file');
    writeFileSync(blocker, 'not a directory');
    const h = await connect({ store: path.join(blocker, 'store') });
    const miss = await call(h, 'deletePet', { petId: 1 });
    const hint = miss.structuredContent as unknown as Hint;
    const persisted = await call(h, 'persist_justification', { hash: hint.hash, domain: hint.domain, justification: GOOD });
    expect(persisted.isError).toBe(true);
    expect(text(persisted)).toMatch(/^Cannot store the justification: the server could not write it \(E[A-Z]+\); try again later$/);
    expect(text(persisted)).not.toContain(work);
  });
});

describe('reflection gate', () => {
  it('(a) a client with sampling gets a doubly gated tool executed in one tools/call', async () => {
    const s = await connect({ model: () => JSON.stringify(GOOD) });
    const before = backend.requests.length;
    const result = await call(s, 'deletePet', { petId: 2 });
    expect(result.isError, text(result)).toBeFalsy();
    // one sampling request per gate, in gate order, each with its rendered prompt
    expect(s.sampling.map(samplingText)).toEqual([
      expect.stringContaining('You are about to delete pet 2 from the pet store for good.'),
      expect.stringContaining('Deleting pet 2 also erases its history'),
    ]);
    expect(backend.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(['DELETE /pets/2']);
    const files = stored(s.store);
    expect(files.map((f) => path.dirname(f))).toEqual(['pets', 'records']);
    for (const f of files) {
      expect(path.basename(f, '.json')).toMatch(HEX64);
      const record = JSON.parse(readFileSync(path.join(s.store, f), 'utf8')) as { justification: unknown; source: string; tool: string; promptArgs: unknown };
      expect(record).toMatchObject({ justification: GOOD, source: 'sampling', tool: 'deletePet', promptArgs: { petId: '2' } });
    }
  });

  it('(c) a second call with the same arguments hits the cache: no sampling request', async () => {
    const s = await connect({ model: () => JSON.stringify(GOOD) });
    const pet = { petId: 1, body: { name: 'Rex', status: 'pending' } };
    const first = await call(s, 'updatePet', pet);
    expect(first.isError, text(first)).toBeFalsy();
    expect(s.sampling).toHaveLength(1);
    expect(samplingText(s.sampling[0]!)).toContain('You are about to overwrite pet 1 with {"name":"Rex","status":"pending"}.');
    const before = backend.requests.length;
    const second = await call(s, 'updatePet', { body: { status: 'pending', name: 'Rex' }, petId: 1 });
    expect(second.isError, text(second)).toBeFalsy();
    expect(second.structuredContent).toMatchObject({ id: 1, name: 'Rex', status: 'pending' });
    expect(s.sampling).toHaveLength(1);
    expect(backend.requests.slice(before).map((r) => r.method)).toEqual(['PUT']);
    // other arguments are another decision: asked again
    await call(s, 'updatePet', { petId: 1, body: { name: 'Rex', status: 'sold' } });
    expect(s.sampling).toHaveLength(2);
  });

  it('retries an invalid sampled answer once with the validation errors', async () => {
    let n = 0;
    const s = await connect({ model: () => (++n === 1 ? JSON.stringify({ ...GOOD, confidence: 7 }) : JSON.stringify(GOOD)) });
    const result = await call(s, 'updatePet', { petId: 1, body: { name: 'Rex', status: 'available' } });
    expect(result.isError, text(result)).toBeFalsy();
    expect(s.sampling).toHaveLength(2);
    expect(samplingText(s.sampling[1]!)).toContain('confidence');
  });

  it('a legacy client that declines the sampling request gets the hint (mode auto), not a failed call', async () => {
    const s = await connect({
      model: () => {
        throw new Error('user declined the sampling request');
      },
    });
    const before = backend.requests.length;
    const result = await call(s, 'updatePet', { petId: 1, body: { name: 'Rex', status: 'available' } });
    expect(result.isError).toBe(true);
    expect(text(result)).not.toContain('Fulfilling input required');
    expect(text(result)).toContain('needs a justification before it runs (reflection gate');
    expect(s.sampling).toHaveLength(1);
    expect(backend.requests.length).toBe(before);
  });

  it('(b)(e) a client without sampling completes hint -> prompts/get -> persist_justification -> retry, gate after gate', async () => {
    const s = await connect();
    const before = backend.requests.length;
    const tools = (await s.client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('persist_justification');

    const first = await call(s, 'deletePet', { petId: 3 });
    expect(first.isError).toBe(true);
    const hint1 = first.structuredContent as Hint;
    expect(hint1).toEqual({
      prompt: 'justify_pet_removal',
      prompt_args: { petId: '3' },
      hash: expect.stringMatching(SIGNED) as unknown,
      domain: 'pets',
      remaining: 2,
    });
    expect(text(first)).toMatch(
      /1\. Get the prompt: prompts\/get with name "justify_pet_removal"[\s\S]*2\. Have the model answer it[\s\S]*3\. Call the tool persist_justification/,
    );

    const prompt = await s.client.getPrompt({ name: hint1.prompt, arguments: hint1.prompt_args });
    expect(prompt.messages).toEqual([
      { role: 'user', content: { type: 'text', text: expect.stringContaining('You are about to delete pet 3 from the pet store for good.') as unknown } },
    ]);

    const saved = await call(s, 'persist_justification', { hash: hint1.hash, domain: hint1.domain, justification: GOOD });
    expect(saved.isError, text(saved)).toBeFalsy();
    expect(stored(s.store)).toEqual([`pets/${key(hint1.hash)}.json`]);

    // chained: the second gate asks next, with one gate left
    const second = await call(s, 'deletePet', { petId: 3 });
    const hint2 = second.structuredContent as Hint;
    expect(hint2).toMatchObject({ prompt: 'confirm_record_loss', domain: 'records', remaining: 1 });
    expect(backend.requests.length).toBe(before);
    await call(s, 'persist_justification', { hash: hint2.hash, domain: 'records', justification: GOOD });

    const done = await call(s, 'deletePet', { petId: 3 });
    expect(done.isError, text(done)).toBeFalsy();
    expect(backend.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(['DELETE /pets/3']);
    const record = JSON.parse(readFileSync(path.join(s.store, `records/${key(hint2.hash)}.json`), 'utf8')) as { source: string };
    expect(record.source).toBe('host');
  });

  it('gives the hint of a tool with a strict output schema as JSON text (structuredContent must match that schema)', async () => {
    const s = await connect();
    const args = { petId: 1, body: { name: 'Rex', status: 'available' } };
    const miss = await call(s, 'updatePet', args);
    expect(miss.isError).toBe(true);
    expect(miss.structuredContent).toBeUndefined();
    const hint = JSON.parse((miss.content[1] as { text: string }).text) as Hint;
    expect(hint).toMatchObject({
      prompt: 'justify_pet_change',
      prompt_args: { petId: '1', change: '{"name":"Rex","status":"available"}' },
      domain: 'pets',
      remaining: 1,
    });
    await call(s, 'persist_justification', { hash: hint.hash, domain: hint.domain, justification: GOOD });
    const done = await call(s, 'updatePet', args);
    expect(done.isError, text(done)).toBeFalsy();
    expect(done.structuredContent).toMatchObject({ id: 1, name: 'Rex' });
  });

  it('(d) refuses a forged hash, a traversal domain and an invalid justification, each precisely', async () => {
    const s = await connect();
    const hint = (await call(s, 'deletePet', { petId: 1 })).structuredContent as Hint;

    const bare = await call(s, 'persist_justification', { hash: 'a'.repeat(64), domain: 'pets', justification: GOOD });
    expect(bare.isError).toBe(true);
    expect(text(bare)).toBe(
      'Invalid persist_justification call:\n- hash: must be the `hash` of a gate hint exactly as given (64 lower-case hex digits, a dot, an expiry, a dot and a signature)',
    );
    // the hint's own expiry and signature on another 64-hex key: the signature does not match
    const [, expiry, mac] = hint.hash.split('.');
    const forged = await call(s, 'persist_justification', { hash: `${'a'.repeat(64)}.${expiry}.${mac}`, domain: 'pets', justification: GOOD });
    expect(forged.isError).toBe(true);
    expect(text(forged)).toMatch(/^Invalid persist_justification call:\n- hash: .*(sign|key)/);

    const traversal = await call(s, 'persist_justification', { hash: hint.hash, domain: '../../etc', justification: GOOD });
    expect(traversal.isError).toBe(true);
    expect(text(traversal)).toBe('Invalid persist_justification call:\n- domain: must be one of the declared reflection domains ("pets", "records")');

    const wrongDomain = await call(s, 'persist_justification', { hash: hint.hash, domain: 'records', justification: GOOD });
    expect(text(wrongDomain)).toContain('- domain: must be "pets", the domain of the hint that issued this hash');

    const invalid = await call(s, 'persist_justification', {
      hash: hint.hash,
      domain: 'pets',
      justification: { intent: '', alternatives: 'none', confidence: 1.5, mood: 'sure' },
    });
    expect(invalid.isError).toBe(true);
    const lines = text(invalid).split('\n');
    expect(lines[0]).toBe('Invalid persist_justification call:');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^- justification\.intent: .*(at least 1|fewer than 1)/),
        expect.stringMatching(/^- justification\.alternatives: must be array/),
        expect.stringMatching(/^- justification\.confidence: must be <= 1/),
        expect.stringMatching(/^- justification: missing required property "?choice"?|^- justification\.choice: /),
        expect.stringMatching(/mood/),
      ]),
    );
    // nothing was written, and nothing outside the store exists
    expect(stored(s.store)).toEqual([]);
    expect(existsSync(path.join(s.store, '..', '..', 'etc'))).toBe(false);
    // invalid arguments are reported before any justification is asked for
    const bad = await call(s, 'deletePet', { petId: 'x' });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toBeUndefined();
    expect(text(bad)).toMatch(/petId/);
  });
});

describe('typed preprocessor handlers', () => {
  it('a preprocessor handler with the wrong signature fails tsc where it is wired in', async () => {
    const broken = path.join(work, 'broken-preprocessor');
    cpSync(project, broken, { recursive: true, filter: (src) => !/[\\/](node_modules|dist|\.preflight)$/.test(src) && !/store-/.test(path.basename(src)) });
    const source = readFileSync(path.join(broken, 'src/handlers/context.ts'), 'utf8').replace(
      'export async function houseRules(request: { input: string }',
      'export async function houseRules(request: { input: number }',
    );
    writeFileSync(path.join(broken, 'src/handlers/context.ts'), source);
    const r = await typecheck(broken);
    expect(r.ok).toBe(false);
    // the generated table rejects it (the handler's own body may fail too)
    const errors = r.output.split('\n').filter((l) => /src\/preprocessors\.gen\.ts\(\d+,\d+\): error TS\d+/.test(l));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(
      "error TS2322: Type '(request: { input: number; }, _ctx: PreprocessorContext) => Promise<string | undefined>' is not assignable to type '(input: { input: string; }, ctx: PreprocessorContext) => unknown'",
    );
  });
});

describe('preprocessors', () => {
  const Run = z.looseObject({
    ok: z.boolean(),
    blocks: z.array(
      z.looseObject({ name: z.string(), status: z.string(), durationMs: z.number(), content: z.string().optional(), error: z.string().optional() }),
    ),
  });
  const List = z.looseObject({ preprocessors: z.array(z.looseObject({ name: z.string(), order: z.number(), after: z.array(z.string()) })) });
  type AnyRequest = Parameters<Client['request']>[0];
  const request = <T extends z.ZodType>(s: Session, method: string, params: Record<string, unknown> | undefined, schema: T) =>
    s.client.request({ method, ...(params ? { params } : {}) } as unknown as AnyRequest, schema);

  it('(f) are advertised and listed in after order, never as tools, and tools/call refuses them', async () => {
    const s = await connect();
    expect(s.client.getServerCapabilities()?.experimental?.preprocessors).toEqual({
      methods: ['preprocessors/list', 'preprocessors/run'],
      preprocessors: ['house_rules', 'pet_lookup'],
      prompt: 'with_context',
    });
    const listed = await request(s, 'preprocessors/list', undefined, List);
    expect(listed.preprocessors.map((p) => [p.name, p.order, p.after])).toEqual([
      ['house_rules', 0, []],
      ['pet_lookup', 1, ['house_rules']],
    ]);
    const tools = (await s.client.listTools()).tools.map((t) => t.name);
    expect(tools).not.toContain('house_rules');
    expect(tools).not.toContain('pet_lookup');
    const refused = await rejection(s.client.callTool({ name: 'pet_lookup', arguments: { input: 'Rex' } }));
    expect(refused.code).toBe(-32602);
    expect(refused.message).toContain('pet_lookup is a preprocessor, not a tool');
    expect((await s.client.listPrompts()).prompts.map((p) => p.name)).toEqual([
      'justify_pet_removal',
      'confirm_record_loss',
      'justify_pet_change',
      'with_context',
    ]);
  });

  it('(f) preprocessors/run returns the context blocks in after order, and logs each run', async () => {
    const s = await connect();
    const result = await request(s, 'preprocessors/run', { input: 'Please delete Rex, he was entered twice.' }, Run);
    expect(result.ok).toBe(true);
    expect(result.blocks.map((b) => [b.name, b.status])).toEqual([
      ['house_rules', 'ok'],
      ['pet_lookup', 'ok'],
    ]);
    expect(result.blocks[0]!.content).toMatch(/^Removals: a pet is deleted only when/);
    expect(JSON.parse(result.blocks[1]!.content!)).toEqual([expect.objectContaining({ id: 1, name: 'Rex' })]);
    expect(s.logs.map((l) => [l.logger, l.level, (l.data as { preprocessor: string }).preprocessor])).toEqual([
      ['preprocessors', 'debug', 'house_rules'],
      ['preprocessors', 'debug', 'pet_lookup'],
    ]);
    expect(s.stderr()).toMatch(/preprocessor house_rules: ok in \d+ ms/);
    const bad = await rejection(request(s, 'preprocessors/run', { input: 42 }, Run));
    expect(bad.code).toBe(-32602);
  });

  it('(f) honours a timeout: a preprocessor whose API never answers is cut off and skipped', async () => {
    const s = await connect({ baseUrl: silent.url });
    const result = await request(s, 'preprocessors/run', { input: 'adopt Rex' }, Run);
    expect(result.ok).toBe(true); // onError: skip
    const [rules, lookup] = result.blocks;
    expect(rules).toMatchObject({ name: 'house_rules', status: 'ok' });
    expect(lookup).toMatchObject({ name: 'pet_lookup', status: 'timeout', error: 'timed out after 2000 ms' });
    expect(lookup!.durationMs).toBeGreaterThanOrEqual(1900);
    expect(lookup!.durationMs).toBeLessThan(10_000);
  });

  it('(f) the with_context prompt returns the same blocks followed by the input, and the host helper reads them', async () => {
    const s = await connect();
    const input = 'Can I adopt Rex?';
    const prompt = await s.client.getPrompt({ name: 'with_context', arguments: { input } });
    const texts = prompt.messages.map((m) => (m.content as { text: string }).text);
    expect(texts).toEqual([
      '[preprocessor house_rules] Adoptions: adopters must be 18 or older; every pet goes home vaccinated and microchipped.',
      expect.stringMatching(/^\[preprocessor pet_lookup\] \[/),
      input,
    ]);
    expect(JSON.parse(texts[1]!.slice('[preprocessor pet_lookup] '.length))).toEqual([expect.objectContaining({ id: 1, name: 'Rex' })]);
    expect(prompt.messages.every((m) => m.role === 'user')).toBe(true);
    // the shipped host helper: preprocessors/run when advertised, and a per-turn context text
    const viaHelper = await runPreprocessors(s.client, input);
    expect(viaHelper.via).toBe('preprocessors/run');
    expect(viaHelper.blocks.map((b) => b.name)).toEqual(['house_rules', 'pet_lookup']);
    expect(toSystemContext(viaHelper.blocks)).toMatch(
      /^Context gathered for this message by preprocessors[\s\S]*## house_rules\nAdoptions:[\s\S]*## pet_lookup\n\[\{.*"name":"Rex"/,
    );
    expect(existsSync(path.join(project, 'src/runtime/preprocessors/preprocessors-host.ts'))).toBe(true);
  });
});

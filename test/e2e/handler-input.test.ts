/**
 * Handlers that ask the client for input end to end: test/fixtures/handler-input (extra tools that
 * call `ctx.elicit`, `ctx.sample` and `ctx.roots`, and an audit trail) is built, compiled with
 * tsc and served over stdio and over Streamable HTTP, to the v1 SDK client (legacy era: the
 * server sends real `elicitation/create`, `sampling/createMessage` and `roots/list` requests) and
 * the v2 client pinned to 2026-07-28 (InputRequiredResult rounds the client fulfils and retries,
 * with the sealed — encrypted, used once — requestState). The client's handlers are scripted: the
 * elicitation answer is chosen by the message (accept / decline / cancel), the model echoes the
 * prompt.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http_ from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { Client as V2Client, StreamableHTTPClientTransport as V2Http } from '@modelcontextprotocol/client';
import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { main } from '../../src/cli/main.js';
import type { AnyClient, Era, HttpProcess, Target, TransportKind } from '../helpers/eras.js';
import { connectClient, ERAS, rpcError, startHttp, TRANSPORTS } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const FIXTURE = path.join(ROOT, 'test/fixtures/handler-input');
const work = path.join(ROOT, '.cache/handler-input-e2e');
const project = path.join(work, 'server');
const scratch = mkdtempSync(path.join(ROOT, '.cache/handler-input-run-'));
const audit = path.join(scratch, 'trail.jsonl');
const store = path.join(scratch, 'justifications');
const ENV: Record<string, string> = { ASKFX_AUDIT_FILE: audit, ASKFX_REFLECTION_DIR: store };

/** The API behind the fixture's createNote: counts the notes it is sent. */
const posted: string[] = [];
const backend = http_.createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => void (body += d.toString('utf8')));
  req.on('end', () => {
    // a large page (read_many_then_ask): ~22 KB within the result budget (strings cut at 1,000 characters, 8,000 tokens)
    if (req.method === 'GET' && req.url?.startsWith('/pages/'))
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ n: Number(req.url.slice(7)), lines: Array.from({ length: 25 }, (_, i) => `${i}`.padEnd(900, 'p')) }));
    posted.push(body);
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: posted.length, text: (JSON.parse(body) as { text: string }).text }));
  });
});

type Result = { isError?: boolean; content: Array<{ type: string; text?: string }> };
type Event = { event: string; primitive?: string; callId?: string; outcome?: string };
const text = (r: Result) => r.content.map((c) => c.text ?? '').join('\n');

let http: HttpProcess | undefined;
const clients: AnyClient[] = [];

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(path.join(project, 'src'), { recursive: true });
  cpSync(path.join(FIXTURE, 'mcpgen.yaml'), path.join(work, 'mcpgen.yaml'));
  cpSync(path.join(FIXTURE, 'openapi.yaml'), path.join(work, 'openapi.yaml'));
  cpSync(path.join(FIXTURE, 'handlers'), path.join(project, 'src/handlers'), { recursive: true });
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', path.relative(ROOT, path.join(work, 'mcpgen.yaml')), '--quiet'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  ENV.ASKFX_BASE_URL = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
  http = await startHttp(project, ENV);
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  http?.kill('SIGKILL');
  backend.closeAllConnections();
  backend.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** What the scripted client was asked. */
type Asked = { elicit: Array<{ message: string; requestedSchema: unknown; url?: unknown; mode?: unknown }>; sampling: unknown[]; roots: number };

const FULL = { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } };

/** A client of `era` over `transport` whose user and model answer as scripted; `capabilities` default to all three. */
async function client(
  transport: TransportKind,
  era: Era,
  capabilities: Record<string, unknown> = FULL,
  user?: (message: string) => unknown,
): Promise<{ c: AnyClient; asked: Asked }> {
  const asked: Asked = { elicit: [], sampling: [], roots: 0 };
  const target: Target = transport === 'stdio' ? { kind: 'stdio', server: project, env: ENV } : { kind: 'http', url: http!.url };
  const handlers: Record<string, (req: { params: Record<string, unknown> }) => unknown> = {
    'elicitation/create': (req) => {
      const message = String(req.params.message);
      asked.elicit.push({
        message,
        requestedSchema: req.params.requestedSchema,
        ...(req.params.url !== undefined ? { url: req.params.url, mode: req.params.mode } : {}),
      });
      if (user) return user(message);
      if (message.startsWith('decline')) return { action: 'decline' };
      if (message.startsWith('cancel')) return { action: 'cancel' };
      if (message.startsWith('wrong')) return { action: 'accept', content: { name: 42 } };
      return { action: 'accept', content: { name: 'Ada', age: 36 } };
    },
    'sampling/createMessage': (req) => {
      asked.sampling.push(req.params);
      const first = (req.params.messages as Array<{ content: { text?: string } }>)[0]!;
      return { role: 'assistant', model: 'scripted', content: { type: 'text', text: `echo(${first.content.text ?? ''})` } };
    },
    'roots/list': () => {
      asked.roots++;
      return { roots: [{ uri: 'file:///work/project', name: 'project' }, { uri: 'file:///work/docs' }] };
    },
  };
  const { client: c } = await connectClient(target, era, {
    capabilities: capabilities as never,
    setup: (cl) => {
      const declared: Record<string, boolean> = {
        'elicitation/create': 'elicitation' in capabilities,
        'sampling/createMessage': 'sampling' in capabilities,
        'roots/list': 'roots' in capabilities,
      };
      for (const [method, handler] of Object.entries(handlers)) {
        if (!declared[method]) continue;
        if (era === 'legacy')
          (cl as { setRequestHandler: (s: unknown, h: unknown) => void }).setRequestHandler(z.object({ method: z.literal(method) }).passthrough(), handler);
        else (cl as { setRequestHandler: (m: string, h: unknown) => void }).setRequestHandler(method, handler);
      }
    },
  });
  clients.push(c);
  return { c, asked };
}

const call = async (c: AnyClient, name: string, args: Record<string, unknown> = {}) => (await c.callTool({ name, arguments: args })) as Result;
const events = (): Event[] =>
  readFileSync(audit, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);

describe.each(TRANSPORTS)('handlers ask the client for input, over %s', (transport) => {
  describe.each(ERAS)('%s era', (era) => {
    it('ctx.elicit: the form reaches the user; accept gives its content, decline and cancel are told apart', async () => {
      const { c, asked } = await client(transport, era);
      const accepted = await call(c, 'ask_user', { message: 'accept: your name?' });
      expect(accepted.isError, text(accepted)).toBeFalsy();
      expect(text(accepted)).toBe('accepted: Ada, 36');
      expect(asked.elicit[0]).toEqual({
        message: 'accept: your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string', minLength: 1 }, age: { type: 'integer', minimum: 0 } }, required: ['name'] },
      });
      expect(text(await call(c, 'ask_user', { message: 'decline: your name?' }))).toBe('the user chose decline');
      expect(text(await call(c, 'ask_user', { message: 'cancel: your name?' }))).toBe('the user chose cancel');
      // an accepted answer that does not match the form never reaches the handler's logic (the v1
      // client refuses to send it itself; the v2 client sends it, and the server checks it)
      const wrong = await call(c, 'ask_user', { message: 'wrong: your name?' });
      expect(wrong.isError).toBe(true);
      expect(text(wrong)).toMatch(
        era === 'legacy' ? /does not match[\s\S]*name must be string/ : /The answer to the form does not match it:\n- name: must be string/,
      );
      expect(asked.elicit).toHaveLength(4);
    });

    it('ctx.sample asks the model, ctx.roots reads the roots', async () => {
      const { c, asked } = await client(transport, era);
      expect(text(await call(c, 'ask_model', { question: 'Capital of France?' }))).toBe('model said: echo(Capital of France?)');
      expect(asked.sampling).toEqual([
        expect.objectContaining({ messages: [{ role: 'user', content: { type: 'text', text: 'Capital of France?' } }], maxTokens: 50 }),
      ]);
      expect(text(await call(c, 'client_roots'))).toBe('roots: file:///work/project, file:///work/docs');
      expect(asked.roots).toBe(1);
    });

    it('three questions in a row are one logical call: one tool.invoked and one tool.completed line in the audit trail', async () => {
      const { c, asked } = await client(transport, era);
      const result = await call(c, 'interview');
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toBe('echo(Greet Ada) (2 roots)');
      expect([asked.elicit.length, asked.sampling.length, asked.roots]).toEqual([1, 1, 1]);
      // the audit file is shared by every server of this file: the lines of this call by its callId
      const mine = events().filter((e) => e.primitive === 'interview');
      const invoked = mine.filter((e) => e.event === 'tool.invoked');
      const last = invoked.at(-1)!;
      const ofCall = mine.filter((e) => e.callId === last.callId).map((e) => e.event);
      expect(ofCall).toEqual(['tool.invoked', 'tool.completed']);
    });

    it('a client that did not declare a capability gets the documented error (-32021) naming it', async () => {
      const { c, asked } = await client(transport, era, {});
      for (const [tool, args, needed] of [
        ['ask_user', { message: 'accept: name?' }, 'elicitation'],
        ['ask_model', { question: 'hi' }, 'sampling'],
        ['client_roots', {}, 'roots'],
      ] as const) {
        const err = await rpcError(c.callTool({ name: tool, arguments: args }));
        expect(err.code, tool).toBe(-32021);
        expect((err as { data?: { requiredCapabilities?: Record<string, unknown> } }).data?.requiredCapabilities, tool).toHaveProperty(needed);
      }
      expect([asked.elicit.length, asked.sampling.length, asked.roots]).toEqual([0, 0, 0]);
    });
  });
});

/** The stored justifications: `<domain>/<hash>.json` ⇒ record. */
const stored = (): Array<{ source?: string; tool?: string; justification: unknown }> =>
  existsSync(store)
    ? readdirSync(store, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.json'))
        .map((f) => JSON.parse(readFileSync(path.join(store, f), 'utf8')) as { source?: string; tool?: string; justification: unknown })
    : [];

const ANSWER = { intent: 'free the pet', alternatives: 'keep it; give it away', choice: 'release: it is wild', confidence: 0.8 };

describe.each(TRANSPORTS)('the reflection gate asks the user (mode elicit), over %s', (transport) => {
  describe.each(ERAS)('%s era', (era) => {
    it('accept: the form is the justification schema, the call runs once, the record says source user', async () => {
      const name = `Rex-${transport}-${era}`;
      const { c, asked } = await client(transport, era, FULL, () => ({ action: 'accept', content: ANSWER }));
      const result = await call(c, 'release_pet', { name });
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toBe(`released ${name}`);
      expect(asked.elicit).toHaveLength(1);
      expect(asked.elicit[0]!.message).toContain(`Before release_pet runs, it needs your justification (reflection gate, domain "pets").`);
      expect(asked.elicit[0]!.message).toContain(`You are about to release ${name} for good. Why?`);
      expect(asked.elicit[0]!.requestedSchema).toMatchObject({
        type: 'object',
        properties: {
          intent: { type: 'string' },
          alternatives: { type: 'string' },
          choice: { type: 'string' },
          confidence: { type: 'number', minimum: 0, maximum: 1 },
        },
        required: ['intent', 'choice', 'confidence'],
      });
      expect(asked.sampling).toEqual([]);
      const record = stored().find((r) => JSON.stringify(r).includes(name));
      expect(record).toMatchObject({ source: 'user', tool: 'release_pet', justification: { ...ANSWER, alternatives: ['keep it', 'give it away'] } });
      // justified once: the same call runs again without asking
      expect(text(await call(c, 'release_pet', { name }))).toBe(`released ${name}`);
      expect(asked.elicit).toHaveLength(1);
      // one logical call per tools/call in the audit trail, however many rounds
      const lines = events().filter((e) => e.primitive === 'release_pet');
      const last = lines.filter((e) => e.event === 'tool.invoked').at(-2)!;
      expect(lines.filter((e) => e.callId === last.callId).map((e) => e.event)).toEqual(['tool.invoked', 'tool.completed']);
    });

    it('an invalid answer is asked again once, quoting its problems (the v1 client refuses to send one: the gate goes on as in auto)', async () => {
      const name = `Fido-${transport}-${era}`;
      let n = 0;
      const { c, asked } = await client(transport, era, FULL, () => ({ action: 'accept', content: n++ === 0 ? { ...ANSWER, intent: '' } : ANSWER }));
      const result = await call(c, 'release_pet', { name });
      if (era === 'modern') {
        expect(text(result)).toBe(`released ${name}`);
        expect(asked.elicit).toHaveLength(2);
        expect(asked.elicit[1]!.message).toMatch(/The previous answer was not accepted:\n- justification\.intent: /);
      } else {
        // the v1 client checks its own answer against the form, and fails the request
        expect(asked.elicit).toHaveLength(1);
        expect(asked.sampling).toHaveLength(2);
        expect(result.isError).toBe(true);
        expect(text(result)).toContain('persist_justification');
      }
    });

    it('decline and cancel refuse the call; nothing is stored', async () => {
      for (const action of ['decline', 'cancel'] as const) {
        const name = `Tom-${action}-${transport}-${era}`;
        const { c } = await client(transport, era, FULL, () => ({ action }));
        const result = await call(c, 'release_pet', { name });
        expect(result.isError).toBe(true);
        expect(text(result)).toBe(
          `Tool release_pet was not run: the user ${action === 'decline' ? 'declined to give' : 'dismissed the request for'} a justification (reflection gate, domain "pets"). Calling the tool again asks again.`,
        );
        expect(stored().some((r) => JSON.stringify(r).includes(name))).toBe(false);
      }
    });

    it('a client that cannot elicit falls back as in auto: the model when it samples, else the host-flow hint', async () => {
      const sampledName = `Kit-${transport}-${era}`;
      const model = await client(transport, era, { sampling: {} });
      // the scripted model echoes the prompt, which is no justification: after two tries, the hint
      const hinted = await call(model.c, 'release_pet', { name: sampledName });
      expect(model.asked.elicit).toEqual([]);
      expect(model.asked.sampling).toHaveLength(2);
      expect(hinted.isError).toBe(true);
      expect(text(hinted)).toContain('persist_justification');
      const bare = await client(transport, era, {});
      const hint = await call(bare.c, 'release_pet', { name: `Bo-${transport}-${era}` });
      expect(hint.isError).toBe(true);
      expect(text(hint)).toMatch(/needs a justification before it runs[\s\S]*persist_justification/);
    });
  });
});

describe.each(TRANSPORTS)('ctx.notifyResourceUpdated reaches subscribers, over %s', (transport) => {
  it.each(ERAS)('%s era', async (era) => {
    const updates: string[] = [];
    let arrived: () => void = () => undefined;
    const target: Target = transport === 'stdio' ? { kind: 'stdio', server: project, env: ENV } : { kind: 'http', url: http!.url };
    const { client: c } = await connectClient(target, era, {
      setup: (cl) => {
        const on = (uri: string) => {
          updates.push(uri);
          arrived();
        };
        if (era === 'legacy') (cl as LegacyClient).setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => on(n.params.uri));
        else (cl as ModernClient).setNotificationHandler('notifications/resources/updated', (n) => on(n.params.uri));
      },
    });
    clients.push(c);
    expect(c.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
    let stop: () => Promise<void>;
    if (era === 'legacy') {
      await (c as LegacyClient).subscribeResource({ uri: 'notes://counter' });
      stop = async () => void (await (c as LegacyClient).unsubscribeResource({ uri: 'notes://counter' }));
    } else {
      const sub = await (c as ModernClient).listen({ resourceSubscriptions: ['notes://counter'] });
      stop = () => sub.close();
    }
    const got = new Promise<void>((resolve) => (arrived = resolve));
    expect(text(await call(c, 'bump_counter'))).toMatch(/^count is now \d+$/);
    await got;
    expect(updates).toEqual(['notes://counter']);
    await stop();
  });
});

describe.each(TRANSPORTS)('completions computed by a handler, over %s', (transport) => {
  it.each(ERAS)('%s era: a prompt argument and a template variable, from what was typed and the other arguments', async (era) => {
    const target: Target = transport === 'stdio' ? { kind: 'stdio', server: project, env: ENV } : { kind: 'http', url: http!.url };
    const { client: c } = await connectClient(target, era);
    clients.push(c);
    expect(c.getServerCapabilities()?.completions).toEqual({});
    type Completion = { completion: { values: string[]; total?: number; hasMore?: boolean } };
    const complete = (params: Record<string, unknown>) => (c as LegacyClient).complete(params as never) as Promise<Completion>;
    const prompt = { type: 'ref/prompt', name: 'greet' };
    expect((await complete({ ref: prompt, argument: { name: 'pet', value: 'b' }, context: { arguments: { species: 'dog' } } })).completion).toEqual({
      values: ['Biscuit', 'Bolt'],
      total: 2,
      hasMore: false,
    });
    expect((await complete({ ref: prompt, argument: { name: 'pet', value: 'm' }, context: { arguments: { species: 'cat' } } })).completion.values).toEqual([
      'Miso',
      'Mittens',
    ]);
    expect((await complete({ ref: prompt, argument: { name: 'pet', value: 'm' } })).completion.values).toEqual(['Miso', 'Mittens']);
    // the values list beside it still completes by prefix
    expect((await complete({ ref: prompt, argument: { name: 'species', value: 'c' } })).completion.values).toEqual(['cat']);
    const template = { type: 'ref/resource', uri: 'notes://pets/{species}/{name}' };
    expect((await complete({ ref: template, argument: { name: 'name', value: 'r' }, context: { arguments: { species: 'dog' } } })).completion.values).toEqual([
      'Rex',
    ]);
  });
});

describe.each(TRANSPORTS)('ctx.elicitUrl sends the user to a page, over %s', (transport) => {
  it.each(ERAS)('%s era: a client with elicitation.url gets the URL request; one with forms only is not asked', async (era) => {
    const { c, asked } = await client(transport, era, { elicitation: { form: {}, url: {} } }, () => ({ action: 'accept' }));
    expect(text(await call(c, 'sign_in'))).toBe('sign-in: accept');
    expect(asked.elicit).toHaveLength(1);
    expect(asked.elicit[0]).toMatchObject({ message: 'Sign in to the pet store', url: 'https://auth.example.com/login?state=abc', mode: 'url' });
    const formsOnly = await client(transport, era, { elicitation: { form: {} } });
    expect(text(await call(formsOnly.c, 'sign_in'))).toBe('cannot send you to the sign-in page');
    expect(formsOnly.asked.elicit).toEqual([]);
  });
});

describe.each(TRANSPORTS)('API calls before a question are made once per logical call, over %s', (transport) => {
  it.each(ERAS)('%s era: the POST reaches the API once, and is audited once', async (era) => {
    const { c, asked } = await client(transport, era, FULL, () => ({ action: 'accept', content: { keep: true } }));
    const text_ = `note-${transport}-${era}`;
    const result = await call(c, 'note_then_ask', { text: text_ });
    expect(result.isError, text(result)).toBeFalsy();
    expect(text(result)).toMatch(/^note \d+: accept$/);
    expect(asked.elicit).toHaveLength(1);
    expect(posted.filter((b) => b.includes(text_))).toHaveLength(1);
    const nested = events().filter((e) => e.primitive === 'createNote' && e.event === 'tool.invoked' && JSON.stringify(e).includes(text_));
    expect(nested).toHaveLength(1);
  });
});

describe('rounds of one call on two instances (2026-07-28 over HTTP)', () => {
  it('each request goes to the other instance of two sharing the state key: the questions, answers and the API call still make one logical call', async () => {
    const key = 'state-key-shared-by-both-instances-0123456789';
    const a = await startHttp(project, { ...ENV, ASKFX_STATE_KEY: key });
    const b = await startHttp(project, { ...ENV, ASKFX_STATE_KEY: key });
    try {
      const targets = [a.url, b.url];
      const hits: string[] = [];
      let n = 0;
      // a round-robin balancer: every POST goes to the next instance
      const balanced = (input: string | URL | Request, init?: RequestInit) => {
        const url = targets[n++ % 2]!;
        hits.push(url);
        return fetch(url, init);
      };
      const c = new V2Client({ name: 'e2e-balanced', version: '1' }, {
        capabilities: FULL,
        versionNegotiation: { mode: { pin: '2026-07-28' } },
      } as ConstructorParameters<typeof V2Client>[1]);
      const asked = { elicit: 0, sampling: 0, roots: 0 };
      c.setRequestHandler(
        'elicitation/create',
        (req) => (asked.elicit++, { action: 'accept', content: String(req.params.message).includes('keep note') ? { keep: true } : { name: 'Ada' } }),
      );
      c.setRequestHandler(
        'sampling/createMessage',
        (req) => (
          asked.sampling++,
          { role: 'assistant', model: 'scripted', content: { type: 'text', text: `echo(${(req.params.messages[0]!.content as { text: string }).text})` } }
        ),
      );
      c.setRequestHandler('roots/list', () => (asked.roots++, { roots: [{ uri: 'file:///one' }] }));
      await c.connect(new V2Http(new URL(a.url), { fetch: balanced as never }));
      clients.push(c);
      const before = hits.length;
      const interview = (await c.callTool({ name: 'interview', arguments: {} })) as Result;
      expect(text(interview)).toBe('echo(Greet Ada) (1 root)');
      // four requests (three answered rounds), alternating between the instances
      expect(hits.slice(before)).toHaveLength(4);
      expect(new Set(hits.slice(before))).toEqual(new Set(targets));
      const note = `balanced-${Date.now()}`;
      const noted = (await c.callTool({ name: 'note_then_ask', arguments: { text: note } })) as Result;
      expect(text(noted)).toMatch(/^note \d+: accept$/);
      expect(posted.filter((p) => p.includes(note))).toHaveLength(1);
      expect([asked.elicit, asked.sampling, asked.roots]).toEqual([2, 1, 1]);
    } finally {
      a.kill('SIGKILL');
      b.kill('SIGKILL');
    }
  });
});

/** The JSON-RPC message of a Streamable HTTP response (a JSON body, or the last `data:` event of an SSE stream). */
async function rpcReply(res: Response): Promise<{ result?: Result & { resultType?: string }; error?: { code: number; message: string } }> {
  const body = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(body) as never;
  const data = body
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim())
    .filter((l) => l.startsWith('{'));
  return JSON.parse(data.at(-1)!) as never;
}

/** Every dot-separated part of a token decoded from base64url, for searching (what a client could read of it). */
const decoded = (token: string) =>
  token
    .split('.')
    .map((p) => Buffer.from(p, 'base64url').toString('utf8'))
    .join('\n');

describe('a round state is confidential and continues its call once (2026-07-28 over HTTP)', () => {
  /** A pinned v2 client whose user accepts, and the requests it sent (url and init, to resend one). */
  async function recordingClient(urls: readonly string[]) {
    const sent: Array<{ url: string; init: RequestInit; body: string }> = [];
    let n = 0;
    const recording = (_input: string | URL | Request, init?: RequestInit) => {
      const url = urls[n++ % urls.length]!;
      if (init?.method === 'POST') sent.push({ url, init, body: String(init.body) });
      return fetch(url, init);
    };
    const c = new V2Client({ name: 'e2e-rounds', version: '1' }, {
      capabilities: FULL,
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    } as ConstructorParameters<typeof V2Client>[1]);
    c.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { keep: true } }));
    await c.connect(new V2Http(new URL(urls[0]!), { fetch: recording as never }));
    clients.push(c);
    return { c, sent };
  }
  const statesIn = (sent: ReadonlyArray<{ body: string }>) =>
    sent.map((s) => (JSON.parse(s.body) as { params?: { requestState?: unknown } }).params?.requestState).filter((s): s is string => typeof s === 'string');

  it('the requestState of an input-required round holds none of the API response it carries', async () => {
    const { c, sent } = await recordingClient([http!.url]);
    const note = `confidential-${Date.now()}`;
    const result = (await c.callTool({ name: 'note_then_ask', arguments: { text: note } })) as Result;
    expect(text(result)).toMatch(/^note \d+: accept$/);
    const states = statesIn(sent);
    expect(states).toHaveLength(1);
    // the backend's answer ({"id":…,"text":"<note>"}) was kept in the state: nothing of it shows
    expect(states[0]).not.toContain(note);
    expect(decoded(states[0]!)).not.toContain(note);
    expect(decoded(states[0]!)).not.toContain('createNote');
  });

  it('resending the last round is refused: the write after the question reaches the API once, one logical call in the audit', async () => {
    const { c, sent } = await recordingClient([http!.url]);
    const note = `once-${Date.now()}`;
    const result = (await c.callTool({ name: 'ask_then_note', arguments: { text: note } })) as Result;
    expect(text(result)).toMatch(/^wrote note \d+$/);
    expect(posted.filter((b) => b.includes(note))).toHaveLength(1);
    const last = sent.filter((s) => s.body.includes('requestState') && s.body.includes(note)).at(-1)!;
    for (let i = 0; i < 2; i++) {
      const again = await rpcReply(await fetch(last.url, last.init));
      expect(again.error?.message).toMatch(/this requestState was already used/);
    }
    expect(posted.filter((b) => b.includes(note))).toHaveLength(1);
    expect(events().filter((e) => e.primitive === 'createNote' && e.event === 'tool.invoked' && JSON.stringify(e).includes(note))).toHaveLength(1);
    const invoked = events().filter((e) => e.primitive === 'ask_then_note' && e.event === 'tool.invoked' && JSON.stringify(e).includes(note));
    expect(invoked).toHaveLength(1);
    expect(
      events()
        .filter((e) => e.callId === invoked[0]!.callId && e.primitive === 'ask_then_note')
        .map((e) => e.event),
    ).toEqual(['tool.invoked', 'tool.completed']);
  });

  it('many API results kept across rounds stay within what a round may send back', async () => {
    const { c, sent } = await recordingClient([http!.url]);
    const result = (await c.callTool({ name: 'read_many_then_ask', arguments: { count: 30 } })) as Result;
    expect(result.isError, text(result)).toBeFalsy();
    expect(text(result)).toBe('read 30 pages: accept');
    const states = statesIn(sent);
    expect(states).toHaveLength(1);
    // some pages were kept (the budget is used), not all of them (30 × ~45 KB, the page twice: content and structuredContent, would pass the 1.25 MiB body limit once encoded)
    expect(Buffer.byteLength(states[0]!)).toBeGreaterThan(150 * 1024);
    expect(Buffer.byteLength(states[0]!)).toBeLessThan(512 * 1024);
  });
});

import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { LoggingMessageNotificationParams, ServerCapabilities } from '@modelcontextprotocol/server';
import { LOG_LEVEL_META_KEY, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { PreprocessorDefinition } from '../../../templates/runtime/preprocessors/preprocessors.js';
import type { PreprocessorHostClient } from '../../../templates/runtime/preprocessors/preprocessors-host.js';
import { runPreprocessors as hostRun, toSystemContext } from '../../../templates/runtime/preprocessors/preprocessors-host.js';
import {
  blockMessage,
  installPreprocessors,
  preprocessorCapability,
  withContextPrompt,
} from '../../../templates/runtime/preprocessors/preprocessors-protocol.js';
import { installPrompts } from '../../../templates/runtime/primitives/prompts.js';
import type { AnyClient, Era } from '../../helpers/linked.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

beforeAll(() => {
  setLogSink(() => undefined);
});
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const DEFS: PreprocessorDefinition[] = [
  { name: 'profile', description: 'User profile', after: ['memories'], handler: () => ({ locale: 'fr' }) },
  { name: 'memories', description: 'Relevant memories', timeoutMs: 500, handler: ({ input }) => `likes ${input}` },
  { name: 'flaky', onError: 'skip', handler: () => Promise.reject(new Error('backend down')) },
  { name: 'empty', handler: () => undefined },
];

type Setup = { experimental?: boolean; prompt?: boolean; defs?: PreprocessorDefinition[] };

/** What the tests call on either client. */
type TestClient = {
  request(request: { method: string; params?: object }, schema: z.ZodType): Promise<unknown>;
  listPrompts(): Promise<{ prompts: Array<{ name: string }> }>;
  getPrompt(params: { name: string; arguments?: Record<string, string>; _meta?: object }): Promise<{ messages: unknown[] }>;
  getServerCapabilities(): ServerCapabilities | undefined;
  close(): Promise<void>;
};

async function connect(era: Era, setup: Setup = {}): Promise<{ client: TestClient; raw: AnyClient; notes: LoggingMessageNotificationParams[] }> {
  const defs = setup.defs ?? DEFS;
  const capabilities: ServerCapabilities = { logging: {} };
  if (setup.prompt !== false) capabilities.prompts = {};
  if (setup.experimental !== false) capabilities.experimental = { preprocessors: preprocessorCapability(defs, setup.prompt !== false) };
  const notes: LoggingMessageNotificationParams[] = [];
  const raw = await linkedClient(
    () => {
      const server = new Server({ name: 'pp', version: '1' }, { capabilities });
      if (setup.experimental !== false) installPreprocessors(server, defs);
      if (setup.prompt !== false) installPrompts(server, [withContextPrompt(defs)]);
      return server;
    },
    era,
    {
      setup: (c) => {
        if (era === 'legacy') (c as LegacyClient).setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notes.push(n.params));
        else
          (c as unknown as { setNotificationHandler(m: string, h: (n: { params: LoggingMessageNotificationParams }) => void): void }).setNotificationHandler(
            'notifications/message',
            (n) => void notes.push(n.params),
          );
      },
    },
  );
  open.push(raw);
  return { client: raw as unknown as TestClient, raw, notes };
}

const Loose = z.looseObject({});
type Run = { ok: boolean; blocks: { name: string; status: string; durationMs: number; content?: string; error?: string }[] };
/** The run result without what the modern era stamps on every result (`_meta` server info). */
const runOf = (r: unknown): Run => {
  const { _meta: _ignored, ...rest } = r as Run & { _meta?: unknown };
  return rest;
};
/** `_meta` that lets debug logging notifications through in the modern era (no logging/setLevel there). */
const DEBUG_META = { [LOG_LEVEL_META_KEY]: 'debug' };
const flush = () => new Promise((r) => setTimeout(r, 10));

/** Awaits `p`, expects a JSON-RPC error (v1 `McpError` or v2 `ProtocolError`) and returns it. */
async function rejection(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(typeof (err as { code?: unknown } | undefined)?.code).toBe('number');
  return err as { code: number; message: string };
}

describe.each(ERAS)('preprocessors over MCP (%s era)', (era) => {
  it('advertises capabilities.experimental.preprocessors and lists in run order', async () => {
    const { client } = await connect(era);
    expect(client.getServerCapabilities()?.experimental?.preprocessors).toEqual({
      methods: ['preprocessors/list', 'preprocessors/run'],
      preprocessors: ['memories', 'profile', 'flaky', 'empty'],
      prompt: 'with_context',
    });
    const list = runOf(await client.request({ method: 'preprocessors/list' }, Loose)) as unknown;
    expect(list).toEqual({
      preprocessors: [
        { name: 'memories', description: 'Relevant memories', after: [], order: 0, timeoutMs: 500, onError: 'skip' },
        { name: 'profile', description: 'User profile', after: ['memories'], order: 1, onError: 'skip' },
        { name: 'flaky', after: [], order: 2, onError: 'skip' },
        { name: 'empty', after: [], order: 3, onError: 'skip' },
      ],
    });
  });

  it('runs them with preprocessors/run and sends a debug logging notification per run', async () => {
    const { client, notes } = await connect(era);
    // legacy: no logging/setLevel sent ⇒ every level goes out; modern: the level rides the request's _meta
    const run = runOf(await client.request({ method: 'preprocessors/run', params: { input: 'cheese', _meta: DEBUG_META } }, Loose));
    expect(run.ok).toBe(true);
    expect(run.blocks.map(({ durationMs: _d, ...b }) => b)).toEqual([
      { name: 'memories', status: 'ok', content: 'likes cheese' },
      { name: 'profile', status: 'ok', content: '{"locale":"fr"}' },
      { name: 'flaky', status: 'error', error: 'backend down' },
      { name: 'empty', status: 'ok' },
    ]);
    await flush();
    expect(notes.map((n) => [n.level, n.logger, (n.data as { preprocessor: string }).preprocessor])).toEqual([
      ['debug', 'preprocessors', 'memories'],
      ['debug', 'preprocessors', 'profile'],
      ['debug', 'preprocessors', 'flaky'],
      ['debug', 'preprocessors', 'empty'],
    ]);
  });

  it("sends logging notifications only as far as the client's level allows", async () => {
    const { client, raw, notes } = await connect(era);
    if (era === 'legacy') await (raw as LegacyClient).setLoggingLevel('info');
    await client.request(
      { method: 'preprocessors/run', params: era === 'legacy' ? { input: 'x' } : { input: 'x', _meta: { [LOG_LEVEL_META_KEY]: 'info' } } },
      Loose,
    );
    await client.request({ method: 'preprocessors/run', params: { input: 'x' } }, Loose); // modern: no level in _meta ⇒ none
    await flush();
    expect(notes).toEqual([]);
  });

  it('answers invalid params with -32602', async () => {
    const { client } = await connect(era);
    for (const params of [undefined, {}, { input: 42 }]) {
      const err = await rejection(client.request({ method: 'preprocessors/run', ...(params ? { params } : {}) }, Loose));
      expect(err.code).toBe(ProtocolErrorCode.InvalidParams);
      expect(err.message).toContain('preprocessors/run needs params.input');
    }
  });

  it('serves with_context: the blocks as user messages, then the input; deterministic; notifications too', async () => {
    const { client, notes } = await connect(era);
    const { prompts } = await client.listPrompts();
    expect(prompts).toEqual([expect.objectContaining({ name: 'with_context', arguments: [expect.objectContaining({ name: 'input', required: true })] })]);
    const first = await client.getPrompt({ name: 'with_context', arguments: { input: 'cheese' }, _meta: DEBUG_META });
    expect(first.messages).toEqual([
      { role: 'user', content: { type: 'text', text: '[preprocessor memories] likes cheese' } },
      { role: 'user', content: { type: 'text', text: '[preprocessor profile] {"locale":"fr"}' } },
      { role: 'user', content: { type: 'text', text: '[preprocessor flaky: error] backend down' } },
      { role: 'user', content: { type: 'text', text: '[preprocessor empty] (no output)' } },
      { role: 'user', content: { type: 'text', text: 'cheese' } },
    ]);
    expect((await client.getPrompt({ name: 'with_context', arguments: { input: 'cheese' } })).messages).toEqual(first.messages);
    await flush();
    expect(notes.length).toBeGreaterThanOrEqual(4);
    await expect(client.getPrompt({ name: 'with_context' })).rejects.toThrow(/missing required argument "input"/);
  });

  it('fails with_context with -32603 when a fail preprocessor fails', async () => {
    const defs: PreprocessorDefinition[] = [{ name: 'auth', onError: 'fail', timeoutMs: 30, handler: () => new Promise(() => undefined) }];
    const { client } = await connect(era, { defs });
    const err = await rejection(client.getPrompt({ name: 'with_context', arguments: { input: 'x' } }));
    expect(err.code).toBe(ProtocolErrorCode.InternalError);
    expect(err.message).toContain('Preprocessor auth timeout: timed out after 30 ms');
    const run = runOf(await client.request({ method: 'preprocessors/run', params: { input: 'x' } }, Loose));
    expect(run).toMatchObject({ ok: false, blocks: [{ name: 'auth', status: 'timeout' }] });
  });
});

describe('preprocessors protocol, era-free', () => {
  it('installPreprocessors refuses a cyclic graph up front', () => {
    const server = new Server({ name: 'x', version: '1' }, { capabilities: {} });
    expect(() => installPreprocessors(server, [{ name: 'a', after: ['a'], handler: () => 1 }])).toThrow(/cycle/);
  });

  it('formats block messages', () => {
    expect(blockMessage({ name: 'a', status: 'timeout', durationMs: 5 })).toBe('[preprocessor a: timeout]');
  });
});

describe.each(ERAS)('host helper (preprocessors-host.ts) with the %s-era client', (era) => {
  const expected = [
    { name: 'memories', status: 'ok', content: 'likes tea' },
    { name: 'profile', status: 'ok', content: '{"locale":"fr"}' },
    { name: 'flaky', status: 'error', error: 'backend down' },
    { name: 'empty', status: 'ok' },
  ];
  // both SDK clients fit the structural type without a cast (checked by tsc on this file)
  const host = (raw: AnyClient): PreprocessorHostClient => raw;

  it('uses preprocessors/run when the server advertises it', async () => {
    const { raw } = await connect(era);
    const result = await hostRun(host(raw), 'tea');
    expect(result.via).toBe('preprocessors/run');
    expect(result.ok).toBe(true);
    expect(result.blocks.map(({ durationMs: _d, ...b }) => b)).toEqual(expected);
  });

  it('falls back to the with_context prompt, parsing the blocks back', async () => {
    const { raw } = await connect(era, { experimental: false });
    const result = await hostRun(host(raw), 'tea');
    expect(result).toEqual({ ok: true, via: 'with_context', blocks: expected });
  });

  it('returns no blocks for a server with neither', async () => {
    const { raw } = await connect(era, { experimental: false, prompt: false });
    expect(await hostRun(host(raw), 'tea')).toEqual({ ok: true, via: 'none', blocks: [] });
  });

  it('passes request options (an aborted signal rejects)', async () => {
    const { raw } = await connect(era);
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(hostRun(host(raw), 'tea', { signal: controller.signal })).rejects.toThrow();
  });

  it('toSystemContext renders ok content under headings and notes failures', async () => {
    const { raw } = await connect(era);
    const { blocks } = await hostRun(host(raw), 'tea');
    expect(toSystemContext(blocks)).toBe(
      [
        'Context gathered for this message by preprocessors (not part of the conversation):',
        '## memories\nlikes tea\n\n## profile\n{"locale":"fr"}',
        'Unavailable context:\n- flaky: error (backend down)',
      ].join('\n\n'),
    );
    expect(toSystemContext([])).toBe('');
    expect(toSystemContext([{ name: 'e', status: 'ok' }])).toBe('');
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { LoggingMessageNotification, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { setLogSink } from '../../../templates/runtime/log.js';
import { runPreprocessors as hostRun, toSystemContext } from '../../../templates/runtime/preprocessors-host.js';
import { blockMessage, installPreprocessors, preprocessorCapability, withContextPrompt } from '../../../templates/runtime/preprocessors-protocol.js';
import type { PreprocessorDefinition } from '../../../templates/runtime/preprocessors.js';
import { installPrompts } from '../../../templates/runtime/prompts.js';

beforeAll(() => {
  setLogSink(() => undefined);
});
const open: Client[] = [];
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

async function connect(setup: Setup = {}): Promise<{ client: Client; notes: LoggingMessageNotification['params'][] }> {
  const defs = setup.defs ?? DEFS;
  const capabilities: ServerCapabilities = { logging: {} };
  if (setup.prompt !== false) capabilities.prompts = {};
  if (setup.experimental !== false) capabilities.experimental = { preprocessors: preprocessorCapability(defs, setup.prompt !== false) };
  const server = new Server({ name: 'pp', version: '1' }, { capabilities });
  if (setup.experimental !== false) installPreprocessors(server, defs);
  if (setup.prompt !== false) installPrompts(server, [withContextPrompt(defs, { server })]);
  const client = new Client({ name: 'host', version: '1' });
  const notes: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notes.push(n.params));
  const [ct, st] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(st), client.connect(ct)]);
  open.push(client);
  return { client, notes };
}

const Loose = z.looseObject({});

describe('preprocessors over MCP', () => {
  it('advertises capabilities.experimental.preprocessors and lists in run order', async () => {
    const { client } = await connect();
    expect(client.getServerCapabilities()?.experimental?.preprocessors).toEqual({
      methods: ['preprocessors/list', 'preprocessors/run'],
      preprocessors: ['memories', 'profile', 'flaky', 'empty'],
      prompt: 'with_context',
    });
    const list = await client.request({ method: 'preprocessors/list' }, Loose);
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
    const { client, notes } = await connect();
    const run = (await client.request({ method: 'preprocessors/run', params: { input: 'cheese' } }, Loose)) as { ok: boolean; blocks: { name: string; status: string; durationMs: number; content?: string; error?: string }[] };
    expect(run.ok).toBe(true);
    expect(run.blocks.map(({ durationMs: _d, ...b }) => b)).toEqual([
      { name: 'memories', status: 'ok', content: 'likes cheese' },
      { name: 'profile', status: 'ok', content: '{"locale":"fr"}' },
      { name: 'flaky', status: 'error', error: 'backend down' },
      { name: 'empty', status: 'ok' },
    ]);
    await new Promise((r) => setTimeout(r, 10));
    expect(notes.map((n) => [n.level, n.logger, (n.data as { preprocessor: string }).preprocessor])).toEqual([
      ['debug', 'preprocessors', 'memories'],
      ['debug', 'preprocessors', 'profile'],
      ['debug', 'preprocessors', 'flaky'],
      ['debug', 'preprocessors', 'empty'],
    ]);
  });

  it('answers invalid params with -32602', async () => {
    const { client } = await connect();
    for (const params of [undefined, {}, { input: 42 }]) {
      const err = await client.request({ method: 'preprocessors/run', ...(params ? { params } : {}) }, Loose).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
      expect((err as McpError).message).toContain('preprocessors/run needs params.input');
    }
  });

  it('serves with_context: the blocks as user messages, then the input; deterministic', async () => {
    const { client } = await connect();
    const { prompts } = await client.listPrompts();
    expect(prompts).toEqual([expect.objectContaining({ name: 'with_context', arguments: [expect.objectContaining({ name: 'input', required: true })] })]);
    const first = await client.getPrompt({ name: 'with_context', arguments: { input: 'cheese' } });
    expect(first.messages).toEqual([
      { role: 'user', content: { type: 'text', text: '[preprocessor memories] likes cheese' } },
      { role: 'user', content: { type: 'text', text: '[preprocessor profile] {"locale":"fr"}' } },
      { role: 'user', content: { type: 'text', text: '[preprocessor flaky: error] backend down' } },
      { role: 'user', content: { type: 'text', text: '[preprocessor empty] (no output)' } },
      { role: 'user', content: { type: 'text', text: 'cheese' } },
    ]);
    expect(await client.getPrompt({ name: 'with_context', arguments: { input: 'cheese' } })).toEqual(first);
    await expect(client.getPrompt({ name: 'with_context' })).rejects.toThrow(/missing required argument "input"/);
  });

  it('fails with_context with -32603 when a fail preprocessor fails', async () => {
    const defs: PreprocessorDefinition[] = [{ name: 'auth', onError: 'fail', timeoutMs: 30, handler: () => new Promise(() => undefined) }];
    const { client } = await connect({ defs });
    const err = await client.getPrompt({ name: 'with_context', arguments: { input: 'x' } }).catch((e: unknown) => e);
    expect((err as McpError).code).toBe(ErrorCode.InternalError);
    expect((err as McpError).message).toContain('Preprocessor auth timeout: timed out after 30 ms');
    const run = await client.request({ method: 'preprocessors/run', params: { input: 'x' } }, Loose);
    expect(run).toMatchObject({ ok: false, blocks: [{ name: 'auth', status: 'timeout' }] });
  });

  it('installPreprocessors refuses a cyclic graph up front', () => {
    const server = new Server({ name: 'x', version: '1' }, { capabilities: {} });
    expect(() => installPreprocessors(server, [{ name: 'a', after: ['a'], handler: () => 1 }])).toThrow(/cycle/);
  });

  it('formats block messages', () => {
    expect(blockMessage({ name: 'a', status: 'timeout', durationMs: 5 })).toBe('[preprocessor a: timeout]');
  });
});

describe('host helper (preprocessors-host.ts)', () => {
  const expected = [
    { name: 'memories', status: 'ok', content: 'likes tea' },
    { name: 'profile', status: 'ok', content: '{"locale":"fr"}' },
    { name: 'flaky', status: 'error', error: 'backend down' },
    { name: 'empty', status: 'ok' },
  ];

  it('uses preprocessors/run when the server advertises it', async () => {
    const { client } = await connect();
    const result = await hostRun(client, 'tea');
    expect(result.via).toBe('preprocessors/run');
    expect(result.ok).toBe(true);
    expect(result.blocks.map(({ durationMs: _d, ...b }) => b)).toEqual(expected);
  });

  it('falls back to the with_context prompt, parsing the blocks back', async () => {
    const { client } = await connect({ experimental: false });
    const result = await hostRun(client, 'tea');
    expect(result).toEqual({ ok: true, via: 'with_context', blocks: expected });
  });

  it('returns no blocks for a server with neither', async () => {
    const { client } = await connect({ experimental: false, prompt: false });
    expect(await hostRun(client, 'tea')).toEqual({ ok: true, via: 'none', blocks: [] });
  });

  it('toSystemContext renders ok content under headings and notes failures', async () => {
    const { client } = await connect();
    const { blocks } = await hostRun(client, 'tea');
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

import type { Prompt } from '@modelcontextprotocol/server';
import { Server } from '@modelcontextprotocol/server';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { PrimitiveGate } from '../../../templates/runtime/core/primitive-gate.js';
import type { PromptDefinition } from '../../../templates/runtime/primitives/prompts.js';
import { installPrompts, missingArguments, renderPrompt } from '../../../templates/runtime/primitives/prompts.js';
import type { Era } from '../../helpers/linked.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

const review = {
  name: 'review',
  title: 'Code review',
  description: 'Reviews code',
  arguments: [
    { name: 'code', description: 'The code', required: true },
    { name: 'focus', description: 'What to look at' },
  ],
  messages: [
    { role: 'user' as const, text: 'Review this code <{{code}}>{{#if focus}} focusing on {{focus}}{{/if}}. Note: {{focus}}.' },
    { role: 'assistant' as const, text: 'Sure & happy to.' },
  ],
};
const dynamic: PromptDefinition = {
  name: 'with_context',
  arguments: [{ name: 'input', required: true }],
  handler: (args) => ({ messages: [{ role: 'user', content: { type: 'text', text: `ctx + ${args.input}` } }] }),
};
const broken: PromptDefinition = { name: 'broken', messages: [{ role: 'user', text: '{{#each}}' }] };
const failing: PromptDefinition = {
  name: 'failing',
  handler: () => {
    throw new Error('no context');
  },
};
const prompts: PromptDefinition[] = [review, dynamic, broken, failing, { name: 'hidden', messages: [{ role: 'user', text: 'x' }] }];

const logs: string[] = [];
beforeAll(() => {
  setLogSink((line) => logs.push(line));
});
/** What the tests call on either client. */
type PromptClient = {
  listPrompts(params?: object): Promise<{ prompts: Prompt[] }>;
  getPrompt(params: {
    name: string;
    arguments?: Record<string, string>;
    _meta?: object;
  }): Promise<{ description?: string; messages: unknown[]; _meta?: unknown }>;
  close(): Promise<void>;
};

/** Awaits `p`, expects a JSON-RPC error (v1 `McpError` or v2 `ProtocolError`) and returns it. */
async function rejection(p: Promise<unknown>): Promise<{ code: number; message: string; data?: unknown }> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(typeof (err as { code?: unknown } | undefined)?.code).toBe('number');
  return err as { code: number; message: string; data?: unknown };
}

const open: PromptClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const hideHidden: PrimitiveGate = {
  visible: (_kind, id) => id !== 'hidden',
  assertAllowed: () => undefined,
  decorate: (_kind, id, item) => (id === 'review' ? { ...item, _meta: { tag: 1 } } : item),
};

async function connect(era: Era, gate?: PrimitiveGate): Promise<PromptClient> {
  const client = (await linkedClient(() => {
    const server = new Server({ name: 'p', version: '1' }, { capabilities: { prompts: { listChanged: true } } });
    installPrompts(server, prompts, gate ? { gate } : {});
    return server;
  }, era)) as unknown as PromptClient;
  open.push(client);
  return client;
}

/** A result without the `_meta` the modern era stamps on every result (server info). */
function bare<T extends { _meta?: unknown }>(result: T): Omit<T, '_meta'> {
  const { _meta: _ignored, ...rest } = result;
  return rest;
}

describe('renderPrompt', () => {
  it('renders without HTML escaping and leaves missing optional arguments empty', () => {
    expect(renderPrompt(review, { code: 'a < b && c' })).toEqual([
      { role: 'user', content: { type: 'text', text: 'Review this code <a < b && c>. Note: .' } },
      { role: 'assistant', content: { type: 'text', text: 'Sure & happy to.' } },
    ]);
    expect(renderPrompt(review, { code: 'x', focus: 'naming' })[0]?.content.text).toBe('Review this code <x> focusing on naming. Note: naming.');
  });
  it('passes only declared arguments and blocks prototype access', () => {
    const def = { name: 'p', arguments: [{ name: 'a' }], messages: [{ role: 'user' as const, text: '{{a}}|{{b}}|{{constructor}}|{{a.constructor}}' }] };
    expect(renderPrompt(def, { a: '1', b: '2' })[0]?.content.text).toBe('1|||');
  });
  it('reports missing required arguments', () => {
    expect(missingArguments(review, { focus: 'x' })).toEqual(['code']);
    expect(missingArguments(review, { code: '' })).toEqual([]);
  });
});

describe.each(ERAS)('installPrompts (%s era)', (era) => {
  it('lists prompts with their arguments, filtered and decorated by the gate', async () => {
    const client = await connect(era, hideHidden);
    const { prompts: listed } = await client.listPrompts();
    expect(listed.map((p) => p.name)).toEqual(['review', 'with_context', 'broken', 'failing']);
    expect(listed[0]).toEqual({
      name: 'review',
      title: 'Code review',
      description: 'Reviews code',
      arguments: [
        { name: 'code', description: 'The code', required: true },
        { name: 'focus', description: 'What to look at' },
      ],
      _meta: { tag: 1 },
    });
    expect(Object.keys(listed[3] ?? {})).toEqual(['name']);
  });

  it('gets a rendered template prompt', async () => {
    const client = await connect(era);
    const result = await client.getPrompt({ name: 'review', arguments: { code: 'f()', focus: 'bugs' } });
    expect(bare(result)).toEqual({
      description: 'Reviews code',
      messages: [
        { role: 'user', content: { type: 'text', text: 'Review this code <f()> focusing on bugs. Note: bugs.' } },
        { role: 'assistant', content: { type: 'text', text: 'Sure & happy to.' } },
      ],
    });
  });

  it('gets a dynamic prompt', async () => {
    const client = await connect(era);
    expect((await client.getPrompt({ name: 'with_context', arguments: { input: 'hello' } })).messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'ctx + hello' } },
    ]);
  });

  it("hands a dynamic prompt the request context (the request's own _meta)", async () => {
    const seen: unknown[] = [];
    const client = (await linkedClient(() => {
      const server = new Server({ name: 'p', version: '1' }, { capabilities: { prompts: {} } });
      installPrompts(server, [{ name: 'ctx', handler: (_args, ctx) => (seen.push(ctx.mcpReq._meta?.['x/k']), { messages: [] }) }]);
      return server;
    }, era)) as unknown as PromptClient;
    open.push(client);
    await client.getPrompt({ name: 'ctx', _meta: { 'x/k': 'v' } });
    expect(seen).toEqual(['v']);
  });

  it('rejects a missing required argument with -32602 naming it', async () => {
    const client = await connect(era);
    const err = await rejection(client.getPrompt({ name: 'review', arguments: { focus: 'x' } }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('missing required argument "code"');
    expect(err.data).toEqual({ missing: ['code'] });
  });

  it('rejects an unknown prompt with -32602', async () => {
    const client = await connect(era);
    const err = await rejection(client.getPrompt({ name: 'nope' }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('Unknown prompt: nope');
  });

  it('turns template and handler failures into -32603 and logs them', async () => {
    const client = await connect(era);
    const bad = await rejection(client.getPrompt({ name: 'broken' }));
    expect(bad.code).toBe(-32603);
    expect(bad.message).toContain('Prompt broken could not be rendered');
    const failed = await rejection(client.getPrompt({ name: 'failing' }));
    expect(failed.code).toBe(-32603);
    expect(failed.message).toContain('no context');
    expect(logs.join('')).toContain('prompt failing failed');
  });

  it('refuses duplicate names', () => {
    const server = new Server({ name: 'p', version: '1' }, { capabilities: { prompts: {} } });
    expect(() => installPrompts(server, [review, review])).toThrow('Duplicate prompt name: review');
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/log.js';
import type { PrimitiveGate } from '../../../templates/runtime/primitives.js';
import { installPrompts, missingArguments, renderPrompt } from '../../../templates/runtime/prompts.js';
import type { PromptDefinition } from '../../../templates/runtime/prompts.js';
import { rejection } from '../../helpers/mcp.js';

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
const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const hideHidden: PrimitiveGate = {
  visible: (_kind, id) => id !== 'hidden',
  assertAllowed: () => undefined,
  decorate: (_kind, id, item) => (id === 'review' ? { ...item, _meta: { tag: 1 } } : item),
};

async function connect(gate?: PrimitiveGate): Promise<Client> {
  const server = new Server({ name: 'p', version: '1' }, { capabilities: { prompts: { listChanged: true } } });
  installPrompts(server, prompts, gate ? { gate } : {});
  const [clientT, serverT] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '1' });
  await Promise.all([server.connect(serverT), client.connect(clientT)]);
  open.push(client);
  return client;
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

describe('installPrompts', () => {
  it('lists prompts with their arguments, filtered and decorated by the gate', async () => {
    const client = await connect(hideHidden);
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
    const client = await connect();
    const result = await client.getPrompt({ name: 'review', arguments: { code: 'f()', focus: 'bugs' } });
    expect(result).toEqual({
      description: 'Reviews code',
      messages: [
        { role: 'user', content: { type: 'text', text: 'Review this code <f()> focusing on bugs. Note: bugs.' } },
        { role: 'assistant', content: { type: 'text', text: 'Sure & happy to.' } },
      ],
    });
  });

  it('gets a dynamic prompt', async () => {
    const client = await connect();
    expect((await client.getPrompt({ name: 'with_context', arguments: { input: 'hello' } })).messages).toEqual([{ role: 'user', content: { type: 'text', text: 'ctx + hello' } }]);
  });

  it('rejects a missing required argument with -32602 naming it', async () => {
    const client = await connect();
    const err = await rejection(client.getPrompt({ name: 'review', arguments: { focus: 'x' } }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('missing required argument "code"');
    expect(err.data).toEqual({ missing: ['code'] });
  });

  it('rejects an unknown prompt with -32602', async () => {
    const client = await connect();
    const err = await rejection(client.getPrompt({ name: 'nope' }));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('Unknown prompt: nope');
  });

  it('turns template and handler failures into -32603 and logs them', async () => {
    const client = await connect();
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

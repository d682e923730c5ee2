/**
 * templates/runtime/primitives/completion.ts and the prompt content of templates/runtime/primitives/prompts.ts on a
 * v2 SDK `Server`, with a legacy and a modern client over an in-memory link: prefix matching,
 * the 100-value limit, the gate (a prompt or template the session may not use is -32602, as an
 * unknown one), and a prompt that embeds a declared resource through the resources' reader (the
 * resources' gate applies).
 */
import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { PrimitiveGate } from '../../../templates/runtime/core/primitive-gate.js';
import { complete, installCompletions, MAX_COMPLETION_VALUES } from '../../../templates/runtime/primitives/completion.js';
import type { PromptDefinition } from '../../../templates/runtime/primitives/prompts.js';
import { installPrompts } from '../../../templates/runtime/primitives/prompts.js';
import { installResources } from '../../../templates/runtime/primitives/resources.js';
import type { AnyClient } from '../../helpers/linked.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

const prompts: PromptDefinition[] = [
  {
    name: 'find',
    arguments: [{ name: 'status', complete: ['available', 'pending', 'sold'] }, { name: 'free' }],
    messages: [{ role: 'user', text: '{{status}}' }],
  },
  { name: 'secret', arguments: [{ name: 'x', complete: ['a'] }], messages: [{ role: 'user', resource: { uri: 'x://secret', read: true } }] },
  { name: 'open', messages: [{ role: 'user', resource: { uri: 'x://docs', read: true } }] },
  { name: 'leaky', messages: [{ role: 'user', resource: { uri: 'x://secret', read: true } }] },
];
const templates = [{ uriTemplate: 'x://pets/{kind}', name: 'pets', complete: { kind: ['cat', 'dog'] }, handler: () => 'pet' }];
const resources = [
  { uri: 'x://docs', name: 'docs', mimeType: 'text/plain', text: 'D' },
  { uri: 'x://secret', name: 'secret', text: 'S' },
];
/** Hides and refuses the prompt `secret` and the resource `x://secret`. */
const gate: PrimitiveGate = {
  visible: (_kind, id) => !id.includes('secret'),
  assertAllowed: (kind, id) => {
    if (id.includes('secret')) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${kind} ${id} is not available`);
  },
  decorate: (_kind, _id, item) => item,
};

type Client = { complete(p: unknown): Promise<{ completion: unknown }>; getPrompt(p: unknown): Promise<{ messages: unknown[] }>; close(): Promise<void> };
const open: AnyClient[] = [];
afterEach(async () => void (await Promise.all(open.splice(0).map((c) => c.close()))));

describe('complete()', () => {
  it('matches prefixes ignoring case, keeps the order, and sends at most 100 values with total and hasMore', () => {
    expect(complete(['Paris', 'park', 'Lyon', 'pa'], 'PA')).toEqual({ values: ['Paris', 'park', 'pa'], total: 3, hasMore: false });
    const many = Array.from({ length: 250 }, (_, i) => `v${i}`);
    expect(complete(many, '')).toEqual({ values: many.slice(0, MAX_COMPLETION_VALUES), total: 250, hasMore: true });
    expect(complete(many, 'v24')).toEqual({ values: ['v24', ...Array.from({ length: 10 }, (_, i) => `v24${i}`)], total: 11, hasMore: false });
  });
});

describe.each(ERAS)('%s era', (era) => {
  async function connect(): Promise<Client> {
    const client = await linkedClient(() => {
      const server = new Server({ name: 'c', version: '1' }, { capabilities: { prompts: {}, resources: {}, completions: {} } });
      const readResource = installResources(server, { resources, templates }, { gate });
      installPrompts(server, prompts, { gate, readResource });
      installCompletions(server, { prompts, templates }, { gate });
      return server;
    }, era);
    open.push(client);
    return client as unknown as Client;
  }

  it('completes prompt arguments and template variables; unknown or forbidden refs are -32602', async () => {
    const c = await connect();
    const ask = (ref: object, name: string, value: string) => c.complete({ ref, argument: { name, value } }).then((r) => r.completion);
    expect(await ask({ type: 'ref/prompt', name: 'find' }, 'status', 's')).toEqual({ values: ['sold'], total: 1, hasMore: false });
    expect(await ask({ type: 'ref/prompt', name: 'find' }, 'free', '')).toEqual({ values: [], total: 0, hasMore: false });
    expect(await ask({ type: 'ref/resource', uri: 'x://pets/{kind}' }, 'kind', 'D')).toEqual({ values: ['dog'], total: 1, hasMore: false });
    for (const ref of [
      { type: 'ref/prompt', name: 'nope' },
      { type: 'ref/prompt', name: 'secret' },
      { type: 'ref/resource', uri: 'x://nope/{a}' },
    ]) {
      const err = await ask(ref, 'x', '').then(
        () => undefined,
        (e: { code: number }) => e,
      );
      expect(err?.code, JSON.stringify(ref)).toBe(-32602);
    }
  });

  it('embeds a declared resource read through the resources’ reader, whose gate applies', async () => {
    const c = await connect();
    expect((await c.getPrompt({ name: 'open' })).messages).toEqual([
      { role: 'user', content: { type: 'resource', resource: { uri: 'x://docs', mimeType: 'text/plain', text: 'D' } } },
    ]);
    // a prompt the gate refuses, and an allowed prompt embedding a resource the gate refuses
    for (const name of ['secret', 'leaky']) {
      const err = await c.getPrompt({ name }).then(
        () => undefined,
        (e: { code: number; message: string }) => e,
      );
      expect(err?.code, name).toBe(-32602);
      if (name === 'leaky') expect(err?.message).toContain('resources x://secret is not available');
    }
  });
});

describe('a completion handler', () => {
  it.each(ERAS)('%s era: gets the typed value and the other arguments; its strings are sent in its order, cut to 100; a throw gives none', async (era) => {
    const seen: Array<{ value: string; args: Record<string, string> }> = [];
    const many = Array.from({ length: 150 }, (_, i) => `v${i}`);
    const sources = {
      prompts: [
        {
          name: 'h',
          arguments: [
            {
              name: 'a',
              complete: (value: string, context: { arguments: Readonly<Record<string, string>> }) => {
                seen.push({ value, args: { ...context.arguments } });
                if (value === 'boom') throw new Error('boom');
                if (value === 'many') return many;
                return ['zeta', 7 as unknown as string, 'alpha'];
              },
            },
          ],
        },
      ],
    };
    const client = (await linkedClient(({}) => {
      const server = new Server({ name: 't', version: '1' }, { capabilities: { completions: {} } });
      installCompletions(server, sources);
      return server;
    }, era)) as unknown as Client;
    open.push(client as unknown as AnyClient);
    const ask = async (value: string, context?: Record<string, string>) =>
      (
        await client.complete({
          ref: { type: 'ref/prompt', name: 'h' },
          argument: { name: 'a', value },
          ...(context ? { context: { arguments: context } } : {}),
        })
      ).completion;
    expect(await ask('x', { b: 'B' })).toEqual({ values: ['zeta', 'alpha'], total: 2, hasMore: false });
    expect(seen[0]).toEqual({ value: 'x', args: { b: 'B' } });
    expect(await ask('many')).toEqual({ values: many.slice(0, MAX_COMPLETION_VALUES), total: 150, hasMore: true });
    expect(await ask('boom')).toEqual({ values: [] });
  });
});

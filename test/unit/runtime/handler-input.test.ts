/**
 * templates/runtime/tools/handler-input.ts in the 2026-07-28 era, on a fake request context: question
 * keys, questions asked together going out in one round, answers kept in the round state for
 * later rounds, an answer of the wrong kind asked again, a handler that swallows the pending
 * signal still answering input_required, and the capability error.
 */

import type { Server, ServerContext } from '@modelcontextprotocol/server';
import { CLIENT_CAPABILITIES_META_KEY, MissingRequiredClientCapabilityError } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { ExtraToolContext } from '../../../templates/runtime/tools/extra-tools.js';
import { callExtraTool, defineTool } from '../../../templates/runtime/tools/extra-tools.js';
import { inputSession } from '../../../templates/runtime/tools/handler-input.js';

const ALL = { elicitation: {}, sampling: {}, roots: {} };
const FORM = { type: 'object' as const, properties: { name: { type: 'string' } }, required: ['name'] };

/** One round of a modern call: the request's capabilities and answers, the call's round state. */
function round(state: Record<string, unknown>, inputResponses?: Record<string, unknown>, caps: Record<string, unknown> = ALL) {
  const ctx = { mcpReq: { envelope: { [CLIENT_CAPABILITIES_META_KEY]: caps }, inputResponses, id: 1 } } as unknown as ServerContext;
  const server = { getClientCapabilities: () => undefined } as unknown as Server;
  return inputSession({ era: 'modern', server, ctx, state, signal: new AbortController().signal });
}

const run = (
  handler: (args: unknown, ctx: ExtraToolContext) => unknown,
  state: Record<string, unknown>,
  responses?: Record<string, unknown>,
  caps?: Record<string, unknown>,
) =>
  callExtraTool(defineTool({ kind: 'extra', name: 't', inputSchema: { type: 'object' }, handler }), {}, new AbortController().signal, {
    input: round(state, responses, caps),
  });

describe('handler questions in the 2026-07-28 era', () => {
  it('questions asked together go out in one round, keyed in order; the answers of earlier rounds stay in the state', async () => {
    const state: Record<string, unknown> = {};
    const handler = async (_args: unknown, ctx: ExtraToolContext) => {
      const [who, roots] = await Promise.all([ctx.elicit<{ name: string }>('name?', FORM), ctx.roots()]);
      const model = await ctx.sample({
        messages: [{ role: 'user', content: { type: 'text', text: `hi ${who.action === 'accept' ? who.content.name : ''}` } }],
        maxTokens: 5,
      });
      return `${who.action} ${roots.length} ${(model.content as { text: string }).text}`;
    };
    const first = (await run(handler, state)) as { resultType?: string; inputRequests?: Record<string, { method: string }> };
    expect(first.resultType).toBe('input_required');
    expect(Object.fromEntries(Object.entries(first.inputRequests!).map(([k, v]) => [k, v.method]))).toEqual({
      'elicit-1': 'elicitation/create',
      'roots-1': 'roots/list',
    });
    const second = (await run(handler, state, {
      'elicit-1': { action: 'accept', content: { name: 'Ada' } },
      'roots-1': { roots: [{ uri: 'file:///a' }] },
    })) as { inputRequests?: Record<string, { method: string; params: unknown }> };
    expect(Object.keys(second.inputRequests!)).toEqual(['sample-1']);
    // the third round carries only the model's answer: the others come from the state
    const third = await run(handler, state, { 'sample-1': { role: 'assistant', model: 'm', content: { type: 'text', text: 'hello' } } });
    expect(third).toEqual({ content: [{ type: 'text', text: 'accept 1 hello' }] });
  });

  it('an answer of another kind is asked again; a handler that swallows the pending signal still waits for the answer', async () => {
    const state: Record<string, unknown> = {};
    const swallowing = async (_args: unknown, ctx: ExtraToolContext) => {
      try {
        await ctx.elicit('name?', FORM, { key: 'who' });
      } catch {
        return 'gave up';
      }
      return 'asked';
    };
    const asked = (await run(swallowing, state, { who: { roots: [] } })) as { resultType?: string; inputRequests?: Record<string, unknown> };
    expect(asked.resultType).toBe('input_required');
    expect(Object.keys(asked.inputRequests!)).toEqual(['who']);
  });

  it('a question the request did not declare the capability for fails the call with -32021', async () => {
    const handler = (_args: unknown, ctx: ExtraToolContext) => ctx.sample({ messages: [], maxTokens: 1 });
    const err = await run(handler, {}, undefined, { elicitation: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MissingRequiredClientCapabilityError);
    expect((err as MissingRequiredClientCapabilityError).code).toBe(-32021);
    expect((err as { data?: unknown }).data).toEqual({ requiredCapabilities: { sampling: {} } });
  });
});

import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { ServerConfig } from '../../../templates/runtime/core/types.js';
import type { RoundNonces } from '../../../templates/runtime/server/round-nonces.js';
import { LocalRoundNonces } from '../../../templates/runtime/server/round-nonces.js';
import type { Step } from '../../../templates/runtime/server/server.js';
import { createServer } from '../../../templates/runtime/server/server.js';
import { SharedStateError } from '../../../templates/runtime/shared/shared-state.js';
import { defineTool } from '../../../templates/runtime/tools/extra-tools.js';
import type { AnyClient, Era } from '../../helpers/linked.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

setLogSink(() => undefined);
const config: ServerConfig = { name: 'pipeline', version: '1.0.0', envPrefix: 'PIPE', timeoutMs: 5000, maxResponseBytes: 100_000 };
const echo = defineTool<{ text: string }, unknown>({
  kind: 'extra',
  name: 'echo',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  handler: (args) => args.text,
});
const clients: AnyClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** A client with a sampling handler that answers `reply` and counts the requests. */
async function samplingClient(steps: Step[], era: Era, reply = 'yes'): Promise<{ client: AnyClient; sampled: () => number }> {
  let n = 0;
  const handler = () => {
    n++;
    return { role: 'assistant' as const, model: 'scripted', content: { type: 'text' as const, text: reply } };
  };
  const client = await linkedClient(createServer(config, [], {}, { extraTools: [echo], steps }), era, {
    capabilities: { sampling: {} },
    setup: (c) => {
      if (era === 'legacy') (c as { setRequestHandler: (s: unknown, h: unknown) => void }).setRequestHandler(CreateMessageRequestSchema, handler);
      else (c as { setRequestHandler: (m: string, h: unknown) => void }).setRequestHandler('sampling/createMessage', handler);
    },
  });
  clients.push(client);
  return { client, sampled: () => n };
}

describe.each(ERAS)('the tool-call pipeline, %s era', (era: Era) => {
  it('keeps one logical call across an input round: same call id and state, first round only once', async () => {
    const rounds: Array<{ callId: string; firstRound: boolean; identity: string; era: string; state: unknown }> = [];
    const ask: Step = async (call, next) => {
      rounds.push({ callId: call.callId, firstRound: call.firstRound, identity: call.identity, era: call.era, state: { ...call.state } });
      if (call.firstRound) call.state.asked = 'once';
      const answer = inputResponse(call.ctx.mcpReq.inputResponses, 'approve');
      if (answer.kind !== 'sampling')
        return {
          result: inputRequired({
            inputRequests: {
              approve: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'May echo run?' } }], maxTokens: 5 }),
            },
          }),
        };
      return next();
    };
    const { client, sampled } = await samplingClient([ask], era);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'hi' }] });
    expect(sampled()).toBe(1);
    expect(rounds).toHaveLength(2);
    expect(rounds[0]).toMatchObject({ firstRound: true, identity: 'local', era, state: {} });
    // the second round is the same logical call, and sees what the first one stored
    expect(rounds[1]).toMatchObject({ callId: rounds[0]!.callId, firstRound: false, state: { asked: 'once' } });
    // another call is another logical call
    await client.callTool({ name: 'echo', arguments: { text: 'again' } });
    expect(rounds[2]!.callId).not.toBe(rounds[0]!.callId);
  });

  it('runs the steps before validation: a step can refuse a call whose arguments are invalid', async () => {
    const seen: string[] = [];
    const refuse: Step = async (call) => {
      seen.push(call.name);
      return { result: { isError: true, content: [{ type: 'text', text: `refused ${call.name}` }] } };
    };
    const { client } = await samplingClient([refuse], era);
    expect(await client.callTool({ name: 'echo', arguments: { text: 7 } })).toMatchObject({ isError: true, content: [{ type: 'text', text: 'refused echo' }] });
    expect(seen).toEqual(['echo']);
  });
});

it('refuses a forged requestState (modern era) with -32602', async () => {
  const { client } = await samplingClient([], 'modern');
  const err = await (client as { request: (r: unknown, s: unknown) => Promise<unknown> })
    .request(
      { method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, requestState: 'forged.state.token', inputResponses: {} } },
      CreateMessageRequestSchema,
    )
    .then(
      () => undefined,
      (e: unknown) => e as { code: number; message: string },
    );
  expect(err).toMatchObject({ code: -32602 });
  expect((err as { message: string }).message).toMatch(/requestState/);
});

it('refuses a requestState offered with another call (tool or arguments differ): a new call cannot pass for a later round', async () => {
  const ask: Step = async (call, next) => {
    if (call.name !== 'echo' || call.args.text !== 'ask first') return next();
    const answer = inputResponse(call.ctx.mcpReq.inputResponses, 'approve');
    if (answer.kind !== 'sampling')
      return {
        result: inputRequired({
          inputRequests: { approve: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'ok?' } }], maxTokens: 5 }) },
        }),
      };
    return next();
  };
  const rounds: boolean[] = [];
  const spy: Step = async (call, next) => {
    rounds.push(call.firstRound);
    return next();
  };
  const { client } = await samplingClient([spy, ask], 'modern');
  // capture the sealed state the server issues with its input-required answer
  let captured: string | undefined;
  const transport = (client as unknown as { transport: { onmessage: (m: unknown, ...rest: unknown[]) => void } }).transport;
  const deliver = transport.onmessage;
  transport.onmessage = (m: unknown, ...rest: unknown[]) => {
    const state = (m as { result?: { requestState?: unknown } }).result?.requestState;
    if (typeof state === 'string') captured = state;
    deliver.call(transport, m, ...rest);
  };
  expect(await client.callTool({ name: 'echo', arguments: { text: 'ask first' } })).toMatchObject({ content: [{ type: 'text', text: 'ask first' }] });
  expect(captured).toBeDefined();
  const replay = (args: Record<string, unknown>) =>
    (client as { request: (r: unknown, s: unknown) => Promise<unknown> })
      .request(
        { method: 'tools/call', params: { name: 'echo', arguments: args, requestState: captured, inputResponses: {} } },
        { '~standard': { version: 1, vendor: 't', validate: (value: unknown) => ({ value }) } },
      )
      .then(
        () => undefined,
        (e: { code: number; message: string }) => e,
      );
  const other = await replay({ text: 'something else' });
  expect(other).toMatchObject({ code: -32602 });
  expect(other?.message).toMatch(/belongs to another call/);
  // only the genuine rounds ran the steps: a first round and its continuation
  expect(rounds).toEqual([true, false]);
});

describe('a round state is used once (round-nonces.ts)', () => {
  const ask: Step = async (call, next) => {
    const answer = inputResponse(call.ctx.mcpReq.inputResponses, 'approve');
    if (answer.kind !== 'sampling')
      return {
        result: inputRequired({
          inputRequests: { approve: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'ok?' } }], maxTokens: 5 }) },
        }),
      };
    return next();
  };
  async function client(roundNonces: RoundNonces) {
    const rounds: boolean[] = [];
    const spy: Step = async (call, next) => {
      rounds.push(call.firstRound);
      return next();
    };
    const c = await linkedClient(createServer(config, [], {}, { extraTools: [echo], steps: [spy, ask], roundNonces }), 'modern', {
      capabilities: { sampling: {} },
      setup: (cl) =>
        (cl as { setRequestHandler: (m: string, h: unknown) => void }).setRequestHandler('sampling/createMessage', () => ({
          role: 'assistant' as const,
          model: 'm',
          content: { type: 'text' as const, text: 'yes' },
        })),
    });
    clients.push(c);
    return { c, rounds };
  }

  it('Redis unreachable: the round is refused with an isError naming the cause, and the call does not go on (fail closed)', async () => {
    const down: RoundNonces = {
      claim: () => Promise.reject(new SharedStateError('the shared store (Redis at redis://127.0.0.1:1/) is unavailable: connection refused')),
    };
    const { c, rounds } = await client(down);
    const result = (await c.callTool({ name: 'echo', arguments: { text: 'hi' } })) as { isError?: boolean; content: Array<{ text?: string }> };
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(
      /^Cannot continue this call of echo: the shared store \(Redis at redis:\/\/127\.0\.0\.1:1\/\) is unavailable: connection refused; its requestState was not used/,
    );
    expect(rounds).toEqual([true]);
  });

  it('when the in-process store is full, a round is refused rather than a used state forgotten', async () => {
    const { c, rounds } = await client(new LocalRoundNonces({ max: 1 }));
    expect(await c.callTool({ name: 'echo', arguments: { text: 'one' } })).toMatchObject({ content: [{ type: 'text', text: 'one' }] });
    const second = (await c.callTool({ name: 'echo', arguments: { text: 'two' } })) as { isError?: boolean; content: Array<{ text?: string }> };
    expect(second.isError).toBe(true);
    expect(second.content[0]?.text).toMatch(/too many input rounds at once; its requestState was not used, send it again shortly/);
    expect(rounds).toEqual([true, false, true]);
  });
});

import type { CallToolResult, InputRequiredResult, Server, ServerContext } from '@modelcontextprotocol/server';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Outcome, ToolCall } from '../../../templates/runtime/pipeline/pipeline.js';
import { refuse, runPipeline } from '../../../templates/runtime/pipeline/pipeline.js';
import { answerEnding } from '../../../templates/runtime/policy/observed.js';
import { telemetryStep, withSpan } from '../../../templates/runtime/policy/telemetry.js';

const SECRET = 'sk-live-telemetry-1234';
const ok: CallToolResult = { content: [{ type: 'text', text: 'done' }] };
const done: Outcome = { result: ok };
const asks = { resultType: 'input_required', inputRequests: {} } as unknown as InputRequiredResult;

function toolCall(over: Partial<ToolCall> = {}): ToolCall {
  return {
    name: 'create_pet',
    target: { kind: 'persist', name: 'create_pet' },
    args: { name: 'Rex-argument-value', password: SECRET },
    server: {} as Server,
    ctx: { sessionId: 'sess-9' } as unknown as ServerContext,
    era: 'legacy',
    identity: 'alice',
    callId: 'call-7',
    firstRound: true,
    state: {},
    signal: new AbortController().signal,
    gate: {} as ToolCall['gate'],
    ...over,
  };
}

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

describe('telemetryStep', () => {
  it('is a no-op without a registered SDK', async () => {
    trace.disable();
    await expect(runPipeline([telemetryStep('pets', '1.0.0')], async () => done, toolCall())).resolves.toBe(done);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  describe('with an in-memory SDK', () => {
    beforeAll(() => {
      trace.setGlobalTracerProvider(provider);
    });
    afterAll(async () => {
      trace.disable();
      await provider.shutdown();
    });
    beforeEach(() => exporter.reset());
    const step = telemetryStep('pets', '1.2.3');

    it('records a span per call with the audit attributes and nothing from the arguments', async () => {
      await runPipeline([step], async () => ({ result: ok, status: 201 }), toolCall());
      const [span] = exporter.getFinishedSpans();
      expect(span!.name).toBe('tools/call create_pet');
      expect(span!.instrumentationScope).toMatchObject({ name: 'mcpgen', version: '1.2.3' });
      expect(span!.attributes).toEqual({
        'mcp.server.name': 'pets',
        'mcp.tool.name': 'create_pet',
        'mcp.call.id': 'call-7',
        'mcp.call.first_round': true,
        'mcp.client.identity': 'alice',
        'mcp.protocol.era': 'legacy',
        'mcp.session.id': 'sess-9',
        'http.response.status_code': 201,
        'mcp.outcome': 'completed',
      });
      expect(span!.status.code).toBe(0);
      expect(span!.ended).toBe(true);
      const everything = JSON.stringify([span!.attributes, span!.events, span!.status, span!.name]);
      expect(everything).not.toContain(SECRET);
      expect(everything).not.toContain('Rex-argument-value');
    });

    it('carries the OAuth client of an access token beside the identity (its sub), never the token', async () => {
      const ctx = {
        sessionId: 'sess-9',
        http: {
          authInfo: {
            token: 'eyJ-the-access-token',
            clientId: 'alice',
            scopes: [],
            expiresAt: 1,
            extra: { iss: 'https://as.example.com', sub: 'alice', client_id: 'claude-connector' },
          },
        },
      };
      await runPipeline([step], async () => done, toolCall({ ctx } as unknown as Partial<ToolCall>));
      const [span] = exporter.getFinishedSpans();
      expect(span!.attributes).toMatchObject({ 'mcp.client.identity': 'alice', 'mcp.client.oauth_client_id': 'claude-connector' });
      expect(JSON.stringify(span!.attributes)).not.toContain('eyJ-the-access-token');
    });

    it('outcomes: failed (isError, thrown), denied, limited, input_required; modern calls have no session', async () => {
      const run = (dispatch: (call: ToolCall) => Promise<Outcome>, over: Partial<ToolCall> = {}) =>
        runPipeline([step], dispatch, toolCall(over)).catch(() => undefined);
      await run(async () => ({ result: { isError: true, content: [{ type: 'text', text: `bad ${SECRET}` }] }, status: 502 }));
      await run(() => Promise.reject(Object.assign(new Error(`boom ${SECRET}`), { code: -32603 })));
      await run(async () => ({ result: ok, refusal: { kind: 'denied', reason: 'rule 0' } }));
      await run(async () => ({ result: ok, refusal: { kind: 'limited', reason: 'perMinute' } }));
      await run(async () => ({ result: asks }), { era: 'modern', ctx: {} as ServerContext });
      await run(async () => done, { era: 'modern', ctx: {} as ServerContext, firstRound: false });
      // a refusal thrown as a JSON-RPC error (access control)
      await run(() => Promise.reject(refuse(Object.assign(new Error('not for you'), { code: -32602 }), { kind: 'denied', reason: 'rule 1' })));
      const spans = exporter.getFinishedSpans();
      expect(spans.map((s) => [s.attributes['mcp.outcome'], s.attributes['error.type'], s.status.code])).toEqual([
        ['failed', 'tool_error', 2],
        ['failed', '-32603', 2],
        ['denied', 'denied', 2],
        ['limited', 'limited', 2],
        ['input_required', undefined, 0],
        ['completed', undefined, 0],
        ['denied', 'denied', 2],
      ]);
      expect(spans[0]!.attributes['http.response.status_code']).toBe(502);
      expect(spans[4]!.attributes).not.toHaveProperty('mcp.session.id');
      // both rounds of the logical call carry its id
      expect(spans.slice(4, 6).map((s) => [s.attributes['mcp.call.id'], s.attributes['mcp.call.first_round']])).toEqual([
        ['call-7', true],
        ['call-7', false],
      ]);
      expect(JSON.stringify(spans.map((s) => [s.attributes, s.events, s.status]))).not.toContain(SECRET);
    });

    it('makes the span of a prompts/get, resources/read or preprocessors/run with the same builder (no call id, nothing from the arguments)', async () => {
      const tracing = { serverName: 'pets', version: '1.2.3' };
      const prompt = {
        method: 'prompts/get' as const,
        primitive: 'summarise',
        session: 'sess-9',
        client: 'alice',
        era: 'legacy' as const,
        arguments: { secret: SECRET },
      };
      const answer = { messages: [] };
      expect(
        await withSpan(
          tracing,
          () => prompt,
          async () => answer,
          answerEnding,
        ),
      ).toBe(answer);
      const failure = Object.assign(new Error(`no ${SECRET}`), { code: -32602 });
      const resource = { method: 'resources/read' as const, primitive: 'pets://7', session: null, client: 'bob', era: 'modern' as const };
      await expect(
        withSpan(
          tracing,
          () => resource,
          () => Promise.reject(failure),
          answerEnding,
        ),
      ).rejects.toBe(failure);
      const run = { method: 'preprocessors/run' as const, primitive: 'preprocessors', session: null, client: 'bob', era: 'modern' as const };
      await withSpan(
        tracing,
        () => run,
        async () => ({ resultType: 'input_required' }),
        answerEnding,
      );
      const [got, read, preprocessed] = exporter.getFinishedSpans();
      expect(got!.name).toBe('prompts/get summarise');
      expect(got!.attributes).toEqual({
        'mcp.server.name': 'pets',
        'mcp.prompt.name': 'summarise',
        'mcp.client.identity': 'alice',
        'mcp.protocol.era': 'legacy',
        'mcp.session.id': 'sess-9',
        'mcp.outcome': 'completed',
      });
      expect(read!.name).toBe('resources/read');
      expect(read!.attributes).toMatchObject({ 'mcp.resource.uri': 'pets://7', 'mcp.outcome': 'failed', 'error.type': '-32602' });
      expect(read!.status.code).toBe(2);
      expect(preprocessed!.name).toBe('preprocessors/run');
      expect(preprocessed!.attributes['mcp.outcome']).toBe('input_required');
      expect(JSON.stringify(exporter.getFinishedSpans().map((s) => [s.attributes, s.events, s.status]))).not.toContain(SECRET);
    });

    it('passes the result and the thrown error through unchanged', async () => {
      await expect(runPipeline([step], async () => done, toolCall())).resolves.toBe(done);
      const err = new Error('x');
      await expect(runPipeline([step], () => Promise.reject(err), toolCall())).rejects.toBe(err);
    });
  });
});

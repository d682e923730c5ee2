/**
 * OpenTelemetry spans for tool calls, through `@opentelemetry/api` only: without an SDK
 * registered by the process (e.g. `node --import ./otel-setup.js dist/main.js`) every call here
 * is a no-op.
 *
 * One span per round of a tool call, named `tools/call <tool>`: a call that asks the client for
 * input (sampling) has a span per round, all carrying the same `mcp.call.id` (a logical call can
 * span several requests, even several instances, so one span cannot). Attributes — the audit
 * event's, and nothing from the arguments or any secret:
 *
 *   mcp.server.name, mcp.tool.name, mcp.call.id, mcp.call.first_round, mcp.client.identity,
 *   mcp.client.oauth_client_id (an OAuth access token's client_id),
 *   mcp.protocol.era, mcp.session.id (legacy sessions only), http.response.status_code
 *   (the upstream API's), mcp.outcome (completed | failed | denied | limited | input_required),
 *   error.type (failed calls: `tool_error` for an isError result, else the JSON-RPC code or the
 *   error's class name).
 *
 * A failed, denied or limited call has the span status ERROR (no message: error texts may quote
 * the API's answer).
 *
 * This file is copied into every generated project that has `policy`.
 */

import type { Attributes, Tracer } from '@opentelemetry/api';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Outcome, Step } from '../pipeline/pipeline.js';
import { isInputRequired, refusalOf } from '../pipeline/pipeline.js';

/** Instrumentation scope of the spans. */
export const TRACER_NAME = 'mcpgen';

/** What a round ended with. */
export type SpanOutcome = 'completed' | 'failed' | 'denied' | 'limited' | 'input_required';

/** `error.type` of a thrown error: its JSON-RPC code, else its class name. */
function errorType(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number' || typeof code === 'string') return String(code);
  return err instanceof Error ? err.name : typeof err;
}

/**
 * The telemetry step: a span around the rest of the pipeline for each round of a tool call.
 * `serverName` is the `mcp.server.name` attribute; `version` the tracer's (the server's version).
 */
export function telemetryStep(serverName: string, version?: string): Step {
  return (call, next) => {
    // without an SDK registered there is nothing to record: the call goes on untouched (the API's
    // own no-op path still allocates a tracer, a span and a context per call)
    const provider = trace.getTracerProvider() as { getDelegateTracer?: (name: string, version?: string) => Tracer | undefined };
    const tracer = typeof provider.getDelegateTracer === 'function' ? provider.getDelegateTracer(TRACER_NAME, version) : trace.getTracer(TRACER_NAME, version);
    if (tracer === undefined) return next();
    const attributes: Attributes = {
      'mcp.server.name': serverName,
      'mcp.tool.name': call.name,
      'mcp.call.id': call.callId,
      'mcp.call.first_round': call.firstRound,
      'mcp.client.identity': call.identity,
      'mcp.protocol.era': call.era,
    };
    if (call.era === 'legacy' && call.ctx.sessionId !== undefined) attributes['mcp.session.id'] = call.ctx.sessionId;
    // an OAuth access token's client (mcp.client.identity is its sub)
    const oauthClient = call.ctx?.http?.authInfo?.extra?.client_id;
    if (typeof oauthClient === 'string') attributes['mcp.client.oauth_client_id'] = oauthClient;
    return tracer.startActiveSpan(`tools/call ${call.name}`, { kind: SpanKind.SERVER, attributes }, async (span) => {
      const finish = (outcome: SpanOutcome, type?: string, status?: number): void => {
        if (status !== undefined) span.setAttribute('http.response.status_code', status);
        span.setAttribute('mcp.outcome', outcome);
        if (type !== undefined) span.setAttribute('error.type', type);
        if (outcome === 'failed' || outcome === 'denied' || outcome === 'limited') span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      };
      let outcome: Outcome;
      try {
        outcome = await next();
      } catch (err) {
        const refusal = refusalOf(err);
        if (refusal) finish(refusal.kind, refusal.kind);
        else finish('failed', errorType(err));
        throw err;
      }
      const { result, refusal, status } = outcome;
      if (isInputRequired(result)) finish('input_required', undefined, status);
      else if (refusal) finish(refusal.kind, refusal.kind, status);
      else if (result.isError === true) finish('failed', 'tool_error', status);
      else finish('completed', undefined, status);
      return outcome;
    });
  };
}

/**
 * OpenTelemetry spans for tool calls and the other requests the audit trail records
 * (`prompts/get`, `resources/read`, `preprocessors/run`), through `@opentelemetry/api` only:
 * without an SDK registered by the process (e.g. `node --import ./otel-setup.js dist/main.js`)
 * every call here is a no-op. One span builder ({@link withSpan}) for every kind, made of the same
 * facts and ending as the request's audit event (observed.ts).
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
 * The other requests: `prompts/get <prompt>` (with `mcp.prompt.name`), `resources/read` (with
 * `mcp.resource.uri`) and `preprocessors/run`, with the server, client, era, session, outcome
 * (completed | failed | input_required) and error type as above.
 *
 * A failed, denied or limited request has the span status ERROR (no message: error texts may
 * quote the API's answer).
 *
 * This file is copied into every generated project that has `policy`.
 */

import type { Attributes, Tracer } from '@opentelemetry/api';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Step } from '../pipeline/pipeline.js';
import type { Ending, Observed } from './observed.js';
import { callEnding, observedCall, thrownEnding } from './observed.js';

/** Instrumentation scope of the spans. */
export const TRACER_NAME = 'mcpgen';

/** What a round ended with. */
export type SpanOutcome = Ending['outcome'];

/** Who makes the spans: the server (`mcp.server.name`) and its version (the tracer's). */
export type Tracing = { readonly serverName: string; readonly version?: string };

/** The tracer, or `undefined` without an SDK registered (the API's own no-op path still allocates a tracer, a span and a context per call). */
function tracerOf(tracing: Tracing): Tracer | undefined {
  const provider = trace.getTracerProvider() as { getDelegateTracer?: (name: string, version?: string) => Tracer | undefined };
  return typeof provider.getDelegateTracer === 'function'
    ? provider.getDelegateTracer(TRACER_NAME, tracing.version)
    : trace.getTracer(TRACER_NAME, tracing.version);
}

/** The span's name and its attributes at the start. */
function started(tracing: Tracing, request: Observed): { name: string; attributes: Attributes } {
  const attributes: Attributes = { 'mcp.server.name': tracing.serverName };
  let name: string = request.method;
  if (request.method === 'tools/call') {
    name = `tools/call ${request.primitive}`;
    attributes['mcp.tool.name'] = request.primitive;
    attributes['mcp.call.id'] = request.callId;
    attributes['mcp.call.first_round'] = request.firstRound;
  } else if (request.method === 'prompts/get' && request.primitive !== undefined) {
    name = `prompts/get ${request.primitive}`;
    attributes['mcp.prompt.name'] = request.primitive;
  } else if (request.method === 'resources/read' && request.primitive !== undefined) {
    attributes['mcp.resource.uri'] = request.primitive;
  }
  attributes['mcp.client.identity'] = request.client;
  attributes['mcp.protocol.era'] = request.era;
  if (request.session !== null) attributes['mcp.session.id'] = request.session;
  // an OAuth access token's client (mcp.client.identity is its sub)
  if (request.oauthClient !== undefined) attributes['mcp.client.oauth_client_id'] = request.oauthClient;
  return { name, attributes };
}

/**
 * Runs `serve` in a span of the request `describe` gives (the active span meanwhile), ended with
 * what `ending` says of its value, or with the refusal or failure it threw; without an SDK
 * registered, just runs it (nothing is described).
 */
export function withSpan<T>(tracing: Tracing, describe: () => Observed, serve: () => Promise<T>, ending: (value: T) => Ending): Promise<T> {
  const tracer = tracerOf(tracing);
  if (tracer === undefined) return serve();
  const { name, attributes } = started(tracing, describe());
  return tracer.startActiveSpan(name, { kind: SpanKind.SERVER, attributes }, async (span) => {
    const finish = ({ outcome, status, errorType }: Ending): void => {
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      span.setAttribute('mcp.outcome', outcome);
      if (errorType !== undefined) span.setAttribute('error.type', errorType);
      if (outcome === 'failed' || outcome === 'denied' || outcome === 'limited') span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    let value: T;
    try {
      value = await serve();
    } catch (err) {
      finish(thrownEnding(err));
      throw err;
    }
    finish(ending(value));
    return value;
  });
}

/**
 * The telemetry step: a span around the rest of the pipeline for each round of a tool call.
 * `serverName` is the `mcp.server.name` attribute; `version` the tracer's (the server's version).
 */
export function telemetryStep(serverName: string, version?: string): Step {
  const tracing: Tracing = { serverName, ...(version !== undefined ? { version } : {}) };
  return (call, next) =>
    withSpan(
      tracing,
      () => observedCall(call),
      () => next(),
      callEnding,
    );
}

/**
 * Completions (`completion/complete`) of prompt arguments and resource-template variables, from
 * values fixed at build time — the manifest's `complete` lists, or the `enum` of the OpenAPI
 * parameter an argument or variable is bound to — or computed by a handler (manifest
 * `complete: <file>#<export>`). A server declares the `completions` capability, and registers
 * this handler, only when something completes.
 *
 * Matching: the values that start with what the user typed, ignoring case, in the order given;
 * at most 100 (the spec's limit) with `total` (every match) and `hasMore`. A handler does its own
 * matching: `(value, { arguments, ctx })` gets what the user typed and the values of the other
 * arguments the client sent (`context.arguments`), and what it returns (strings; anything else is
 * left out) is sent in its order, cut to 100; a handler that throws gives no values (logged).
 * An argument without values completes to nothing. An unknown prompt or template, or one the
 * session may not use (the gate), is invalid params (-32602), as the spec's error table says.
 *
 * This file is copied verbatim into every generated project.
 */

import type { CompleteResult, Server, ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { log } from '../core/log.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import { OPEN_GATE } from '../core/primitive-gate.js';

/** The spec's limit of values per response. */
export const MAX_COMPLETION_VALUES = 100;

/** What a completion handler gets besides the typed value. */
export type CompletionContext = {
  /** Values of the other arguments (or variables) the client already filled in (`context.arguments` of the request). */
  readonly arguments: Readonly<Record<string, string>>;
  /** The SDK request context (`ctx.mcpReq.signal`, the HTTP request's auth info…). */
  readonly ctx: ServerContext;
};

/** Computes the values to offer for what the user typed (manifest `complete: <file>#<export>`). */
export type CompletionHandler = (value: string, context: CompletionContext) => readonly string[] | Promise<readonly string[]>;

/** The values of an argument or variable, or the handler computing them. */
export type CompletionSource = readonly string[] | CompletionHandler;

/** What completes: prompt name ⇒ argument ⇒ values, and URI template ⇒ variable ⇒ values. */
export type CompletionSources = {
  readonly prompts?: ReadonlyArray<{
    readonly name: string;
    readonly arguments?: ReadonlyArray<{ readonly name: string; readonly complete?: CompletionSource }>;
  }>;
  readonly templates?: ReadonlyArray<{ readonly uriTemplate: string; readonly complete?: Readonly<Record<string, CompletionSource>> }>;
};

/** The completion of `value` over `values` (module comment). */
export function complete(values: readonly string[], value: string): CompleteResult['completion'] {
  const prefix = value.toLowerCase();
  const matches = values.filter((v) => v.toLowerCase().startsWith(prefix));
  return { values: matches.slice(0, MAX_COMPLETION_VALUES), total: matches.length, hasMore: matches.length > MAX_COMPLETION_VALUES };
}

/** Registers `completion/complete` on `server`, which must declare the `completions` capability. */
export function installCompletions(server: Server, sources: CompletionSources, opts: { readonly gate?: PrimitiveGate } = {}): void {
  const gate = opts.gate ?? OPEN_GATE;
  const prompts = new Map((sources.prompts ?? []).map((p) => [p.name, new Map((p.arguments ?? []).map((a) => [a.name, a.complete ?? []]))]));
  const templates = new Map((sources.templates ?? []).map((t) => [t.uriTemplate, new Map(Object.entries(t.complete ?? {}))]));
  server.setRequestHandler('completion/complete', async (request, extra): Promise<CompleteResult> => {
    const { ref, argument } = request.params;
    let values: CompletionSource | undefined;
    if (ref.type === 'ref/prompt') {
      const args = prompts.get(ref.name);
      if (args === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${ref.name}`);
      gate.assertAllowed('prompts', ref.name, extra);
      values = args.get(argument.name);
    } else {
      const vars = templates.get(ref.uri);
      if (vars === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown resource template: ${ref.uri}`);
      gate.assertAllowed('resourceTemplates', ref.uri, extra);
      values = vars.get(argument.name);
    }
    if (typeof values === 'function')
      return { completion: await computed(values, argument.value, { arguments: { ...(request.params.context?.arguments ?? {}) }, ctx: extra }, argument.name) };
    return { completion: complete(values ?? [], argument.value) };
  });
}

/** A handler's completion: its strings in its order, at most 100; a failure gives none (logged). */
async function computed(handler: CompletionHandler, value: string, context: CompletionContext, name: string): Promise<CompleteResult['completion']> {
  let got: unknown;
  try {
    got = await handler(value, context);
  } catch (err) {
    log('warn', `completion of ${name} failed`, err);
    return { values: [] };
  }
  const all = Array.isArray(got) ? got.filter((v): v is string => typeof v === 'string') : [];
  return { values: all.slice(0, MAX_COMPLETION_VALUES), total: all.length, hasMore: all.length > MAX_COMPLETION_VALUES };
}

/**
 * Completions (`completion/complete`) of prompt arguments and resource-template variables, from
 * values fixed at build time: the manifest's `complete` lists, or the `enum` of the OpenAPI
 * parameter an argument or variable is bound to. A server declares the `completions` capability,
 * and registers this handler, only when something completes.
 *
 * Matching: the values that start with what the user typed, ignoring case, in the order given;
 * at most 100 (the spec's limit) with `total` (every match) and `hasMore`. An argument without
 * values completes to nothing. An unknown prompt or template, or one the session may not use
 * (the gate), is invalid params (-32602), as the spec's error table says.
 *
 * This file is copied verbatim into every generated project.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CompleteResult, Server } from '@modelcontextprotocol/server';
import { OPEN_GATE } from './primitives.js';
import type { PrimitiveGate } from './primitives.js';

/** The spec's limit of values per response. */
export const MAX_COMPLETION_VALUES = 100;

/** What completes: prompt name ⇒ argument ⇒ values, and URI template ⇒ variable ⇒ values. */
export type CompletionSources = {
  readonly prompts?: ReadonlyArray<{ readonly name: string; readonly arguments?: ReadonlyArray<{ readonly name: string; readonly complete?: readonly string[] }> }>;
  readonly templates?: ReadonlyArray<{ readonly uriTemplate: string; readonly complete?: Readonly<Record<string, readonly string[]>> }>;
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
  server.setRequestHandler('completion/complete', (request, extra): CompleteResult => {
    const { ref, argument } = request.params;
    let values: readonly string[] | undefined;
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
    return { completion: complete(values ?? [], argument.value) };
  });
}

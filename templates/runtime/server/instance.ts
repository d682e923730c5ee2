/**
 * The SDK `Server` instance of a generated server, and what it does around the handlers that
 * createServer (server.ts) and the install hook register on it: a `tools/call` request checked by
 * hand before the SDK's own check (a malformed call is one readable -32602 line, where the SDK's
 * answers with a dump of its schema issues), and, with a policy, the audit events of every other
 * request it serves (prompts/get, resources/read, preprocessors/run) and of legacy sessions. Both
 * go through the SDK's documented `_wrapHandler` hook.
 *
 * This file is copied verbatim into every generated project.
 */

import type { ReadResourceResult, ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { log } from '../core/log.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import type { Era, Step } from '../pipeline/pipeline.js';

/** An event of the policy layer's audit trail, besides tool calls (which its own step records). */
export type PolicyEvent = {
  readonly name: 'session.opened' | 'session.closed' | 'prompt.get' | 'resource.read' | 'preprocessor.run' | 'justification.persisted';
  readonly session?: string | null;
  readonly client: string;
  readonly era: Era;
  readonly primitive?: string;
  readonly arguments?: unknown;
  readonly outcome?: string;
  readonly durationMs?: number;
  readonly detail?: string;
};

/**
 * What the server needs of the policy layer (policy.ts's `createPolicy` makes one; this module does
 * not import it, so servers without a policy carry none of its code or dependencies).
 */
export interface PolicyLayer {
  /** Steps every tool call runs first (telemetry, audit, access control, limits). */
  readonly steps: readonly Step[];
  /** The access gate for requests of an instance whose default identity is `identity` (none: no access rules). */
  gate(identity: string): PrimitiveGate | undefined;
  /** Records an audit event; resolves once written, rejects when it cannot be (the request then fails). */
  record(event: PolicyEvent): Promise<void>;
}

/** `value`'s JSON type, for messages: `a string`, `an array`, `null`. */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A JSON-RPC invalid-params error (-32602). */
export function invalidParams(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

/**
 * The SDK's `Server`, with a `tools/call` request checked by hand before the SDK checks it: a
 * malformed call is one readable -32602 line (`name must be a string, not a number`), where the
 * SDK's own check answers with a dump of its schema issues. (`_wrapHandler` is the SDK's
 * documented hook for role-specific request checks.)
 */
export class ServerInstance extends Server {
  /** Answers `resources/read` of a kept result (`mcpgen://results/…`) before any other resource handler; `undefined` for other URIs. */
  readResult?: (uri: string, ctx: ServerContext) => ReadResourceResult | undefined;

  /** Told of each `prompts/get`, `resources/read` and `preprocessors/run` when it ends (the audit trail); its rejection fails the request. */
  observe?: (
    method: ObservedMethod,
    params: Record<string, unknown>,
    ctx: ServerContext,
    outcome: { readonly error?: unknown; readonly durationMs: number },
  ) => Promise<void>;

  protected override _wrapHandler(method: string, handler: Parameters<Server['_wrapHandler']>[1]): ReturnType<Server['_wrapHandler']> {
    const wrapped = super._wrapHandler(method, handler);
    if (method === 'tools/call') {
      return (request, ctx) => {
        checkToolCall(request.params);
        return wrapped(request, ctx);
      };
    }
    let inner = wrapped;
    if (method === 'resources/read') {
      // kept results first: they are this server's, whatever resources the manifest declares
      inner = async (request, ctx) => {
        const uri = (request.params as { uri?: unknown } | undefined)?.uri;
        const kept = typeof uri === 'string' && this.readResult ? this.readResult(uri, ctx) : undefined;
        return kept !== undefined ? kept : wrapped(request, ctx);
      };
    }
    if (!OBSERVED.has(method)) return inner;
    const wrappedOrKept = inner;
    return async (request, ctx) => {
      const observe = this.observe;
      if (!observe) return wrappedOrKept(request, ctx);
      const started = Date.now();
      const params = (request.params ?? {}) as Record<string, unknown>;
      let result;
      try {
        result = await wrappedOrKept(request, ctx);
      } catch (error) {
        await observe(method as ObservedMethod, params, ctx, { error, durationMs: Date.now() - started }).catch(() => undefined);
        throw error;
      }
      // an input round of a prompt or resource is not its end
      if ((result as { resultType?: unknown }).resultType !== 'input_required')
        await observe(method as ObservedMethod, params, ctx, { durationMs: Date.now() - started });
      return result;
    };
  }
}

/** The requests besides tool calls the audit trail records. */
type ObservedMethod = 'prompts/get' | 'resources/read' | 'preprocessors/run';
const OBSERVED: ReadonlySet<string> = new Set<ObservedMethod>(['prompts/get', 'resources/read', 'preprocessors/run']);
/** The audit event of each observed request, and the param naming its primitive. */
const OBSERVED_EVENT: Record<ObservedMethod, { readonly name: PolicyEvent['name']; readonly primitive: (params: Record<string, unknown>) => unknown }> = {
  'prompts/get': { name: 'prompt.get', primitive: (p) => p.name },
  'resources/read': { name: 'resource.read', primitive: (p) => p.uri },
  'preprocessors/run': { name: 'preprocessor.run', primitive: () => 'preprocessors' },
};

/** Throws -32602 with one readable line when `params` is not a well-formed `tools/call`. */
function checkToolCall(params: unknown): void {
  const invalid = (why: string) => invalidParams(`Invalid tools/call request: ${why}`);
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw invalid(`params must be an object, not ${jsonType(params)}`);
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string') throw invalid(name === undefined ? 'name is required' : `name must be a string, not ${jsonType(name)}`);
  callArguments(name, args);
}

/** The arguments of a call: `{}` when left out; anything but an object is invalid params. */
export function callArguments(name: string, args: unknown): Record<string, unknown> {
  if (args === undefined) return {};
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw invalidParams(`Invalid arguments for tool ${name}: arguments must be an object of argument values, not ${jsonType(args)}`);
  return args as Record<string, unknown>;
}

/** The legacy session of a request (`null` in the modern era, which has none, and over stdio). */
export function sessionOf(ctx: ServerContext | undefined, era: Era): string | null {
  return era === 'legacy' ? (ctx?.sessionId ?? null) : null;
}

/**
 * Records an instance's audit events besides tool calls: its legacy session opening and closing,
 * and each prompts/get, resources/read and preprocessors/run with its outcome.
 */
export function observe(server: ServerInstance, policy: PolicyLayer, era: Era, identity: string): void {
  const client = (ctx?: ServerContext) => ctx?.http?.authInfo?.clientId ?? identity;
  server.observe = (method, params, ctx, outcome) => {
    const event = OBSERVED_EVENT[method];
    const primitive = event.primitive(params);
    return policy.record({
      name: event.name,
      session: sessionOf(ctx, era),
      client: client(ctx),
      era,
      ...(typeof primitive === 'string' ? { primitive } : {}),
      ...(method === 'prompts/get' && params.arguments !== undefined ? { arguments: params.arguments } : {}),
      outcome: outcome.error === undefined ? 'ok' : 'error',
      durationMs: outcome.durationMs,
      ...(outcome.error !== undefined ? { detail: outcome.error instanceof Error ? outcome.error.message : String(outcome.error) } : {}),
    });
  };
  if (era !== 'legacy') return;
  // the modern era has no sessions: session events are legacy-only
  // the HTTP session id (none over stdio, where the connection is the session), kept for the close
  let session: string | null = null;
  let open = false;
  const opened = server.oninitialized;
  server.oninitialized = () => {
    opened?.();
    session = server.transport?.sessionId ?? null;
    open = true;
    policy
      .record({ name: 'session.opened', session, client: identity, era, outcome: 'opened' })
      .catch((err: unknown) => log('error', 'audit: cannot record session.opened', err));
  };
  const closed = server.onclose;
  server.onclose = () => {
    closed?.();
    if (!open) return;
    open = false;
    policy
      .record({ name: 'session.closed', session, client: identity, era, outcome: 'closed' })
      .catch((err: unknown) => log('error', 'audit: cannot record session.closed', err));
  };
}

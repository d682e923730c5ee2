/**
 * The SDK `Server` instance of a generated server, and what it does around the handlers that
 * createServer (server.ts) and the install hook register on it: a `tools/call` request checked by
 * hand before the SDK's own check (a malformed call is one readable -32602 line, where the SDK's
 * answers with a dump of its schema issues), and, with a policy, every other request it serves
 * (prompts/get, resources/read, preprocessors/run) through the policy layer's span and audit
 * trail, as a tool call's steps do, and the audit events of legacy sessions. Both go through the
 * SDK's documented `_wrapHandler` hook.
 *
 * This file is copied verbatim into every generated project.
 */

import type { ReadResourceResult, ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import type { Era } from '../core/era.js';
import { sessionOf } from '../core/era.js';
import { log } from '../core/log.js';
import type { ObservedMethod, ObservedRequest, PolicyLayer } from '../pipeline/policy-layer.js';

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

  /** Serves each `prompts/get`, `resources/read` and `preprocessors/run` through `serve` (the policy layer's span and audit trail); its rejection fails the request. */
  observe?: <T>(method: ObservedMethod, params: Record<string, unknown>, ctx: ServerContext, serve: () => Promise<T>) => Promise<T>;

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
    return (request, ctx) => {
      const observe = this.observe;
      if (!observe) return wrappedOrKept(request, ctx);
      return observe(method as ObservedMethod, (request.params ?? {}) as Record<string, unknown>, ctx, () => wrappedOrKept(request, ctx));
    };
  }
}

const OBSERVED: ReadonlySet<string> = new Set<ObservedMethod>(['prompts/get', 'resources/read', 'preprocessors/run']);
/** The primitive of each observed request: the param naming it. */
const OBSERVED_PRIMITIVE: Record<ObservedMethod, (params: Record<string, unknown>) => unknown> = {
  'prompts/get': (p) => p.name,
  'resources/read': (p) => p.uri,
  'preprocessors/run': () => 'preprocessors',
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

/**
 * Puts an instance's requests besides tool calls through the policy layer (each prompts/get,
 * resources/read and preprocessors/run: its span and audit event), and records its legacy session
 * opening and closing.
 */
export function observe(server: ServerInstance, policy: PolicyLayer, era: Era, identity: string): void {
  const client = (ctx?: ServerContext) => ctx?.http?.authInfo?.clientId ?? identity;
  server.observe = (method, params, ctx, serve) => {
    const primitive = OBSERVED_PRIMITIVE[method](params);
    const request: ObservedRequest = {
      method,
      session: sessionOf(ctx, era),
      client: client(ctx),
      era,
      ...(typeof primitive === 'string' ? { primitive } : {}),
      ...(method === 'prompts/get' && params.arguments !== undefined ? { arguments: params.arguments } : {}),
    };
    return policy.observe(request, serve);
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

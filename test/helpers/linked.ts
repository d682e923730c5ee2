/**
 * Connects a real MCP client to a v2 SDK server in memory, in either protocol era: the server side
 * is served by the SDK's own `serveStdio` entry over an in-memory transport (so the era is decided
 * exactly as over real stdio), the client is the v1 SDK `Client` (legacy era, `initialize`) or the
 * v2 `Client` pinned to 2026-07-28 (modern era, per-request `_meta` envelope).
 */

import { Client as ModernClient } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { ClientCapabilities as LegacyCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '@modelcontextprotocol/server';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

/** A protocol era: `legacy` (≤ 2025-11-25, initialize) or `modern` (2026-07-28). */
export type Era = 'legacy' | 'modern';

/** The eras, for `describe.each`. */
export const ERAS: readonly Era[] = ['legacy', 'modern'];

/** Makes a fresh server instance for a connection (or a probe) in the given era. */
export type Factory = (ctx: { era: Era }) => Server | Promise<Server>;

/** What both clients offer to tests (the calls tests make; both SDK clients have them). */
export type AnyClient = LegacyClient | ModernClient;

/** Request options both clients read on a call: how long to wait for the answer, and a signal that cancels the call. */
export type CallOptions = { timeout?: number; signal?: AbortSignal; onprogress?: (progress: unknown) => void };

/**
 * `tools/call` with request options passed where each client reads them: the v1 `Client` takes
 * `callTool(params, resultSchema, options)`, the v2 `Client` `callTool(params, options)` and
 * ignores a third argument (so `(params, undefined, { timeout })` on it waits the default 60 s).
 */
export function callToolWith(
  client: AnyClient,
  params: { name: string; arguments?: Record<string, unknown> },
  options: CallOptions,
): Promise<Awaited<ReturnType<ModernClient['callTool']>> | Awaited<ReturnType<LegacyClient['callTool']>>> {
  return client instanceof ModernClient ? client.callTool(params, options) : client.callTool(params, undefined, options);
}

/**
 * A connected client of `era` for the server `factory` makes. `capabilities` are the client's
 * (e.g. `{ sampling: {} }`); `setup` runs before connecting (to register request handlers).
 * Close the client when done: that also ends the server side.
 */
export async function linkedClient(
  factory: Factory,
  era: Era,
  options: { capabilities?: LegacyCapabilities; setup?: (client: AnyClient) => void } = {},
): Promise<AnyClient> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  serveStdio(factory as Parameters<typeof serveStdio>[0], { transport: serverSide });
  const capabilities = options.capabilities ?? {};
  const client: AnyClient =
    era === 'legacy'
      ? new LegacyClient({ name: 'test-legacy', version: '1.0.0' }, { capabilities })
      : new ModernClient({ name: 'test-modern', version: '1.0.0' }, {
          capabilities,
          versionNegotiation: { mode: { pin: '2026-07-28' } },
        } as ConstructorParameters<typeof ModernClient>[1]);
  options.setup?.(client);
  await (client as LegacyClient).connect(clientSide as unknown as Parameters<LegacyClient['connect']>[0]);
  return client;
}

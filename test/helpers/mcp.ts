/** Helpers for tests that drive MCP servers with the SDK `Client`. */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';

/** Awaits `p`, expects it to reject with an `McpError` (a JSON-RPC error), and returns that error. */
export async function rejection(p: Promise<unknown>): Promise<McpError> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

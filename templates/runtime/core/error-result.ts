/**
 * The `isError` tool result with one text block, as every refusal and failure of a tool call is
 * answered (limits, the reflection gate, nested API calls, operation and extra tools).
 */
import type { CallToolResult } from '@modelcontextprotocol/server';

/** An `isError` result whose one text block is `text`. */
export function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/** Error message of an unknown error value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The protocol era a server instance serves: `legacy` (≤ 2025-11-25: initialize, sessions) or
 * `modern` (2026-07-28: stateless, per request). One definition for every runtime module.
 */
import type { ServerContext } from '@modelcontextprotocol/server';

export type Era = 'legacy' | 'modern';

/** The legacy session of a request (`null` in the modern era, which has none, and over stdio). */
export function sessionOf(ctx: ServerContext | undefined, era: Era): string | null {
  return era === 'legacy' ? (ctx?.sessionId ?? null) : null;
}

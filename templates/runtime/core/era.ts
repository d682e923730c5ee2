/**
 * The protocol era a server instance serves: `legacy` (≤ 2025-11-25: initialize, sessions) or
 * `modern` (2026-07-28: stateless, per request). One definition for every runtime module.
 */
export type Era = 'legacy' | 'modern';

/**
 * The state a tool call carries across its input rounds (sampling in the 2026-07-28 era, and the
 * SDK's in-process rounds for legacy clients): sealed into the SDK's `requestState` with the
 * server's state key, and bound to the call it was issued for — the same tool, client identity and
 * arguments — so that it can continue that call and nothing else, and only once: each sealed state
 * carries a random nonce that the server claims when the state comes back (round-nonces.ts), so
 * the same later round cannot be sent again (each round issues a new state).
 *
 * This file is copied verbatim into every generated project.
 */
import { randomBytes } from 'node:crypto';
import { argumentsHash } from '../core/canonical-json.js';
import { sealState } from '../shared/state.js';

/** The state a call carries across its input rounds, inside the sealed (encrypted) requestState. */
export type RoundState = {
  readonly callId: string;
  /** Random, per sealed state: a state continues its call once (round-nonces.ts). */
  readonly nonce: string;
  /** What the state belongs to: the tool, the client and a hash of the arguments — a state offered with another call is refused. */
  readonly tool: string;
  readonly identity: string;
  readonly args: string;
  readonly state: Record<string, unknown>;
};

/** How long a sealed requestState stays valid: an input round answered later than this starts over. */
export const ROUND_STATE_TTL_MS = 15 * 60 * 1000;

/** The round state `ctx.mcpReq.requestState()` gave back (already verified), or none: a call's first round. */
export function roundOf(value: unknown): RoundState | undefined {
  return typeof value === 'object' && value !== null && typeof (value as RoundState).callId === 'string' ? (value as RoundState) : undefined;
}

/** Whether `round` carries a well-formed nonce (a state without one is not one this server issued). */
export function hasNonce(round: RoundState): boolean {
  return typeof round.nonce === 'string' && /^[A-Za-z0-9_-]{22}$/.test(round.nonce);
}

/** Whether `round` was issued for this call: the same tool, client and arguments. */
export function belongsTo(round: RoundState, tool: string, identity: string, args: Record<string, unknown>): boolean {
  return round.tool === tool && round.identity === identity && round.args === argumentsHash(args);
}

/** Seals the state of a call that asks for input, to come back with its next round. */
export function sealRound(
  key: Buffer,
  call: {
    readonly callId: string;
    readonly name: string;
    readonly identity: string;
    readonly args: Record<string, unknown>;
    readonly state: Record<string, unknown>;
  },
): string {
  const round: RoundState = {
    callId: call.callId,
    nonce: randomBytes(16).toString('base64url'),
    tool: call.name,
    identity: call.identity,
    args: argumentsHash(call.args),
    state: call.state,
  };
  return sealState(key, round, ROUND_STATE_TTL_MS);
}

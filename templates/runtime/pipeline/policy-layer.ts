/**
 * What the server and the pipeline need of the policy layer (policy/policy.ts's `createPolicy`
 * makes one; nothing here imports it, so servers without a policy carry none of its code or
 * dependencies): its steps, its access gate, its audit events, and the requests besides tool
 * calls it watches.
 */
import type { Era } from '../core/era.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import type { Step } from './pipeline.js';

/** The requests besides tool calls the audit trail records. */
export type ObservedMethod = 'prompts/get' | 'resources/read' | 'preprocessors/run';

/** An event of the policy layer's audit trail that is not a request's end: a legacy session opening or closing, a justification stored. */
export type PolicyEvent = {
  readonly name: 'session.opened' | 'session.closed' | 'justification.persisted';
  readonly session?: string | null;
  readonly client: string;
  readonly era: Era;
  readonly primitive?: string;
  readonly arguments?: unknown;
  readonly outcome?: string;
  readonly durationMs?: number;
  readonly detail?: string;
};

/** A request besides tool calls that the policy layer watches (the same facts a tool call's audit events and span are made of: policy/observed.ts). */
export type ObservedRequest = {
  readonly method: ObservedMethod;
  /** The prompt's name, the resource's URI, `preprocessors`. */
  readonly primitive?: string;
  /** A prompt's arguments. */
  readonly arguments?: unknown;
  readonly session: string | null;
  readonly client: string;
  readonly era: Era;
};

/**
 * The policy layer as the server and the pipeline see it.
 */
export interface PolicyLayer {
  /** Steps every tool call runs first (telemetry, audit, access control, limits). */
  readonly steps: readonly Step[];
  /** The access gate for requests of an instance whose default identity is `identity` (none: no access rules). */
  gate(identity: string): PrimitiveGate | undefined;
  /** Records an audit event; resolves once written, rejects when it cannot be (the request then fails). */
  record(event: PolicyEvent): Promise<void>;
  /**
   * Serves a request besides tool calls in its span and writes its audit event when it ends, as a
   * tool call's step does (policy.ts); rejects when the event cannot be written (the request then fails).
   */
  observe<T>(request: ObservedRequest, serve: () => Promise<T>): Promise<T>;
}

/**
 * The policy layer (manifest `policy`) put together: the pipeline steps every tool call
 * runs first, the gate that hides what a client may not use, the same span and audit event
 * around the other requests (prompts, resources, preprocessors: `observe`), and the audit trail
 * the server records its other events in (sessions, justifications).
 *
 *   telemetry (a span per call) → audit (invoked + one terminal event) → access → limits → …
 *
 * Telemetry and audit are outermost so that they see every refusal; access comes before limits
 * so that a call a client may not make counts against no limit. Spans and audit events of every
 * kind of request are made by one builder each (telemetry.ts `withSpan`, observed.ts).
 *
 * This file is copied verbatim into every generated project with a `policy`.
 */

import type { PrimitiveGate } from '../core/primitive-gate.js';
import type { Step } from '../pipeline/pipeline.js';
import { AccessControl, accessGate, accessStep } from './access.js';
import type { AuditInput } from './audit.js';
import { AuditLog } from './audit.js';
import type { AuditSink } from './audit-sinks.js';
import { auditFile, instanceFile } from './audit-sinks.js';
import { auditRequest, auditStep } from './audit-step.js';
import type { Counters } from './counters.js';
import { Limits, limitsStep } from './limits.js';
import type { Observed } from './observed.js';
import { answerEnding } from './observed.js';
import type { PolicyConfig } from './policy-types.js';
import type { Tracing } from './telemetry.js';
import { telemetryStep, withSpan } from './telemetry.js';

/** The policy layer of one server process, shared by all its instances. */
export type Policy = {
  /** Steps every tool call runs first (`createServer`'s `steps`), in order. */
  readonly steps: Step[];
  /** The access gate of an instance whose requests without a token are `defaultIdentity`'s; `undefined` without `policy.access`. */
  gate(defaultIdentity: string): PrimitiveGate | undefined;
  /** Records an event other than a request's end (sessions, justifications); resolves at once without `policy.audit`. Rejects when the line cannot be written and `onWriteError` is `fail`. */
  record(input: AuditInput): Promise<void>;
  /**
   * Serves a request besides tool calls (`prompts/get`, `resources/read`, `preprocessors/run`) in
   * its span and writes its audit event when it ends, with the builders of a tool call's. Rejects
   * when the event cannot be written and `onWriteError` is `fail`.
   */
  observe<T>(request: Observed, serve: () => Promise<T>): Promise<T>;
  /** The audit trail (`policy.audit`). */
  readonly audit?: AuditLog;
  /** Access control (`policy.access`). */
  readonly access?: AccessControl;
  /** The limits (`policy.limits`). */
  readonly limits?: Limits;
  /** Looks at the audit trail's end at start: a torn last line (a crash) is repaired at once with a `trail.repaired` event. */
  open(): Promise<void>;
  /** Writes pending audit lines (for at most `timeoutMs`; what is left is counted and logged) and closes the trail (graceful shutdown). */
  close(timeoutMs?: number): Promise<void>;
};

/** What {@link createPolicy} needs besides the configuration. */
export type PolicyOptions = {
  /** The server's name (spans). */
  readonly serverName: string;
  /** The server's version (spans). */
  readonly serverVersion?: string;
  /** Prefix of the server's environment variables (`<PREFIX>_AUDIT_FILE`). */
  readonly envPrefix: string;
  readonly env: NodeJS.ProcessEnv;
  /** Secret values (credentials) never to write to the audit trail, read at each event. */
  readonly secrets?: () => readonly string[];
  /** Counters of the limits instead of the in-process ones (a shared store). */
  readonly counters?: Counters;
  /** This instance's id when several share state (main.ts, `<PREFIX>_REDIS_URL`): in every audit line, and the audit file is this instance's own (audit.ts `instanceFile`). */
  readonly instance?: string;
  /** Where audit lines go instead of the file and stderr (tests, a shared store). */
  readonly auditSinks?: AuditSink[];
  /** Clock of the limits' rates and deadlines (tests). */
  readonly now?: () => number;
};

/** Builds the policy layer of `config`. Throws when the audit file's path is invalid. */
export function createPolicy(config: PolicyConfig, options: PolicyOptions): Policy {
  let audit: AuditLog | undefined;
  if (config.audit) {
    const configured = auditFile(config.audit, options.envPrefix, options.env);
    const file = configured !== undefined && options.instance !== undefined ? instanceFile(configured, options.instance) : configured;
    audit = new AuditLog(config.audit, {
      ...(file !== undefined ? { file } : {}),
      ...(options.instance !== undefined ? { instance: options.instance } : {}),
      ...(options.auditSinks ? { sinks: options.auditSinks } : {}),
      ...(options.secrets ? { secrets: options.secrets } : {}),
    });
  }
  const access = config.access ? new AccessControl(config.access) : undefined;
  const limits = config.limits ? new Limits(config.limits, options.counters) : undefined;

  const tracing: Tracing = { serverName: options.serverName, ...(options.serverVersion !== undefined ? { version: options.serverVersion } : {}) };
  const steps: Step[] = [telemetryStep(options.serverName, options.serverVersion)];
  if (audit) steps.push(auditStep(audit));
  if (access) steps.push(accessStep(access));
  if (limits) steps.push(limitsStep(limits, options.now));

  return {
    steps,
    gate: (defaultIdentity) => (access ? accessGate(access, defaultIdentity) : undefined),
    record: (input) => (audit ? audit.record(input) : Promise.resolve()),
    // the same order as a tool call's steps: the span around the audit event
    observe: (request, serve) => withSpan(tracing, () => request, audit ? () => auditRequest(audit, request, serve) : serve, answerEnding),
    open: () => (audit ? audit.open() : Promise.resolve()),
    close: async (timeoutMs) => void (audit ? await audit.close(timeoutMs) : undefined),
    ...(audit ? { audit } : {}),
    ...(access ? { access } : {}),
    ...(limits ? { limits } : {}),
  };
}

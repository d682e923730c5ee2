/**
 * The audit trail as OpenTelemetry log records, through `@opentelemetry/api-logs` only. Each
 * instance keeps its own hash-chained file (one ordered trail for N instances is the collector's
 * job); every line written there is also emitted here, as one log record whose body is the line
 * itself (its `prev` included, so the chain can be checked from the collected records too).
 * Without a LoggerProvider registered by the process (e.g. `node --import ./otel-setup.js
 * dist/server.js` with `@opentelemetry/sdk-logs`), nothing is done beyond one `enabled` check.
 *
 * Attributes, from the line: mcp.audit.event, mcp.audit.id, mcp.audit.instance, mcp.call.id,
 * mcp.call.parent_id, mcp.client.identity, mcp.primitive.name, mcp.outcome. A record that cannot
 * be emitted never fails the audit: the file is the trail, this is a copy.
 *
 * This file is copied into every generated project that has `policy`.
 */

import type { LogAttributes, Logger } from '@opentelemetry/api-logs';
import { logs, SeverityNumber } from '@opentelemetry/api-logs';

/** Instrumentation scope of the records. */
export const AUDIT_LOGGER_NAME = 'mcpgen.audit';

/** Line key ⇒ attribute name. */
const ATTRIBUTES: ReadonlyArray<readonly [string, string]> = [
  ['event', 'mcp.audit.event'],
  ['id', 'mcp.audit.id'],
  ['instance', 'mcp.audit.instance'],
  ['callId', 'mcp.call.id'],
  ['parentCallId', 'mcp.call.parent_id'],
  ['client', 'mcp.client.identity'],
  ['primitive', 'mcp.primitive.name'],
  ['outcome', 'mcp.outcome'],
];

/** An audit sink (audit.ts `AuditSink`) that emits each line as a log record. */
export class OtelLogSink {
  #logger: Logger | undefined;

  constructor(private readonly version?: string) {}

  append(line: string): Promise<void> {
    this.emit(line);
    return Promise.resolve();
  }

  appendLines(lines: readonly string[]): Promise<void> {
    for (const line of lines) this.emit(line);
    return Promise.resolve();
  }

  async close(): Promise<void> {}

  private emit(line: string): void {
    try {
      // a provider registered after start still gets the records (the API's logger is a proxy)
      const logger = (this.#logger ??= logs.getLogger(AUDIT_LOGGER_NAME, this.version));
      if (!logger.enabled({ severityNumber: SeverityNumber.INFO })) return;
      const event = JSON.parse(line) as Record<string, unknown>;
      const attributes: LogAttributes = {};
      for (const [key, name] of ATTRIBUTES) if (typeof event[key] === 'string') attributes[name] = event[key] as string;
      const time = typeof event.time === 'string' ? new Date(event.time) : new Date();
      logger.emit({
        eventName: `mcp.audit.${String(event.event)}`,
        timestamp: time,
        severityNumber: SeverityNumber.INFO,
        severityText: 'INFO',
        body: line,
        attributes,
      });
    } catch {
      // a copy for collectors: the file keeps the trail whatever happens here
    }
  }
}

/**
 * The audit trail as OpenTelemetry log records (runtime/policy/audit-otel.ts): with a LoggerProvider
 * registered, every line the instance's file holds is emitted once, its body the line itself, with
 * the event, instance and call as attributes; before one is registered nothing is emitted and the
 * file is written as ever.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { logs } from '@opentelemetry/api-logs';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AuditLog } from '../../../templates/runtime/policy/audit.js';
import { AUDIT_LOGGER_NAME } from '../../../templates/runtime/policy/audit-otel.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mcpgen-audit-otel-'));
});
afterAll(async () => {
  logs.disable();
  await rm(dir, { recursive: true, force: true });
});

const event = (name: string, callId: string) => ({
  name,
  client: 'alice',
  era: 'modern' as const,
  primitive: 'deletePet',
  callId,
  arguments: { petId: 7, token: 'hunter2' },
});

it('emits nothing before a LoggerProvider is registered, then each line of the file once, body and attributes from the line', async () => {
  const file = path.join(dir, 'audit.jsonl');
  const log = new AuditLog({ file, chain: true, redact: ['token'] }, { file, instance: 'i-1' });
  await log.record(event('tool.invoked', 'c-0'));

  const exporter = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
  logs.setGlobalLoggerProvider(provider);
  await log.record(event('tool.invoked', 'c-1'));
  await log.record({ ...event('tool.completed', 'c-1'), outcome: 'completed', durationMs: 3 });
  await log.close();
  await provider.forceFlush();

  const lines = (await readFile(file, 'utf8')).trim().split('\n');
  expect(lines).toHaveLength(3);
  const records = exporter.getFinishedLogRecords();
  // the first line was written before the provider: only the two after it are records
  expect(records.map((r) => r.body)).toEqual(lines.slice(1));
  expect(records.map((r) => r.instrumentationScope.name)).toEqual([AUDIT_LOGGER_NAME, AUDIT_LOGGER_NAME]);
  expect(records[1]!.eventName).toBe('mcp.audit.tool.completed');
  expect(records[1]!.attributes).toEqual({
    'mcp.audit.event': 'tool.completed',
    'mcp.audit.id': (JSON.parse(lines[2]!) as { id: string }).id,
    'mcp.audit.instance': 'i-1',
    'mcp.call.id': 'c-1',
    'mcp.client.identity': 'alice',
    'mcp.primitive.name': 'deletePet',
    'mcp.outcome': 'completed',
  });
  // the chain can be checked from the records: each body's prev is the hash of the one before
  expect(JSON.parse(records[0]!.body as string)).toHaveProperty('prev');
  // redaction is the line's: the records carry nothing the file does not
  for (const r of records) expect(JSON.stringify(r.body)).not.toContain('hunter2');
});

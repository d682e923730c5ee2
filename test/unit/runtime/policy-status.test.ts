/**
 * The upstream status of a call the limits' deadline ends: the API's headers arrived (207), its
 * body never does, and the limits step answers at the deadline — the audit line and the span
 * still carry the status. Through the server's real tools/call path (createServer, the real
 * policy and dispatch, the SDK client in both eras) against a backend on 127.0.0.1 that holds
 * the body until the test ends, so the deadline always wins, however slow the machine.
 */
import type { ServerResponse } from 'node:http';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { OperationTool, ServerConfig } from '../../../templates/runtime/core/types.js';
import { createPolicy } from '../../../templates/runtime/policy/policy.js';
import { createServer } from '../../../templates/runtime/server/server.js';
import type { Era } from '../../helpers/linked.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

setLogSink(() => undefined);
const held: ServerResponse[] = [];
const backend = createHttpServer((_req, res) => {
  // the headers go out at once; the body never comes
  res.writeHead(207, { 'content-type': 'application/json' });
  res.flushHeaders();
  held.push(res);
});
let base = '';
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
beforeAll(async () => {
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  for (const res of held) res.destroy();
  backend.close();
  trace.disable();
  await provider.shutdown();
});

const slow: OperationTool = { kind: 'operation', name: 'slow_report', inputSchema: { type: 'object' }, http: { method: 'GET', path: '/report', params: [] } };

describe.each(ERAS)('%s era', (era: Era) => {
  it('a call the deadline ends after the headers arrived is tool.limited with its httpStatus, and so is its span', async () => {
    exporter.reset();
    const lines: string[] = [];
    const policy = createPolicy(
      { audit: {}, limits: { default: { timeoutMs: 1500 }, tools: [] } },
      { serverName: 'held', envPrefix: 'HELD', env: {}, auditSinks: [{ append: async (l) => void lines.push(l), close: async () => undefined }] },
    );
    const config: ServerConfig = { name: 'held', version: '1', envPrefix: 'HELD', timeoutMs: 60_000, maxResponseBytes: 100_000, baseUrl: base };
    const client = await linkedClient(createServer(config, [slow], {}, { policy }), era);
    const result = (await client.callTool({ name: 'slow_report', arguments: {} })) as CallToolResult;
    await client.close();
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toContain('did not finish within 1500 ms');
    // (a legacy session's opening and closing are in the trail too)
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => String(e.event).startsWith('tool.'));
    expect(events.map((e) => e.event)).toEqual(['tool.invoked', 'tool.limited']);
    expect(events[1]).toMatchObject({ outcome: 'limited', httpStatus: 207, detail: 'timeoutMs 1500 (policy.limits.default)' });
    const [span] = exporter.getFinishedSpans();
    expect(span!.attributes).toMatchObject({ 'mcp.tool.name': 'slow_report', 'mcp.outcome': 'limited', 'http.response.status_code': 207 });
  });
});

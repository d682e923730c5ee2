/**
 * The tests' `callToolWith` passes request options where each SDK client reads them: the 1.x
 * client's `callTool(params, resultSchema, options)`, the 2.x client's `callTool(params, options)`
 * (which ignores a third argument, so `(params, undefined, { timeout })` waits the default 60 s).
 * A tool that never answers and a short timeout: the call rejects in both eras, whatever the
 * machine's speed (the tool answers never, not late).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { ServerConfig } from '../../../templates/runtime/core/types.js';
import { createServer } from '../../../templates/runtime/server/server.js';
import { defineTool } from '../../../templates/runtime/tools/extra-tools.js';
import type { AnyClient, Era } from '../../helpers/linked.js';
import { callToolWith, ERAS, linkedClient } from '../../helpers/linked.js';

setLogSink(() => undefined);
const config: ServerConfig = { name: 'hanging', version: '1.0.0', envPrefix: 'HANGING', timeoutMs: 5000, maxResponseBytes: 100_000 };
const HANG = defineTool<Record<string, never>, unknown>({
  kind: 'extra',
  name: 'hang',
  description: 'Never answers.',
  inputSchema: { type: 'object' },
  handler: () => new Promise<never>(() => undefined),
});
const clients: AnyClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe.each(ERAS)('callToolWith, %s era', (era: Era) => {
  it('applies the timeout: a call to a tool that never answers rejects', async () => {
    const client = await linkedClient(createServer(config, [], {}, { extraTools: [HANG] }), era);
    clients.push(client);
    const err = await callToolWith(client, { name: 'hang', arguments: {} }, { timeout: 200 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/timed out/i);
  }, 30_000);
});

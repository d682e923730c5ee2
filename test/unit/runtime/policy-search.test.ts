/**
 * Access rules inside search mode: what a client may not use is neither found by search_tools nor
 * described by describe_tool, and call_tool of it is refused by the same pipeline step as a direct
 * call (and audited). The policy is the real one (policy.ts), the clients real ones of both eras.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { ServerConfig } from '../../../templates/runtime/core/types.js';
import { createPolicy } from '../../../templates/runtime/policy/policy.js';
import type { PolicyConfig } from '../../../templates/runtime/policy/policy-types.js';
import { buildSearchIndex, createToolSearch } from '../../../templates/runtime/search/search.js';
import { createServer } from '../../../templates/runtime/server/server.js';
import { defineTool } from '../../../templates/runtime/tools/extra-tools.js';
import type { AnyClient, Era } from '../../helpers/linked.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

setLogSink(() => undefined);
const config: ServerConfig = { name: 'searchy', version: '1.0.0', envPrefix: 'SEARCHY', timeoutMs: 5000, maxResponseBytes: 100_000 };
const tool = (name: string, description: string) =>
  defineTool<Record<string, never>, unknown>({ kind: 'extra', name, description, inputSchema: { type: 'object' }, handler: () => `${name} ran` });
const TOOLS = [tool('pets_list', 'List the pets in the store'), tool('pets_delete', 'Delete a pet from the store')];
const INDEX = buildSearchIndex(TOOLS.map((t) => ({ name: t.name, description: t.description!, inputSchema: t.inputSchema })));
const POLICY: PolicyConfig = {
  access: {
    default: 'allow',
    rules: [
      { clients: ['local'], effect: 'deny', tools: ['pets_delete'], prompts: [], resources: [], resourceTemplates: [], source: 'policy.access.rules[0].deny' },
    ],
  },
};
const clients: AnyClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

type Result = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: unknown };

describe.each(ERAS)('search mode under access rules, %s era', (era: Era) => {
  it('hides a denied tool from search_tools and describe_tool, and refuses it through call_tool', async () => {
    const policy = createPolicy(POLICY, { serverName: 'searchy', envPrefix: 'SEARCHY', env: {}, auditSinks: [] });
    const client = await linkedClient(createServer(config, [], {}, { extraTools: TOOLS, search: createToolSearch(INDEX), policy }), era);
    clients.push(client);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['search_tools', 'describe_tool', 'call_tool']);
    const found = (await client.callTool({ name: 'search_tools', arguments: { query: 'pets store' } })) as Result;
    expect(JSON.stringify(found.structuredContent)).toContain('pets_list');
    expect(JSON.stringify(found.structuredContent)).not.toContain('pets_delete');
    const described = (await client.callTool({ name: 'describe_tool', arguments: { name: 'pets_delete' } })) as Result;
    expect(described.isError).toBe(true);
    const refused = await client.callTool({ name: 'call_tool', arguments: { name: 'pets_delete', arguments: {} } }).then(
      () => undefined,
      (e: { code: number; message: string }) => e,
    );
    expect(refused?.code).toBe(-32602);
    expect(refused?.message).toContain('Tool pets_delete is not available to client "local"');
    expect(await client.callTool({ name: 'call_tool', arguments: { name: 'pets_list', arguments: {} } })).toMatchObject({
      content: [{ type: 'text', text: 'pets_list ran' }],
    });
  });
});

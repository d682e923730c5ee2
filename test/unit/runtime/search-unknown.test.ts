/**
 * Search mode with a tool name the request cannot see (issue 32): `call_tool` answers the same
 * -32602 as a direct call, now with the closest names and a pointer to `search_tools`;
 * `describe_tool` says the same as an `isError` result. Names the request may not see are never
 * suggested. Real server, real clients of both eras.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { ServerConfig } from '../../../templates/runtime/core/types.js';
import { createPolicy } from '../../../templates/runtime/policy/policy.js';
import type { PolicyConfig } from '../../../templates/runtime/policy/policy-types.js';
import { buildSearchIndex, closestNames, createToolSearch, unknownToolMessage } from '../../../templates/runtime/search/search.js';
import { createServer } from '../../../templates/runtime/server/server.js';
import { defineTool } from '../../../templates/runtime/tools/extra-tools.js';
import type { AnyClient, Era } from '../../helpers/linked.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

setLogSink(() => undefined);
const config: ServerConfig = { name: 'searchy', version: '1.0.0', envPrefix: 'SEARCHY', timeoutMs: 5000, maxResponseBytes: 100_000 };
const tool = (name: string) =>
  defineTool<Record<string, never>, unknown>({
    kind: 'extra',
    name,
    description: `${name} does a thing`,
    inputSchema: { type: 'object' },
    handler: () => `${name} ran`,
  });
const TOOLS = ['pets_list', 'pets_get', 'pets_delete', 'orders_create', 'secret_pets_listing'].map(tool);
const INDEX = buildSearchIndex(TOOLS.map((t) => ({ name: t.name, description: t.description!, inputSchema: t.inputSchema })));
// `secret_pets_listing` exists but this client may not see it: it must never be suggested
const POLICY: PolicyConfig = {
  access: {
    default: 'allow',
    rules: [
      {
        clients: ['local'],
        effect: 'deny',
        tools: ['secret_pets_listing'],
        prompts: [],
        resources: [],
        resourceTemplates: [],
        source: 'policy.access.rules[0].deny',
      },
    ],
  },
};
const clients: AnyClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('closestNames', () => {
  const names = ['pets_list', 'pets_get', 'pets_delete', 'orders_create', 'listPets', 'issues_create'];
  it('finds typos, other separators and case, and contained names, closest first', () => {
    expect(closestNames('pets_lst', names)).toEqual(['pets_list', 'pets_get']);
    expect(closestNames('pets', names)).toEqual(['pets_get', 'listPets', 'pets_list']);
    expect(closestNames('PETS-LIST', names)).toEqual(['pets_list']);
    expect(closestNames('order_create', names)).toEqual(['orders_create']);
    expect(closestNames('delete', names)).toEqual(['pets_delete']);
    expect(closestNames('zzzzzzzz', names)).toEqual([]);
  });

  it('compares nothing for a name no typo makes (bounded work)', () => {
    expect(closestNames(`pets_list${'x'.repeat(200)}`, names)).toEqual([]);
    expect(unknownToolMessage('y'.repeat(500), names)).toBe(
      `Unknown tool: ${'y'.repeat(99)}…. Use search_tools to find the tools for a task, and describe_tool for a tool's arguments.`,
    );
  });
});

describe.each(ERAS)('call_tool and describe_tool with an unknown name, %s era', (era: Era) => {
  async function client(): Promise<AnyClient> {
    const policy = createPolicy(POLICY, { serverName: 'searchy', envPrefix: 'SEARCHY', env: {}, auditSinks: [] });
    const c = await linkedClient(createServer(config, [], {}, { extraTools: TOOLS, search: createToolSearch(INDEX), policy }), era);
    clients.push(c);
    return c;
  }

  it('call_tool: -32602 naming the closest visible tools and search_tools', async () => {
    const c = await client();
    const err = await c.callTool({ name: 'call_tool', arguments: { name: 'pets_lst', arguments: {} } }).then(
      () => undefined,
      (e: { code: number; message: string }) => e,
    );
    expect(err?.code).toBe(-32602);
    // the whole message: the 1.x client prefixes the wire message with `MCP error <code>: ` once
    expect(err?.message).toBe(
      `${era === 'legacy' ? 'MCP error -32602: ' : ''}Unknown tool: pets_lst. Did you mean "pets_list" or "pets_get"? Use search_tools to find the tools for a task, and describe_tool for a tool's arguments.`,
    );
    // the suggestion, followed, runs
    expect(await c.callTool({ name: 'call_tool', arguments: { name: 'pets_list', arguments: {} } })).toMatchObject({
      content: [{ type: 'text', text: 'pets_list ran' }],
    });
  });

  it('never suggests a tool the client may not see, and says where to look when nothing is close', async () => {
    const c = await client();
    const err = await c.callTool({ name: 'call_tool', arguments: { name: 'secret_pets_listin', arguments: {} } }).catch((e: Error) => e.message);
    expect(err).not.toContain('secret_pets_listing"');
    const far = await c.callTool({ name: 'call_tool', arguments: { name: 'frobnicate', arguments: {} } }).catch((e: Error) => e.message);
    expect(far).toContain('Unknown tool: frobnicate. Use search_tools to find the tools for a task');
  });

  it('describe_tool: an isError result with the same did-you-mean', async () => {
    const c = await client();
    const r = (await c.callTool({ name: 'describe_tool', arguments: { name: 'orders_creat' } })) as { isError?: boolean; content: Array<{ text?: string }> };
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toBe(
      'Unknown tool: orders_creat. Did you mean "orders_create"? Use search_tools to find the tools for a task, and describe_tool for a tool\'s arguments.',
    );
  });
});

/**
 * `ctx.api` (runtime api-client.ts): one method per operation in `uses`, keyed by operationId;
 * every outcome a result, never a throw — data from structuredContent, else the JSON body, else
 * the text; an isError result's text as `error`; a policy step's refusal (a throw) as `error`.
 */
import { describe, expect, it } from 'vitest';
import type { OperationTool } from '../../../templates/runtime/core/types.js';
import type { NestedRunner } from '../../../templates/runtime/tools/api-client.js';
import { apiClient } from '../../../templates/runtime/tools/api-client.js';

const op = (name: string): OperationTool =>
  ({ kind: 'operation', name, inputSchema: { type: 'object' }, http: { method: 'GET', path: `/${name}`, params: [] } }) as unknown as OperationTool;

describe('apiClient', () => {
  it('has a method per operation in uses, by operationId, each running its own operation with the arguments', async () => {
    const seen: Array<[string, unknown]> = [];
    const run: NestedRunner = async (tool, args) => {
      seen.push([tool.name, args]);
      return { result: { content: [{ type: 'text', text: '{"n":1}' }] }, status: 200 };
    };
    const api = apiClient({ 'pets.list': op('list_pets'), getPet: op('getPet') }, run);
    expect(Object.keys(api)).toEqual(['pets.list', 'getPet']);
    expect(Object.isFrozen(api)).toBe(true);
    expect(await api['pets.list']!({ limit: 2 } as never)).toMatchObject({ ok: true, status: 200, data: { n: 1 } });
    await api.getPet!(undefined as never);
    expect(seen).toEqual([
      ['list_pets', { limit: 2 }],
      ['getPet', {}],
    ]);
  });

  it('data: structuredContent first, else the parsed JSON text, else the text', async () => {
    const answer =
      (result: object): NestedRunner =>
      async () => ({ result: result as never });
    const call = (result: object) => apiClient({ x: op('x') }, answer(result)).x!({} as never);
    expect(await call({ content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { b: 2 } })).toMatchObject({ ok: true, data: { b: 2 } });
    expect(await call({ content: [{ type: 'text', text: '[1,2]' }] })).toMatchObject({ ok: true, data: [1, 2] });
    // a result shaped to fit carries its note after the JSON: the data is still the JSON
    expect(await call({ content: [{ type: 'text', text: '{"items":[1]}\n[results: 1 of 40 items shown; call again with page=2]' }] })).toMatchObject({
      ok: true,
      data: { items: [1] },
    });
    expect(await call({ content: [{ type: 'text', text: 'HTTP 204 No Content' }] })).toMatchObject({ ok: true, data: 'HTTP 204 No Content' });
  });

  it('an isError result and a refusal are errors, never throws', async () => {
    const failed = apiClient({ x: op('x') }, async () => ({
      result: { isError: true, content: [{ type: 'text', text: 'HTTP 404 Not Found\n{"message":"no pet"}' }] },
      status: 404,
    }));
    expect(await failed.x!({} as never)).toMatchObject({ ok: false, status: 404, error: 'HTTP 404 Not Found\n{"message":"no pet"}' });
    const refused = apiClient({ x: op('x') }, async () => {
      throw new Error('audit trail cannot be written');
    });
    const r = await refused.x!({} as never);
    expect(r).toMatchObject({ ok: false, error: 'x was refused: audit trail cannot be written' });
    expect(r.result.isError).toBe(true);
  });
});

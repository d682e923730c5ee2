/**
 * A 2xx is a success: a generated server against a local backend whose answers drift from the
 * spec (extra properties, null in a non-null field, a missing required field, a number sent as a
 * string, an array, a 204, a text body). The SDK `Client` lists the tools first, so it checks
 * every `structuredContent` against the published output schema and throws on a mismatch; no
 * call may be `isError` and none may throw. With `outputSchemas: strict` the old behaviour
 * (a mismatch is an error carrying the body) is kept.
 */
import http from 'node:http';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { buildServer, type Connected, connect } from '../helpers/generated-server.js';
import { portabilityProblems } from '../helpers/portability.js';

let work: string;

const PET = `{ type: object, required: [id, name], additionalProperties: false, properties: { id: { type: integer, format: int64 }, name: { type: string, pattern: '^[A-Za-z]+$' }, status: { type: string, enum: [available, sold] }, owner: { $ref: '#/components/schemas/Owner' } } }`;
const SPEC = `openapi: 3.0.3
info: { title: drift, version: '1' }
paths:
  /pets/{id}:
    get:
      operationId: getPet
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { '200': { description: ok, content: { application/json: { schema: { $ref: '#/components/schemas/Pet' } } } } }
    delete:
      operationId: deletePet
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { '204': { description: gone } }
  /pets:
    get:
      operationId: listPets
      responses: { '200': { description: ok, content: { application/json: { schema: { type: array, items: { $ref: '#/components/schemas/Pet' } } } } } }
  /pets/{id}/card:
    get:
      operationId: petCard
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { '200': { description: ok, content: { text/plain: { schema: { type: string } } } } }
  /strict/{id}:
    get:
      operationId: getPetStrict
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { '200': { description: ok, content: { application/json: { schema: { $ref: '#/components/schemas/Pet' } } } } }
components:
  schemas:
    Pet: ${PET}
    Owner: { type: object, required: [name], properties: { name: { type: string }, email: { type: string, format: email } } }
`;

const MANIFEST = `name: drift
openapi: ./openapi.yaml
output: ./server
baseUrl: https://api.example.com
# drift is checked on the body as sent: compaction (on by default) is results-budget.test.ts's
results: { compact: false }
overrides:
  getPetStrict: { outputSchemas: strict }
`;

/** What the backend answers per path: bodies that drift from the spec in every common way. */
const ANSWERS: Record<string, { status: number; type?: string; body: string }> = {
  '/pets/extra': { status: 200, type: 'application/json', body: '{"id":1,"name":"Rex","color":"brown","owner":{"name":"Ann","age":40}}' },
  '/pets/null': { status: 200, type: 'application/json', body: '{"id":2,"name":null,"status":null,"owner":null}' },
  '/pets/missing': { status: 200, type: 'application/json', body: '{"status":"sold"}' },
  '/pets/string-number': { status: 200, type: 'application/json', body: '{"id":"3","name":"Tom","status":"lost","owner":{"email":"not an email"}}' },
  '/pets/array': { status: 200, type: 'application/json', body: '[{"id":4,"name":"A"}]' },
  '/pets': { status: 200, type: 'application/json', body: '[{"id":5,"name":"B"},{"id":"6","name":null,"extra":true},null]' },
  '/pets/gone': { status: 204, body: '' },
  '/pets/gone/card': { status: 200, type: 'text/plain', body: 'Rex, a dog.' },
  '/strict/bad': { status: 200, type: 'application/json', body: '{"id":"seven"}' },
  '/strict/good': { status: 200, type: 'application/json', body: '{"id":7,"name":"Rex"}' },
};

let backend: http.Server;
let conn: Connected;
let client: Client;

beforeAll(async () => {
  const built = await buildServer('results', SPEC, MANIFEST);
  work = built.dir;
  backend = http.createServer((req, res) => {
    const answer = ANSWERS[req.url!.replace(/^\/v1/, '')] ?? { status: 404, type: 'text/plain', body: 'no such thing' };
    res.writeHead(answer.status, answer.type ? { 'content-type': answer.type } : {});
    res.end(answer.body);
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(backend.address() as { port: number }).port}/v1`;
  conn = await connect(built.server, { DRIFT_BASE_URL: url }, 'results-e2e');
  client = conn.client;
}, 300_000);

afterAll(async () => {
  await conn?.close();
  backend?.close();
});

const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('a 2xx is never an error because of its shape', () => {
  it('publishes portable output schemas: the object itself for object results, {status, data} for the rest', async () => {
    const { tools } = await client.listTools();
    const out = Object.fromEntries(tools.map((t) => [t.name, t.outputSchema]));
    for (const t of tools) expect(portabilityProblems(t.outputSchema), t.name).toEqual([]);
    expect(out.getPet).toMatchObject({ type: 'object', properties: { id: {}, name: {}, status: {}, owner: {} } });
    expect(out.getPet!.required).toBeUndefined();
    expect(JSON.stringify(out.getPet)).not.toMatch(/"(format|pattern|enum|required)"/);
    expect(out.listPets).toMatchObject({ type: 'object', properties: { status: { type: 'integer' }, data: {} } });
    expect(out.deletePet).toEqual({ type: 'object', properties: { status: { type: 'integer' } } });
    expect(out.petCard).toEqual({ type: 'object', properties: { status: { type: 'integer' } } });
    // strict: the spec's schema as written
    expect(out.getPetStrict).toMatchObject({ required: ['id', 'name'], additionalProperties: false });
  });

  it('the bytes the build reports are the bytes the client receives', async () => {
    const res = await compile({ manifestPath: path.join(work, 'mcpgen.yaml'), cwd: work, emit: false });
    const { tools } = await client.listTools();
    expect(Buffer.byteLength(JSON.stringify(tools))).toBe(res.ir!.surface!.listBytes);
    expect(res.ir!.surface!.tools.map((t) => t.name)).toEqual(tools.map((t) => t.name));
  });

  it.each([
    ['extra properties', 'extra', { id: 1, name: 'Rex', color: 'brown', owner: { name: 'Ann', age: 40 } }],
    ['null in non-null fields', 'null', { id: 2, name: null, status: null, owner: null }],
    ['a missing required field', 'missing', { status: 'sold' }],
    // the text keeps what was sent; structuredContent has null where the type does not fit
    ['a number sent as a string', 'string-number', { id: null, name: 'Tom', status: 'lost', owner: { email: 'not an email' } }],
    ['an array where an object was described', 'array', {}],
  ])('%s: a success the client accepts', async (_label, id, structured) => {
    const result = (await client.callTool({ name: 'getPet', arguments: { id } })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(text(result)).toBe(ANSWERS[`/pets/${id}`]!.body);
    expect(result.structuredContent).toEqual(structured);
  });

  it('an array result is {status, data}', async () => {
    const result = (await client.callTool({ name: 'listPets', arguments: {} })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ status: 200, data: [{ id: 5, name: 'B' }, { id: null, name: null, extra: true }, null] });
  });

  it('a 204 and a text body are {status} with the content as before', async () => {
    const gone = (await client.callTool({ name: 'deletePet', arguments: { id: 'gone' } })) as CallToolResult;
    expect(gone).toEqual({ content: [{ type: 'text', text: 'HTTP 204 No Content' }], structuredContent: { status: 204 } });
    const card = (await client.callTool({ name: 'petCard', arguments: { id: 'gone' } })) as CallToolResult;
    expect(card).toEqual({ content: [{ type: 'text', text: 'Rex, a dog.' }], structuredContent: { status: 200 } });
  });

  it('a non-2xx is still an error', async () => {
    const result = (await client.callTool({ name: 'getPet', arguments: { id: 'nope' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('HTTP 404 Not Found\nno such thing');
  });

  it('outputSchemas: strict keeps reporting a mismatch as an error with the body, and passes a matching one', async () => {
    const bad = (await client.callTool({ name: 'getPetStrict', arguments: { id: 'bad' } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(
      /^\{"id":"seven"\}\n\n\[note: the response does not match the tool's output schema:\n- name: is required\n- id: must be integer\]$/,
    );
    const good = (await client.callTool({ name: 'getPetStrict', arguments: { id: 'good' } })) as CallToolResult;
    expect(good).toEqual({ content: [{ type: 'text', text: '{"id":7,"name":"Rex"}' }], structuredContent: { id: 7, name: 'Rex' } });
  });
});

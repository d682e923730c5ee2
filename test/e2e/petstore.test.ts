/**
 * The committed Petstore example, end to end: `npm install && npm run build` in a copy of the
 * generated project, started over stdio and driven by the SDK Client against the bundled local
 * backend on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../../examples/petstore/backend.mjs';
import { compile } from '../../src/compile.js';
import { copyToTemp, installAndBuild, ROOT } from '../helpers/project.js';

type Backend = Awaited<ReturnType<typeof startBackend>>;
type Text = { type: 'text'; text: string };

let dir: string;
let backend: Backend;
let client: Client;
let stderr = '';

beforeAll(async () => {
  dir = copyToTemp(path.join(ROOT, 'examples/petstore/server'), 'mcpgen-petstore-');
  await installAndBuild(dir);
  backend = await startBackend({ port: 0 });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(dir, 'dist/server.js')],
    env: { PATH: process.env.PATH ?? '', PETSTORE_BASE_URL: backend.url },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  backend?.server.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = (r: { content?: unknown }) => ((r.content as Text[] | undefined) ?? []).map((c) => c.text).join('\n');

describe('generated Petstore server', () => {
  it('lists every operation as a tool with a legal name and a valid, portable input schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['listPets', 'createPet', 'getPetById', 'updatePet', 'deletePet', 'store_inventory']);
    const ajv = new Ajv2020({ strict: false });
    for (const t of tools) {
      expect(t.name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
      expect(t.inputSchema.type).toBe('object');
      expect(() => ajv.compile(t.inputSchema)).not.toThrow();
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.getPetById!.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.deletePet!.annotations).toMatchObject({ destructiveHint: true });
    expect(byName.updatePet!.annotations).toMatchObject({ idempotentHint: true });
    expect(byName.store_inventory!.description).toBe('Counts of pets by status (available, pending, sold).');
    expect(byName.getPetById!.inputSchema.required).toEqual(['petId']);
    // the recursive Category schema is published as $defs + $ref, not expanded forever
    expect(JSON.stringify(byName.createPet!.inputSchema)).toContain('"$ref":"#/$defs/Category"');
    expect(byName.getPetById!.outputSchema?.type).toBe('object');
    // what the server publishes is exactly the compiler's IR (shared $defs reassembled at run time)
    const { ir } = await compile({ manifestPath: path.join(ROOT, 'examples/petstore/mcpgen.yaml'), cwd: ROOT, emit: false });
    for (const t of ir!.tools) {
      expect(byName[t.name]!.inputSchema, t.name).toEqual(t.inputSchema);
      expect(byName[t.name]!.outputSchema, t.name).toEqual(t.outputSchema);
    }
  });

  it('sends a GET with path and query parameters and returns structured content', async () => {
    const before = backend.requests.length;
    const res = await client.callTool({ name: 'listPets', arguments: { limit: 5, status: 'available', tags: ['dog', 'cat'] } });
    expect(res.isError).toBeFalsy();
    const req = backend.requests[before]!;
    expect(req.method).toBe('GET');
    expect(req.path).toBe('/pets');
    expect(req.query).toBe('?limit=5&status=available&tags=dog&tags=cat');
    expect(res.structuredContent).toEqual({ items: [{ id: 1, name: 'Rex', tag: 'dog', status: 'available' }], total: 1 });
    expect(JSON.parse(text(res))).toEqual(res.structuredContent);

    const one = await client.callTool({ name: 'getPetById', arguments: { petId: 3 } });
    expect(backend.requests.at(-1)).toMatchObject({ method: 'GET', path: '/pets/3' });
    expect((one.structuredContent as { category?: unknown }).category).toEqual({ name: 'fish', parent: { name: 'animals' } });
  });

  it('sends a POST with a JSON body and a header parameter', async () => {
    const before = backend.requests.length;
    const res = await client.callTool({ name: 'createPet', arguments: { body: { name: 'Fido', tag: 'dog' }, 'X-Request-Id': 'req-42' } });
    expect(res.isError).toBeFalsy();
    const req = backend.requests[before]!;
    expect(req).toMatchObject({ method: 'POST', path: '/pets' });
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    expect(req.headers['x-request-id']).toBe('req-42');
    expect(JSON.parse(req.body)).toEqual({ name: 'Fido', tag: 'dog' });
    expect(res.structuredContent).toMatchObject({ name: 'Fido', tag: 'dog', id: expect.any(Number) });
  });

  it('refuses invalid arguments without calling the backend, naming each bad field', async () => {
    const before = backend.requests.length;
    const res = await client.callTool({ name: 'getPetById', arguments: { petId: 'abc' } });
    expect(res.isError).toBe(true);
    expect(text(res)).toMatch(/petId/);
    const res2 = await client.callTool({ name: 'createPet', arguments: { body: { tag: 7 }, extra: true } });
    expect(res2.isError).toBe(true);
    expect(text(res2)).toMatch(/name/);
    expect(text(res2)).toMatch(/tag/);
    expect(text(res2)).toMatch(/extra/);
    expect(backend.requests.length).toBe(before);
  });

  it('turns a 404 into an isError result carrying the status and body', async () => {
    const res = await client.callTool({ name: 'getPetById', arguments: { petId: 999 } });
    expect(res.isError).toBe(true);
    expect(text(res)).toMatch(/404/);
    expect(text(res)).toMatch(/pet 999 not found/);
  });

  it('answers an unknown tool with a JSON-RPC invalid-params error', async () => {
    const err = await client.callTool({ name: 'nope', arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
  });

  it('writes nothing but JSON-RPC to stdout', async () => {
    const child = spawn(process.execPath, [path.join(dir, 'dist/server.js')], {
      env: { PATH: process.env.PATH ?? '', PETSTORE_BASE_URL: backend.url },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const send = (msg: unknown) => child.stdin.write(JSON.stringify(msg) + '\n');
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'getPetById', arguments: { petId: 1 } } });
    await new Promise<void>((resolve) => {
      const check = () => (out.split('\n').filter(Boolean).length >= 2 ? resolve() : setTimeout(check, 20));
      check();
    });
    child.stdin.end();
    await new Promise((r) => child.once('exit', r));
    const lines = out.split('\n').filter(Boolean);
    expect(lines.length).toBe(2);
    for (const l of lines) expect(JSON.parse(l)).toMatchObject({ jsonrpc: '2.0' });
    // the start-up log went to stderr (captured by the client above), not to stdout
    expect(stderr).toMatch(/petstore/);
  });
});

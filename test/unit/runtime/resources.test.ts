import type { ReadResourceResult, Resource, ResourceTemplateType } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, Server } from '@modelcontextprotocol/server';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { PrimitiveGate } from '../../../templates/runtime/core/primitive-gate.js';
import type { ResourceDefinition, ResourceTemplateDefinition } from '../../../templates/runtime/primitives/resources.js';
import { installResources, RESOURCE_NOT_FOUND, toContents } from '../../../templates/runtime/primitives/resources.js';
import type { Era } from '../../helpers/linked.js';
import { ERAS, linkedClient } from '../../helpers/linked.js';

const seenVariables: unknown[] = [];
const resources: ResourceDefinition[] = [
  { uri: 'docs://readme', name: 'readme', title: 'Read me', description: 'The readme', mimeType: 'text/markdown', text: '# Hello' },
  { uri: 'docs://logo', name: 'logo', mimeType: 'image/png', blob: 'iVBORw0KGgo=' },
  { uri: 'app://clock', name: 'clock', handler: (uri) => `now at ${uri.protocol}` },
  { uri: 'app://bytes', name: 'bytes', mimeType: 'application/octet-stream', handler: async () => new Uint8Array([1, 2, 3]) },
  { uri: 'app://json', name: 'json', handler: async () => ({ text: '{"a":1}', mimeType: 'application/json' }) },
  { uri: 'app://boom', name: 'boom', handler: async () => Promise.reject(new Error('disk on fire')) },
  { uri: 'app://empty', name: 'empty' },
  { uri: 'app://notes/special', name: 'special', text: 'exact match wins' },
];
const templates: ResourceTemplateDefinition[] = [
  {
    uriTemplate: 'app://notes/{id}',
    name: 'note',
    description: 'A note',
    mimeType: 'text/plain',
    handler: (uri, variables) => {
      seenVariables.push(variables);
      return `note ${String(variables.id)} (${uri.href})`;
    },
  },
  { uriTemplate: 'app://files/{+path}', name: 'file', handler: (_uri, variables) => ({ blob: Buffer.from(String(variables.path)).toString('base64') }) },
  { uriTemplate: 'app://users/{id}{?fields}', name: 'user', handler: (_uri, v) => JSON.stringify(v) },
];

const logs: string[] = [];
beforeAll(() => {
  setLogSink((line) => logs.push(line));
});
/** What the tests call on either client. */
type ResourceClient = {
  listResources(params?: object): Promise<{ resources: Resource[] }>;
  listResourceTemplates(params?: object): Promise<{ resourceTemplates: ResourceTemplateType[] }>;
  readResource(params: { uri: string }): Promise<ReadResourceResult>;
  close(): Promise<void>;
};

/** Awaits `p`, expects a JSON-RPC error (v1 `McpError` or v2 `ProtocolError`) and returns it. */
async function rejection(p: Promise<unknown>): Promise<{ code: number; message: string; data?: unknown }> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(typeof (err as { code?: unknown } | undefined)?.code).toBe('number');
  return err as { code: number; message: string; data?: unknown };
}

const open: ResourceClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  seenVariables.length = 0;
});

async function connect(era: Era, gate?: PrimitiveGate): Promise<ResourceClient> {
  const client = (await linkedClient(() => {
    const server = new Server({ name: 'r', version: '1' }, { capabilities: { resources: { listChanged: true } } });
    installResources(server, { resources, templates }, gate ? { gate } : {});
    return server;
  }, era)) as unknown as ResourceClient;
  open.push(client);
  return client;
}

describe('toContents', () => {
  it('converts strings, bytes and explicit forms', () => {
    expect(toContents('u://x', 'hi', 'text/plain')).toEqual({ uri: 'u://x', text: 'hi', mimeType: 'text/plain' });
    expect(toContents('u://x', new Uint8Array([255]))).toEqual({ uri: 'u://x', blob: '/w==' });
    expect(toContents('u://x', { blob: 'AA==', mimeType: 'a/b' }, 'c/d')).toEqual({ uri: 'u://x', blob: 'AA==', mimeType: 'a/b' });
    expect(() => toContents('u://x', {})).toThrow('neither text nor blob');
  });
});

describe.each(ERAS)('installResources (%s era)', (era) => {
  it('lists resources and templates', async () => {
    const client = await connect(era);
    const { resources: listed } = await client.listResources();
    expect(listed.map((r) => r.uri)).toEqual(resources.map((r) => r.uri));
    expect(listed[0]).toEqual({ uri: 'docs://readme', name: 'readme', title: 'Read me', description: 'The readme', mimeType: 'text/markdown' });
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      { uriTemplate: 'app://notes/{id}', name: 'note', description: 'A note', mimeType: 'text/plain' },
      { uriTemplate: 'app://files/{+path}', name: 'file' },
      { uriTemplate: 'app://users/{id}{?fields}', name: 'user' },
    ]);
  });

  it('filters and decorates with the gate', async () => {
    const gate: PrimitiveGate = {
      visible: (kind, id) => !(kind === 'resources' && id === 'docs://logo') && !(kind === 'resourceTemplates' && id === 'app://files/{+path}'),
      assertAllowed: (kind, id) => {
        if (id === 'app://notes/{id}') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${kind} ${id} refused`);
      },
      decorate: (_kind, _id, item) => ({ ...item, _meta: { seen: true } }),
    };
    const client = await connect(era, gate);
    const { resources: listed } = await client.listResources();
    expect(listed.map((r) => r.uri)).not.toContain('docs://logo');
    expect(listed[0]?._meta).toEqual({ seen: true });
    expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.name)).toEqual(['note', 'user']);
    expect((await rejection(client.readResource({ uri: 'app://notes/1' }))).message).toContain('resourceTemplates app://notes/{id} refused');
  });

  it('reads static text and embedded blobs', async () => {
    const client = await connect(era);
    expect((await client.readResource({ uri: 'docs://readme' })).contents).toEqual([{ uri: 'docs://readme', mimeType: 'text/markdown', text: '# Hello' }]);
    expect((await client.readResource({ uri: 'docs://logo' })).contents).toEqual([{ uri: 'docs://logo', mimeType: 'image/png', blob: 'iVBORw0KGgo=' }]);
  });

  it('reads dynamic resources in every result form', async () => {
    const client = await connect(era);
    expect((await client.readResource({ uri: 'app://clock' })).contents).toEqual([{ uri: 'app://clock', text: 'now at app:' }]);
    expect((await client.readResource({ uri: 'app://bytes' })).contents).toEqual([{ uri: 'app://bytes', mimeType: 'application/octet-stream', blob: 'AQID' }]);
    expect((await client.readResource({ uri: 'app://json' })).contents).toEqual([{ uri: 'app://json', mimeType: 'application/json', text: '{"a":1}' }]);
  });

  it('matches templates with their variables, exact URIs first', async () => {
    const client = await connect(era);
    expect((await client.readResource({ uri: 'app://notes/42' })).contents).toEqual([
      { uri: 'app://notes/42', mimeType: 'text/plain', text: 'note 42 (app://notes/42)' },
    ]);
    expect(seenVariables).toEqual([{ id: '42' }]);
    expect((await client.readResource({ uri: 'app://notes/special' })).contents).toEqual([{ uri: 'app://notes/special', text: 'exact match wins' }]);
    expect((await client.readResource({ uri: 'app://files/a/b.txt' })).contents).toEqual([
      { uri: 'app://files/a/b.txt', blob: Buffer.from('a/b.txt').toString('base64') },
    ]);
    expect((await client.readResource({ uri: 'app://users/7?fields=name' })).contents[0]).toEqual({
      uri: 'app://users/7?fields=name',
      text: '{"id":"7","fields":"name"}',
    });
  });

  it('answers an unknown URI with -32602 and exactly { uri } in data (the SDK sends no -32002 in either era)', async () => {
    const client = await connect(era);
    const err = await rejection(client.readResource({ uri: 'app://nowhere' }));
    expect(err.code).toBe(RESOURCE_NOT_FOUND);
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('Resource not found: app://nowhere');
    expect(err.data).toEqual({ uri: 'app://nowhere' });
    // the v2 client rebuilds the SDK's ResourceNotFoundError from { uri }; the v1 client has no such class
    expect(err instanceof ResourceNotFoundError).toBe(era === 'modern');
  });

  it('turns handler errors into -32603 and logs them', async () => {
    const client = await connect(era);
    const err = await rejection(client.readResource({ uri: 'app://boom' }));
    expect(err.code).toBe(-32603);
    expect(err.message).toContain('Reading resource app://boom failed: disk on fire');
    expect(logs.join('')).toMatch(/ERROR reading resource app:\/\/boom failed/);
    expect((await rejection(client.readResource({ uri: 'app://empty' }))).code).toBe(-32603);
  });

  it('refuses duplicates', () => {
    const server = new Server({ name: 'r', version: '1' }, { capabilities: { resources: {} } });
    expect(() => installResources(server, { resources: [resources[0]!, resources[0]!] })).toThrow('Duplicate resource URI');
    expect(() => installResources(server, { templates: [templates[0]!, templates[0]!] })).toThrow('Duplicate resource template');
  });
});

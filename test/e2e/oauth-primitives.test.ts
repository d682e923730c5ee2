/**
 * OAuth scopes beyond tools (issue 25), against a real authorization server (`oidc-provider`,
 * test/helpers/idp.ts): test/fixtures/oauth-primitives — the corpus Petstore with prompts,
 * resources and a resource template, some needing `write:pets` (manifest `scopes`), and an extra
 * tool whose handler calls `addPet` (read:pets write:pets) through `ctx.api` — is built, compiled
 * and served over Streamable HTTP with `PETSTORE_OAUTH_ISSUER`. A read:pets token and a
 * read:pets write:pets token see different prompts, resources and templates in both eras; a
 * prompts/get, resources/read, resources/subscribe or completion/complete of a scoped one without
 * the scope is 403 insufficient_scope naming what is needed; the handler's nested addPet call for
 * a read:pets token is refused (the handler gets `ok: false` naming the missing scope, nothing
 * reaches the API, the trail says tool.denied under the handler's callId). Built again with
 * concerns and no policy, the concern gate joins the scope gate instead of replacing it (a
 * read:pets token was shown findPetsByStatus before).
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { corpusSpec } from '../helpers/corpus.js';
import { connectClient, type Era, type HttpProcess, startHttp } from '../helpers/eras.js';
import { type Idp, rsaKey, startIdp } from '../helpers/idp.js';
import { ROOT, run } from '../helpers/project.js';

const FIXTURE = path.join(ROOT, 'test/fixtures/oauth-primitives');
const work = path.join(ROOT, '.cache/oauth-primitives-e2e');
const project = path.join(work, 'server');
const audit = path.join(work, 'audit.jsonl');
// the fixture with concerns and no policy: the concern gate must not replace the scope gate
const concernsWork = path.join(ROOT, '.cache/oauth-primitives-concerns-e2e');
const CONCERNS = `concerns:
  - name: audience
    values: [customer, staff]
concernMappings:
  prompts:
    greet: { audience: customer }
`;

/** Builds the fixture's manifest (changed by `edit`) in `dir` and compiles the project; returns the project folder. */
async function build(dir: string, edit: (manifest: string) => string = (m) => m): Promise<string> {
  const server = path.join(dir, 'server');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(server, 'src'), { recursive: true });
  writeFileSync(path.join(dir, 'mcpgen.yaml'), edit(readFileSync(path.join(FIXTURE, 'mcpgen.yaml'), 'utf8')));
  writeFileSync(path.join(dir, 'openapi.yaml'), readFileSync(corpusSpec('petstore-3.0.json'), 'utf8'));
  cpSync(path.join(FIXTURE, 'handlers'), path.join(server, 'src/handlers'), { recursive: true });
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', path.relative(ROOT, path.join(dir, 'mcpgen.yaml')), '--quiet'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', server]);
  return server;
}

/** The API: answers 200 with a pet and remembers what it was asked. */
type Backend = { url: string; requests: Array<{ method: string; path: string }>; close(): Promise<void> };
async function startBackend(): Promise<Backend> {
  const requests: Backend['requests'] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '' });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 1, name: 'Rex', photoUrls: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let idp: Idp;
let backend: Backend;
let server: HttpProcess;
let concernsProject: string;

beforeAll(async () => {
  await build(work);
  concernsProject = await build(concernsWork, (m) => m.replace(/\npolicy:\n[\s\S]*$/, `\n${CONCERNS}`));
  idp = await startIdp({ keys: [await rsaKey('key-1')] });
  backend = await startBackend();
  server = await startHttp(project, {
    PETSTORE_PETSTORE_AUTH_TOKEN: 'upstream-token-0123456789',
    PETSTORE_AUDIT_FILE: audit,
    PETSTORE_BASE_URL: backend.url,
    PETSTORE_OAUTH_ISSUER: idp.issuer,
  });
}, 180_000);

afterAll(async () => {
  server?.kill('SIGKILL');
  await idp?.close();
  await backend?.close();
});

const READ = 'read:pets';
const WRITE = 'read:pets write:pets';

/** A client of `era` with a token for `scope`. */
async function session(era: Era, scope: string) {
  const token = await idp.clientToken(server.url, scope);
  return (await connectClient({ kind: 'http', url: server.url, headers: { authorization: `Bearer ${token}` } }, era)).client;
}

describe('prompts, resources and templates with scopes', () => {
  it.each(['legacy', 'modern'] as Era[])('two tokens with different scopes see different prompts, resources and templates (%s)', async (era) => {
    const seen = async (scope: string) => {
      const client = await session(era, scope);
      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      const resources = (await client.listResources()).resources.map((r) => r.uri);
      const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      await client.close();
      return { prompts, resources, templates };
    };
    expect(await seen(READ)).toEqual({ prompts: ['greet'], resources: ['petstore://docs/open'], templates: [] });
    expect(await seen(WRITE)).toEqual({
      prompts: ['greet', 'adoption_letter'],
      resources: ['petstore://docs/open', 'petstore://docs/staff'],
      templates: ['petstore://pets/{petId}/notes'],
    });
  });

  it.each(['legacy', 'modern'] as Era[])('using one without its scope is 403 insufficient_scope naming what is needed (%s)', async (era) => {
    const token = await idp.clientToken(server.url, READ);
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': era === 'legacy' ? '2025-11-25' : '2026-07-28',
    };
    const refused = [
      { method: 'prompts/get', params: { name: 'adoption_letter', arguments: { pet: 'Rex' } }, what: 'prompt adoption_letter' },
      { method: 'resources/read', params: { uri: 'petstore://docs/staff' }, what: 'resource petstore://docs/staff' },
      { method: 'resources/read', params: { uri: 'petstore://pets/7/notes' }, what: 'resource template petstore://pets/{petId}/notes' },
      {
        method: 'completion/complete',
        params: { ref: { type: 'ref/prompt', name: 'adoption_letter' }, argument: { name: 'pet', value: 'R' } },
        what: 'prompt adoption_letter',
      },
      {
        method: 'completion/complete',
        params: { ref: { type: 'ref/resource', uri: 'petstore://pets/{petId}/notes' }, argument: { name: 'petId', value: '' } },
        what: 'resource template petstore://pets/{petId}/notes',
      },
      ...(era === 'legacy'
        ? [{ method: 'resources/subscribe', params: { uri: 'petstore://pets/7/notes' }, what: 'resource template petstore://pets/{petId}/notes' }]
        : []),
    ];
    for (const r of refused) {
      const res = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: r.method, params: r.params }) });
      expect(res.status, r.method).toBe(403);
      const challenge = res.headers.get('www-authenticate')!;
      expect(challenge).toContain('error="insufficient_scope"');
      expect(challenge).toContain('scope="read:pets write:pets"');
      expect(await res.json()).toEqual({ error: 'insufficient_scope', error_description: `The ${r.what} needs the scope write:pets` });
    }
    // what needs no scope is served to the same token
    const client = await session(era, READ);
    expect((await client.readResource({ uri: 'petstore://docs/open' })).contents[0]).toMatchObject({ text: 'Everyone may read this.' });
    expect((await client.getPrompt({ name: 'greet' })).messages).toHaveLength(1);
    await client.close();
  });

  it.each(['legacy', 'modern'] as Era[])('a token with the scope gets, reads and completes them (%s)', async (era) => {
    const client = await session(era, WRITE);
    expect((await client.readResource({ uri: 'petstore://docs/staff' })).contents[0]).toMatchObject({ text: 'Staff only.' });
    expect((await client.readResource({ uri: 'petstore://pets/7/notes' })).contents[0]).toMatchObject({ text: 'Notes of petstore://pets/7/notes.' });
    const letter = await client.getPrompt({ name: 'adoption_letter', arguments: { pet: 'Rex' } });
    expect(letter.messages[0]!.content).toMatchObject({ type: 'text', text: 'Write an adoption letter for Rex.' });
    expect((await client.complete({ ref: { type: 'ref/prompt', name: 'adoption_letter' }, argument: { name: 'pet', value: 'R' } })).completion.values).toEqual([
      'Rex',
    ]);
    await client.close();
  });
});

describe('ctx.api checks the token against the operation', () => {
  type Event = { event: string; primitive?: string; callId?: string; parentCallId?: string; detail?: string };
  const events = (): Event[] =>
    readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Event);

  it('a nested call of an operation whose scopes the token lacks is refused, named, audited, and never reaches the API', async () => {
    backend.requests.length = 0;
    const client = await session('legacy', READ);
    // the handler's own tool needs no scope: the token sees it, but not addPet
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('register_pet');
    expect(tools).not.toContain('addPet');
    const result = (await client.callTool({ name: 'register_pet', arguments: { name: 'Rex' } })) as { isError?: boolean; content: Array<{ text?: string }> };
    await client.close();
    expect(result.isError).toBeFalsy();
    const answer = JSON.parse(result.content[0]!.text!) as { ok: boolean; error?: string };
    expect(answer.ok).toBe(false);
    expect(answer.error).toContain('addPet was refused');
    expect(answer.error).toContain('The tool addPet needs the scopes read:pets write:pets; the OAuth token lacks write:pets');
    expect(backend.requests).toEqual([]);
    const trail = events();
    const handler = trail.find((e) => e.event === 'tool.invoked' && e.primitive === 'register_pet');
    const denied = trail.filter((e) => e.event === 'tool.denied' && e.primitive === 'addPet');
    expect(denied).toHaveLength(1);
    expect(denied[0]!.parentCallId).toBe(handler?.callId);
    expect(denied[0]!.detail).toContain('lacks write:pets');
  });

  it('a token with the scopes makes the nested call', async () => {
    backend.requests.length = 0;
    const client = await session('modern', WRITE);
    const result = (await client.callTool({ name: 'register_pet', arguments: { name: 'Rex' } })) as { content: Array<{ text?: string }> };
    await client.close();
    expect(JSON.parse(result.content[0]!.text!)).toEqual({ ok: true, status: 200 });
    expect(backend.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /pet']);
  });
});

describe('with concerns (and no policy)', () => {
  it('a token still sees only the tools, prompts and resources its scopes allow', async () => {
    const other = await startHttp(concernsProject, {
      PETSTORE_PETSTORE_AUTH_TOKEN: 'upstream-token-0123456789',
      PETSTORE_BASE_URL: backend.url,
      PETSTORE_OAUTH_ISSUER: idp.issuer,
    });
    try {
      const token = await idp.clientToken(other.url, READ);
      const { client } = await connectClient({ kind: 'http', url: other.url, headers: { authorization: `Bearer ${token}` } }, 'modern');
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('getPetById');
      expect(tools).not.toContain('findPetsByStatus');
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greet']);
      expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['petstore://docs/open']);
      await client.close();
    } finally {
      other.kill('SIGKILL');
    }
  });
});

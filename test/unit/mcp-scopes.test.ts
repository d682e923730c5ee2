/**
 * Per-tool OAuth scopes (issue 25): the scopes an operation's `security` lists for the API
 * description's oauth2/openIdConnect scheme reach its tool in the IR and the generated tool
 * table, and the runtime shows and refuses by them for OAuth tokens only.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allScopes, missingScopes, scopeGate, scopeNeeds, scopeShortfall } from '../../templates/runtime/oauth/oauth-scopes.js';
import { nestedScopes } from '../../templates/runtime/pipeline/nested-scopes.js';
import { refusalOf } from '../../templates/runtime/pipeline/pipeline.js';
import { corpusSpec } from '../helpers/corpus.js';
import { irFromText } from '../helpers/ir.js';

function build(specText: string, file = 'openapi.yaml', manifestYaml = '') {
  const { ir, diagnostics } = irFromText({ spec: specText, specFile: file, manifestYaml });
  return { scopes: Object.fromEntries(ir.tools.map((t) => [t.name, t.scopes])), diagnostics: diagnostics.items };
}
const tools = (specText: string, file = 'openapi.yaml') => build(specText, file).scopes;

const SPEC = `openapi: 3.0.3
info: { title: t, version: '1' }
servers: [{ url: 'https://api.example.com' }]
security: [{ oauth: [read] }]
components:
  securitySchemes:
    oauth: { type: oauth2, flows: { authorizationCode: { authorizationUrl: 'https://a.example.com/a', tokenUrl: 'https://a.example.com/t', scopes: { read: r, write: w, admin: a } } } }
    key: { type: apiKey, in: header, name: X-Key }
paths:
  /default: { get: { operationId: usesDefault, responses: { '200': { description: ok } } } }
  /write: { post: { operationId: writes, security: [{ oauth: [write, read, write] }], responses: { '200': { description: ok } } } }
  /either: { get: { operationId: eitherKey, security: [{ oauth: [admin] }, { key: [] }], responses: { '200': { description: ok } } } }
  /fewest: { get: { operationId: fewest, security: [{ oauth: [admin, write] }, { oauth: [read] }], responses: { '200': { description: ok } } } }
  /public: { get: { operationId: open, security: [], responses: { '200': { description: ok } } } }
  /optional: { get: { operationId: optional, security: [{}, { oauth: [read] }], responses: { '200': { description: ok } } } }
  /noscopes: { get: { operationId: noScopes, security: [{ oauth: [] }], responses: { '200': { description: ok } } } }
`;

describe('scopes in the IR', () => {
  it("takes the oauth2 scheme's scopes of the operation (else the document), none when another credential or none will do", () => {
    expect(tools(SPEC)).toEqual({
      usesDefault: ['read'],
      writes: ['read', 'write'],
      eitherKey: undefined,
      fewest: ['read'],
      open: undefined,
      optional: undefined,
      noScopes: undefined,
    });
  });

  it('reads the corpus Petstore: petstore_auth asks for read:pets and write:pets on every pet operation it secures', () => {
    const scopes = tools(readFileSync(corpusSpec('petstore-3.0.json'), 'utf8'), 'openapi.json');
    expect(scopes.findPetsByStatus).toEqual(['read:pets', 'write:pets']);
    expect(scopes.addPet).toEqual(['read:pets', 'write:pets']);
    expect(scopes.getPetById).toBeUndefined(); // api_key
    expect(scopes.getOrderById).toBeUndefined(); // no security
  });
});

describe('scopes from the manifest', () => {
  it("scopeMap renames API scopes (one to several, or to none); overrides.<op>.scopes replaces a tool's list", () => {
    const { scopes, diagnostics } = build(
      SPEC,
      'openapi.yaml',
      `scopeMap:
  read: mcp.read
  write: [mcp.write, mcp.read]
  admin: []
overrides:
  open: { scopes: [public.read, public.read] }
  usesDefault: { scopes: [] }
`,
    );
    expect(diagnostics.filter((d) => d.code.startsWith('MCPGEN_SCOPE'))).toEqual([]);
    expect(scopes).toMatchObject({
      usesDefault: undefined,
      writes: ['mcp.read', 'mcp.write'],
      fewest: ['mcp.read'],
      open: ['public.read'],
      noScopes: undefined,
    });
  });

  it('a scopeMap key the API description does not define is a located warning with the nearest scope', () => {
    const { diagnostics } = build(SPEC, 'openapi.yaml', 'scopeMap:\n  reed: mcp.read\n');
    const d = diagnostics.find((x) => x.code === 'MCPGEN_SCOPE_MAP_UNKNOWN')!;
    expect(d.message).toBe('scopeMap maps "reed", which is no scope of the API description\'s scheme "oauth"; the entry does nothing');
    expect(d.help).toBe('did you mean "read"?');
    expect(d.location).toMatchObject({ file: 'mcpgen.yaml', pointer: '/scopeMap/reed', line: 2 });
  });
});

describe('scopes at run time', () => {
  const table = [{ name: 'reads', scopes: ['read'] }, { name: 'writes', scopes: ['read', 'write'] }, { name: 'open' }];
  const oauth = (scopes: string[]) => ({ token: 't', clientId: 'alice', scopes, expiresAt: 1, extra: { iss: 'https://as.example.com' } });
  const ctx = (authInfo: unknown) => ({ http: { authInfo } }) as never;

  it('hides from an OAuth token the tools whose scopes it lacks; static tokens and stdio see everything', () => {
    const gate = scopeGate(scopeNeeds(table));
    const shown = (authInfo: unknown) => table.map((t) => t.name).filter((n) => gate.visible('tools', n, ctx(authInfo)));
    expect(shown(oauth(['read']))).toEqual(['reads', 'open']);
    expect(shown(oauth(['read', 'write']))).toEqual(['reads', 'writes', 'open']);
    expect(shown(oauth([]))).toEqual(['open']);
    expect(shown({ token: 't', clientId: 'ops', scopes: [], expiresAt: 1 })).toEqual(['reads', 'writes', 'open']);
    expect(shown(undefined)).toEqual(['reads', 'writes', 'open']);
  });

  it('finds the first call of a tool without its scopes in a body or batch', () => {
    const needs = scopeNeeds([{ name: 'writes', scopes: ['read', 'write'] }]);
    const call = (name: string) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name } });
    expect(scopeShortfall(call('writes'), needs, oauth(['read']) as never)).toEqual({ what: 'tool writes', needs: ['read', 'write'], missing: ['write'] });
    expect(scopeShortfall([call('open'), call('writes')], needs, oauth([]) as never)?.missing).toEqual(['read', 'write']);
    expect(scopeShortfall(call('writes'), needs, oauth(['write', 'read']) as never)).toBeUndefined();
    expect(scopeShortfall({ method: 'tools/list' }, needs, oauth([]) as never)).toBeUndefined();
    expect(missingScopes(['read'], { token: 't', clientId: 'ops', scopes: [], expiresAt: 1 })).toEqual([]);
  });

  it('advertises every scope some tool needs, sorted', () => {
    expect(allScopes(scopeNeeds([{ name: 'a', scopes: ['write', 'read'] }, { name: 'b', scopes: ['admin', 'read'] }, { name: 'c' }]))).toEqual([
      'admin',
      'read',
      'write',
    ]);
    expect(allScopes(scopeNeeds([], { prompts: [{ name: 'p', scopes: ['docs'] }], templates: [{ uriTemplate: 'x://{id}', scopes: ['notes'] }] }))).toEqual([
      'docs',
      'notes',
    ]);
  });

  const primitives = {
    prompts: [{ name: 'open' }, { name: 'letter', scopes: ['write'] }],
    resources: [{ uri: 'docs://open' }, { uri: 'docs://staff', scopes: ['staff'] }, { uri: 'notes://fixed' }],
    templates: [{ uriTemplate: 'notes://{id}', scopes: ['notes'] }],
  };

  it('hides prompts, resources and templates whose scopes an OAuth token lacks, and refuses using them', () => {
    const gate = scopeGate(scopeNeeds([], primitives));
    expect(gate.visible('prompts', 'letter', ctx(oauth(['read'])))).toBe(false);
    expect(gate.visible('prompts', 'letter', ctx(oauth(['write'])))).toBe(true);
    expect(gate.visible('prompts', 'open', ctx(oauth([])))).toBe(true);
    expect(gate.visible('resources', 'docs://staff', ctx(oauth([])))).toBe(false);
    expect(gate.visible('resourceTemplates', 'notes://{id}', ctx({ token: 't', clientId: 'ops', scopes: [], expiresAt: 1 }))).toBe(true);
    expect(() => gate.assertAllowed('resourceTemplates', 'notes://{id}', ctx(oauth(['read'])))).toThrow(
      'The resource template notes://{id} needs the scope notes',
    );
    expect(() => gate.assertAllowed('prompts', 'letter', ctx(oauth(['write'])))).not.toThrow();
  });

  it('finds the request of a body that uses a primitive without its scopes: by name, by URI (a fixed URI before a template), by completion ref', () => {
    const needs = scopeNeeds([], primitives);
    const req = (method: string, params: unknown) => ({ jsonrpc: '2.0', id: 1, method, params });
    const none = oauth([]) as never;
    expect(scopeShortfall(req('prompts/get', { name: 'letter' }), needs, none)?.what).toBe('prompt letter');
    expect(scopeShortfall(req('prompts/get', { name: 'open' }), needs, none)).toBeUndefined();
    expect(scopeShortfall(req('resources/read', { uri: 'docs://staff' }), needs, none)?.what).toBe('resource docs://staff');
    expect(scopeShortfall(req('resources/read', { uri: 'notes://7' }), needs, none)).toEqual({
      what: 'resource template notes://{id}',
      needs: ['notes'],
      missing: ['notes'],
    });
    // a fixed URI the template also matches is the resource's (resources.ts reads it first)
    expect(scopeShortfall(req('resources/read', { uri: 'notes://fixed' }), needs, none)).toBeUndefined();
    expect(scopeShortfall(req('resources/subscribe', { uri: 'notes://7' }), needs, none)?.what).toBe('resource template notes://{id}');
    expect(scopeShortfall(req('subscriptions/listen', { notifications: { resourceSubscriptions: ['docs://open', 'docs://staff'] } }), needs, none)?.what).toBe(
      'resource docs://staff',
    );
    expect(
      scopeShortfall(req('completion/complete', { ref: { type: 'ref/prompt', name: 'letter' }, argument: { name: 'a', value: '' } }), needs, none)?.what,
    ).toBe('prompt letter');
    expect(
      scopeShortfall(req('completion/complete', { ref: { type: 'ref/resource', uri: 'notes://{id}' }, argument: { name: 'id', value: '' } }), needs, none)
        ?.what,
    ).toBe('resource template notes://{id}');
    expect(scopeShortfall(req('resources/read', { uri: 'notes://7' }), needs, oauth(['notes']) as never)).toBeUndefined();
    expect(scopeShortfall(req('resources/read', { uri: 'notes://7' }), needs, { token: 't', clientId: 'ops', scopes: [], expiresAt: 1 })).toBeUndefined();
  });

  it('refuses a nested call of an operation whose scopes the token lacks, as a denial; passes outer calls and held scopes', async () => {
    const tool = { name: 'addPet', scopes: ['read', 'write'] };
    const call = (authInfo: unknown, parent?: { name: string; callId: string }) => ({
      name: 'addPet',
      target: { kind: 'operation', tool },
      ctx: { http: { authInfo } },
      ...(parent ? { parent } : {}),
    });
    const next = async () => ({ content: [] });
    const nested = call(oauth(['read']), { name: 'register_pet', callId: 'c1' });
    const refused = await nestedScopes(nested as never, next).catch((e: unknown) => e);
    expect((refused as Error).message).toContain('The tool addPet needs the scopes read write; the OAuth token lacks write');
    expect(refusalOf(refused)).toEqual({ kind: 'denied', reason: 'the tool addPet needs the scopes read write; the OAuth token lacks write' });
    await expect(nestedScopes(call(oauth(['read', 'write']), { name: 'register_pet', callId: 'c1' }) as never, next)).resolves.toEqual({ content: [] });
    await expect(nestedScopes(call(oauth([])) as never, next)).resolves.toEqual({ content: [] });
    await expect(
      nestedScopes(call({ token: 't', clientId: 'ops', scopes: [], expiresAt: 1 }, { name: 'register_pet', callId: 'c1' }) as never, next),
    ).resolves.toEqual({ content: [] });
  });
});

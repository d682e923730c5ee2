/** Synthesised descriptions (src/ir/tools/describe.ts) for operations with neither summary nor description. */
import { describe, expect, it } from 'vitest';
import { type DescribeInput, synthesizeDescription } from '../../src/ir/tools/describe.js';
import type { IrParam } from '../../src/ir/types.js';
import { irFromText } from '../helpers/ir.js';

const origin = { file: 'openapi.yaml', pointer: '' };
const param = (arg: string, loc: IrParam['in'], extra: Partial<IrParam> = {}): IrParam => ({
  kind: 'param',
  arg,
  name: arg,
  in: loc,
  required: loc === 'path',
  origin,
  ...extra,
});
const input = (over: Partial<DescribeInput>): DescribeInput => ({
  method: 'GET',
  path: '/',
  tags: [],
  params: [],
  deprecated: false,
  maxLength: 1024,
  ...over,
});

describe('synthesizeDescription', () => {
  it('says method, path, an action, the tags and the arguments by location', () => {
    const text = synthesizeDescription(
      input({
        path: '/repos/{owner}/{repo}/issues',
        tags: ['issues'],
        params: [param('owner', 'path'), param('repo', 'path'), param('state', 'query'), param('labels', 'query'), param('X-Trace', 'header')],
      }),
    );
    expect(text).toBe('GET /repos/{owner}/{repo}/issues — list issues (tag: issues). Path parameters: owner, repo. Query: state, labels. Headers: X-Trace.');
  });

  it.each([
    ['GET', '/sites/{site_id}', 'get one of sites'],
    ['GET', '/sites/{site_id}/ssl', 'get ssl'],
    ['GET', '/status', 'get status'],
    ['GET', '/2010-04-01/Accounts/{AccountSid}/Addresses.json', 'list Addresses'],
    ['GET', '/2010-04-01/Accounts/{AccountSid}/Addresses/{Sid}.json', 'get one of Addresses'],
    ['POST', '/pets', 'create in pets'],
    ['POST', '/markdown', 'send to markdown'],
    ['PUT', '/pets/{id}', 'replace one of pets'],
    ['PATCH', '/pets/{id}', 'update one of pets'],
    ['DELETE', '/sites/{site_id}', 'delete one of sites'],
    ['HEAD', '/', 'check the API root'],
  ] as const)('%s %s — %s', (method, path, action) => {
    expect(synthesizeDescription(input({ method, path }))).toBe(`${method} ${path} — ${action}.`);
  });

  it('describes the body, leaves hidden arguments out and marks deprecation', () => {
    const text = synthesizeDescription(
      input({
        method: 'POST',
        path: '/uploads',
        tags: ['files', 'beta'],
        params: [param('token', 'query', { fixed: { env: 'X_TOKEN' } }), param('session', 'cookie')],
        body: { kind: 'body', arg: 'body', contentType: 'application/octet-stream', required: false, binary: true, origin },
        deprecated: true,
      }),
    );
    expect(text).toBe(
      '[deprecated] POST /uploads — create in uploads (tags: files, beta). Cookies: session. Body: a file (application/octet-stream), optional.',
    );
  });

  it('cuts to maxDescriptionLength at a list boundary', () => {
    const params = Array.from({ length: 40 }, (_, i) => param(`parameter_${i}`, 'query'));
    const text = synthesizeDescription(input({ path: '/things', params, maxLength: 120 }));
    expect(text.length).toBeLessThanOrEqual(120);
    expect(text).toMatch(/^GET \/things — list things\. Query: parameter_0, parameter_1, .*parameter_\d+…$/);
  });
});

const SPEC = `openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /accounts/{id}/keys:
    parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
    get:
      operationId: listKeys
      tags: [keys]
      parameters:
        - { name: api_token, in: query, schema: { type: string } }
        - { name: q, in: query, schema: { type: string } }
      responses: { '200': { description: ok } }
    post:
      operationId: createKey
      summary: Create a key.
      responses: { '201': { description: ok } }
    delete:
      operationId: deleteKeys
      description: '   '
      responses: { '204': { description: ok } }
`;

describe('buildIr', () => {
  it('gives every operation without summary or description one, from the arguments the model sees', () => {
    const { ir, diagnostics } = irFromText({
      spec: SPEC,
      version: '3.0',
      manifestYaml: 'overrides:\n  listKeys:\n    arguments:\n      api_token: { hidden: true, env: X_TOKEN }\n      q: { name: search }\n',
      manifest: { baseUrl: 'https://h' },
    });
    expect(diagnostics.items.filter((d) => d.severity === 'error')).toEqual([]);
    expect(ir.tools.map((t) => t.description)).toEqual([
      'GET /accounts/{id}/keys — list keys (tag: keys). Path parameters: id. Query: search.',
      'Create a key.',
      'DELETE /accounts/{id}/keys — delete keys. Path parameters: id.',
    ]);
  });
});

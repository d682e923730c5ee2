import { describe, expect, it } from 'vitest';
import { specBaseUrl } from '../../src/ir/base-url.js';
import { irFromText } from '../helpers/ir.js';

const SPEC = `openapi: 3.0.3
info: { title: t, version: '1' }
servers: [{ url: 'https://{region}.example.com/v1', variables: { region: { default: eu } } }]
tags: [{ name: admin }]
paths:
  /pets:
    get:
      operationId: listPets
      tags: [pets]
      parameters:
        - { name: id, in: query, schema: { type: string } }
        - { name: X-Trace, in: header, schema: { type: string } }
      responses: { '200': { description: ok } }
    post:
      operationId: createPet
      tags: [pets]
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, properties: { name: { type: string } } } } }
      responses: { '201': { description: ok } }
  /pets/{id}:
    parameters: [{ name: id, in: path, required: true, schema: { type: integer } }]
    get:
      operationId: getPet
      tags: [pets]
      parameters: [{ name: id, in: query, schema: { type: string } }]
      responses: { '200': { description: ok } }
    delete:
      tags: [pets]
      responses: { '204': { description: gone } }
  /store/orders:
    get:
      operationId: listOrders
      tags: [store]
      responses: { '200': { description: ok } }
`;

function setup(manifestYaml: string, specYaml = SPEC) {
  // the builder's own description limit, not the test default
  return irFromText({ spec: specYaml, version: '3.0', manifestYaml, manifest: { maxDescriptionLength: undefined } });
}

describe('buildIr', () => {
  it('makes one tool per operation, in spec order, with derived names for operations without an id', () => {
    const { ir, diagnostics } = setup('');
    expect(diagnostics.items).toEqual([]);
    expect(ir.tools.map((t) => t.name)).toEqual(['listPets', 'createPet', 'getPet', 'delete_pets_id', 'listOrders']);
    expect(ir.baseUrl).toBe('https://eu.example.com/v1');
  });

  it('maps parameters to distinct arguments, path first, and the body to `body`', () => {
    const { ir } = setup('');
    const get = ir.tools.find((t) => t.name === 'getPet')!;
    expect(get.params.map((p) => [p.arg, p.in, p.name])).toEqual([
      ['id', 'path', 'id'],
      ['query_id', 'query', 'id'],
    ]);
    expect(get.inputSchema).toStrictEqual({
      type: 'object',
      properties: { id: { type: 'integer' }, query_id: { type: 'string' } },
      required: ['id'],
      additionalProperties: false,
    });
    const create = ir.tools.find((t) => t.name === 'createPet')!;
    expect(create.body).toMatchObject({ arg: 'body', contentType: 'application/json', required: true });
    expect(create.inputSchema.required).toEqual(['body']);
    expect(ir.tools.find((t) => t.name === 'listPets')!.params.map((p) => p.arg)).toEqual(['id', 'X-Trace']);
  });

  it('derives annotations from the method and merges overrides over them', () => {
    const { ir, diagnostics } = setup(
      `overrides:\n  DELETE /pets/{id}:\n    name: remove_pet\n    description: Remove it.\n    annotations: { idempotentHint: true }\n`,
    );
    expect(diagnostics.items).toEqual([]);
    const del = ir.tools.find((t) => t.method === 'DELETE')!;
    expect(del.name).toBe('remove_pet');
    expect(del.description).toBe('Remove it.');
    expect(del.annotations).toEqual({ destructiveHint: true, idempotentHint: true });
    expect(ir.tools.find((t) => t.name === 'listPets')!.annotations).toEqual({ readOnlyHint: true });
  });

  it('applies include and exclude, exclude winning', () => {
    const { ir } = setup(`include:\n  - tag: pets\n    method: get\n  - operationId: listOrders\nexclude:\n  - path: /pets/*\n`);
    expect(ir.tools.map((t) => t.name)).toEqual(['listPets', 'listOrders']);
  });

  it('reports unknown tags and operationIds at their manifest position with a suggestion', () => {
    const { diagnostics } = setup(`include:\n  - tag: pet\n  - operationId: [listPets, listPet]\n`);
    const errs = diagnostics.sorted().map((d) => [d.code, d.location.line, d.location.col, d.location.pointer, d.help]);
    expect(errs).toEqual([
      ['MCPGEN_UNKNOWN_TAG', 2, 10, '/include/0/tag', 'did you mean "pets"?'],
      ['MCPGEN_UNKNOWN_OPERATION', 3, 29, '/include/1/operationId/1', 'did you mean "listPets"?'],
    ]);
  });

  it('rejects an override name that collides with a derived name, at the override', () => {
    const { diagnostics } = setup(`overrides:\n  getPet:\n    name: listPets\n`);
    const errs = diagnostics.items.filter((d) => d.code === 'MCPGEN_DUPLICATE_TOOL_NAME');
    expect(errs.length).toBeGreaterThan(0);
    expect(errs.some((d) => d.location.file === 'mcpgen.yaml' && d.location.pointer === '/overrides/getPet/name' && d.location.line === 3)).toBe(true);
  });

  it('rejects overrides of unknown operations and too-long names', () => {
    const { diagnostics } = setup(`maxToolNameLength: 8\noverrides:\n  nope: { name: x }\n  getPet: { name: much_too_long }\n`);
    expect(diagnostics.sorted().map((d) => [d.code, d.location.line])).toEqual([
      ['MCPGEN_UNKNOWN_OPERATION', 3],
      ['MCPGEN_INVALID_TOOL_NAME', 4],
    ]);
  });

  it('reports duplicate operationIds at each operation in the spec', () => {
    const spec = SPEC.replace('operationId: listOrders', 'operationId: listPets');
    const { diagnostics } = setup('', spec);
    const dup = diagnostics.sorted().filter((d) => d.code === 'MCPGEN_DUPLICATE_OPERATION_ID');
    expect(dup.map((d) => [d.location.file, d.location.line, d.location.pointer])).toEqual([
      ['openapi.yaml', 8, '/paths/~1pets/get/operationId'],
      ['openapi.yaml', 33, '/paths/~1store~1orders/get/operationId'],
    ]);
  });

  it('uses Swagger 2.0 host/basePath and ignores relative servers', () => {
    expect(specBaseUrl({ host: 'api.x.io', basePath: '/v2', schemes: ['http', 'https'] }, '2.0')).toBe('https://api.x.io/v2');
    expect(specBaseUrl({ servers: [{ url: '/api' }] }, '3.0')).toBeUndefined();
    expect(specBaseUrl({ servers: [{ url: 'javascript:alert(1)' }] }, '3.0')).toBeUndefined();
  });
});

describe('tool surface controls', () => {
  it('excludes deprecated operations with a `deprecated: true` selector', () => {
    const spec = SPEC.replace('      operationId: listOrders\n', '      operationId: listOrders\n      deprecated: true\n');
    const { ir } = setup('exclude:\n  - deprecated: true\n', spec);
    expect(ir.tools.map((t) => t.name)).not.toContain('listOrders');
    expect(ir.tools).toHaveLength(4);
    expect(setup('include:\n  - deprecated: true\n', spec).ir.tools.map((t) => t.name)).toEqual(['listOrders']);
  });

  it('cuts long descriptions at a sentence or word boundary, but never an override', async () => {
    const { truncateDescription } = await import('../../src/ir/build.js');
    const text = 'First sentence here. Second sentence is a little longer than the first one. Third.';
    expect(truncateDescription(text, 200)).toBe(text);
    expect(truncateDescription(text, 70)).toBe('First sentence here. Second sentence is a little longer than the…');
    expect(truncateDescription(text, 30)).toBe('First sentence here.…');
    expect(truncateDescription('x'.repeat(100), 64)).toBe('x'.repeat(63) + '…');
    const long = 'A word. '.repeat(40);
    const { ir } = setup(
      `maxDescriptionLength: 64\noverrides:\n  getPet:\n    description: ${JSON.stringify(long)}\n`,
      SPEC.replace('operationId: listPets', `operationId: listPets\n      description: ${JSON.stringify(long)}`),
    );
    expect(ir.tools.find((t) => t.name === 'listPets')!.description!.length).toBeLessThanOrEqual(64);
    expect(ir.tools.find((t) => t.name === 'getPet')!.description).toBe(long);
  });
});

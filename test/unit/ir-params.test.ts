/**
 * How operations map to tool arguments and request shapes: parameter styles (OpenAPI style /
 * explode, Swagger 2.0 collectionFormat), body media types (JSON, form, multipart, text,
 * binary; Swagger 2.0 body / formData), and that nothing invents values the caller did not give.
 */
import { describe, expect, it } from 'vitest';
import type { IrOperationTool } from '../../src/ir/types.js';
import { buildRequest } from '../../templates/runtime/operation/request.js';
import { validateArguments } from '../../templates/runtime/validation/validate.js';
import { irFromText } from '../helpers/ir.js';

function tools(specYaml: string, version: '2.0' | '3.0' | '3.1', localFiles = false): IrOperationTool[] {
  const { ir, diagnostics } = irFromText({ spec: specYaml, version, manifest: { baseUrl: 'http://127.0.0.1:1', uploads: { localFiles } } });
  expect(diagnostics.items.filter((d) => d.severity === 'error')).toEqual([]);
  return ir.tools;
}

/** The runtime view of an IR tool, as tools.gen.ts would hold it. */
function http(t: IrOperationTool) {
  return {
    method: t.method,
    path: t.path,
    params: t.params.map((p) => ({
      arg: p.arg,
      name: p.name,
      in: p.in,
      ...(p.style ? { style: p.style } : {}),
      ...(p.explode !== undefined ? { explode: p.explode } : {}),
    })),
    ...(t.body ? { body: { arg: t.body.arg, contentType: t.body.contentType } } : {}),
  };
}

describe('OpenAPI 3 parameter styles', () => {
  const spec = `openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /items/{ids}/{point}:
    get:
      operationId: styles
      parameters:
        - { name: ids, in: path, required: true, style: label, explode: true, schema: { type: array, items: { type: integer } } }
        - { name: point, in: path, required: true, style: matrix, schema: { type: object, properties: { x: { type: integer } } } }
        - { name: tags, in: query, style: form, explode: false, schema: { type: array, items: { type: string } } }
        - { name: colors, in: query, style: pipeDelimited, schema: { type: array, items: { type: string } } }
        - { name: filter, in: query, style: deepObject, explode: true, schema: { type: object } }
        - { name: X-Ids, in: header, schema: { type: array, items: { type: integer } } }
        - { name: session, in: cookie, schema: { type: string } }
      responses: { '204': { description: none } }
`;
  it('keeps non-default styles in the IR and the runtime serialises them', () => {
    const [t] = tools(spec, '3.0');
    expect(t!.params.map(({ arg, in: loc, style, explode }) => ({ arg, in: loc, style, explode }))).toEqual([
      { arg: 'ids', in: 'path', style: 'label', explode: true },
      { arg: 'point', in: 'path', style: 'matrix', explode: undefined },
      { arg: 'tags', in: 'query', style: undefined, explode: false },
      { arg: 'colors', in: 'query', style: 'pipeDelimited', explode: undefined },
      { arg: 'filter', in: 'query', style: 'deepObject', explode: true },
      { arg: 'X-Ids', in: 'header', style: undefined, explode: undefined },
      { arg: 'session', in: 'cookie', style: undefined, explode: undefined },
    ]);
    const req = buildRequest(
      http(t!),
      { ids: [1, 2], point: { x: 3 }, tags: ['a', 'b'], colors: ['r', 'g'], filter: { color: 'red' }, 'X-Ids': [4, 5], session: 's1' },
      'http://h',
    );
    // delimiters as the OpenAPI style examples show them
    expect(req.url).toBe('http://h/items/.1.2/;point=x,3?tags=a,b&colors=r|g&filter[color]=red');
    expect(req.headers['X-Ids'] ?? req.headers['x-ids']).toBe('4,5');
    expect(req.headers.Cookie ?? req.headers.cookie).toBe('session=s1');
  });
});

describe('Swagger 2.0', () => {
  const spec = `swagger: '2.0'
info: { title: t, version: '1' }
host: api.example.com
consumes: [application/json]
paths:
  /pets/{id}:
    post:
      operationId: update
      parameters:
        - { name: id, in: path, required: true, type: integer }
        - { name: csv, in: query, type: array, items: { type: string } }
        - { name: multi, in: query, type: array, collectionFormat: multi, items: { type: string } }
        - { name: pipes, in: query, type: array, collectionFormat: pipes, items: { type: string } }
        - { name: body, in: body, required: true, schema: { type: object, properties: { name: { type: string, default: Rex } } } }
      responses: { '200': { description: ok, schema: { type: object, properties: { id: { type: integer } } } } }
  /upload:
    post:
      operationId: upload
      consumes: [multipart/form-data]
      parameters:
        - { name: file, in: formData, type: file, required: true }
        - { name: note, in: formData, type: string }
      responses: { '204': { description: ok } }
  /form:
    post:
      operationId: form
      consumes: [application/x-www-form-urlencoded]
      parameters:
        - { name: a, in: formData, type: string, required: true }
      responses: { '204': { description: ok } }
`;
  it('maps path, query collections and the body parameter, and reads the JSON response schema', () => {
    const [t] = tools(spec, '2.0');
    expect(t!.inputSchema.properties).toMatchObject({ id: { type: 'integer' }, csv: { type: 'array', items: { type: 'string' } } });
    expect(t!.params.map(({ arg, style, explode }) => ({ arg, style, explode }))).toEqual([
      { arg: 'id', style: undefined, explode: undefined },
      { arg: 'csv', style: undefined, explode: false },
      { arg: 'multi', style: undefined, explode: undefined },
      { arg: 'pipes', style: 'pipeDelimited', explode: undefined },
    ]);
    expect(t!.body).toMatchObject({ arg: 'body', contentType: 'application/json', required: true });
    // lenient by default: nothing required, null accepted, one numeric type
    expect(t!.outputSchema).toEqual({ type: 'object', properties: { id: { anyOf: [{ type: 'number' }, { type: 'null' }] } } });
    expect(t!.resultShape).toBe('object');
    const req = buildRequest(http(t!), { id: 7, csv: ['a', 'b'], multi: ['x', 'y'], pipes: ['p', 'q'], body: {} }, 'http://h');
    expect(req.url).toBe('http://h/pets/7?csv=a,b&multi=x&multi=y&pipes=p|q');
  });

  it('never injects schema defaults into the body', () => {
    const [t] = tools(spec, '2.0');
    const args = { id: 1, body: {} };
    expect(validateArguments({ kind: 'operation', name: 'update', inputSchema: t!.inputSchema, http: http(t!) }, args)).toEqual([]);
    expect(args.body).toEqual({});
    expect(buildRequest(http(t!), args, 'http://h').body).toBe('{}');
  });

  it('turns formData into a multipart or form-encoded body object', () => {
    const [, upload, form] = tools(spec, '2.0');
    expect(upload!.body).toMatchObject({ contentType: 'multipart/form-data', required: true, files: ['file'] });
    expect(upload!.inputSchema.properties).toMatchObject({
      body: { type: 'object', properties: { file: { type: 'string', contentEncoding: 'base64' }, note: { type: 'string' } }, required: ['file'] },
    });
    expect(form!.body).toMatchObject({ contentType: 'application/x-www-form-urlencoded' });
    expect(buildRequest(http(form!), { body: { a: 'x y' } }, 'http://h').body).toBe('a=x+y');
  });
});

describe('OpenAPI 3 request bodies', () => {
  const body = (types: string) => `openapi: 3.1.0
info: { title: t, version: '1' }
paths:
  /x:
    post:
      operationId: send
      requestBody:
        content:
${types}
      responses: { '204': { description: ok } }
`;
  it.each([
    [
      'application/json + xml prefer JSON',
      `          application/xml: { schema: { type: object } }\n          application/json: { schema: { type: object } }`,
      'application/json',
    ],
    ['vendor +json counts as JSON', `          application/vnd.api+json: { schema: { type: object } }`, 'application/vnd.api+json'],
    [
      'form before multipart',
      `          multipart/form-data: { schema: { type: object } }\n          application/x-www-form-urlencoded: { schema: { type: object } }`,
      'application/x-www-form-urlencoded',
    ],
    ['text/plain', `          text/plain: { schema: { type: string } }`, 'text/plain'],
    ['octet-stream', `          application/octet-stream: { schema: { type: string, format: binary } }`, 'application/octet-stream'],
  ])('%s', (_name, types, want) => {
    const [t] = tools(body(types), '3.1');
    expect(t!.body?.contentType).toBe(want);
    expect(t!.body?.required).toBe(false);
  });
});

describe('file arguments', () => {
  const spec = `openapi: 3.1.0
info: { title: t, version: '1' }
paths:
  /docs:
    post:
      operationId: addDocs
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                title: { type: string }
                file: { type: string, format: binary, description: The document. }
                attachments: { type: array, items: { type: string, contentMediaType: application/pdf } }
      responses: { '204': { description: ok } }
  /raw:
    put:
      operationId: putRaw
      requestBody:
        content:
          application/octet-stream: { schema: { type: string, format: binary } }
      responses: { '204': { description: ok } }
`;
  it('marks multipart file fields and binary bodies, with base64 schemas', () => {
    const [docs, raw] = tools(spec, '3.1');
    expect(docs!.body).toMatchObject({ files: ['file', 'attachments'] });
    const props = (docs!.inputSchema.properties as Record<string, { properties: Record<string, unknown> }>).body!.properties;
    expect(props.title).toEqual({ type: 'string' });
    expect(props.file).toEqual({ type: 'string', contentEncoding: 'base64', description: 'The document. (base64-encoded)' });
    expect(props.attachments).toEqual({ type: 'array', items: { type: 'string', contentEncoding: 'base64', description: 'File content, base64-encoded.' } });
    expect(raw!.body).toMatchObject({ binary: true, contentType: 'application/octet-stream' });
    expect((raw!.inputSchema.properties as Record<string, unknown>).body).toEqual({
      type: 'string',
      contentEncoding: 'base64',
      description: 'File content, base64-encoded.',
    });
  });

  it('also accepts { path } when the manifest enables local files', () => {
    const [docs] = tools(spec, '3.1', true);
    const file = (docs!.inputSchema.properties as Record<string, { properties: Record<string, { anyOf?: Array<Record<string, unknown>> }> }>).body!.properties
      .file!;
    expect(file.anyOf!.map((a) => a.type)).toEqual(['string', 'object']);
    expect(file.anyOf![1]!.required).toEqual(['path']);
  });
});

import { describe, expect, it } from 'vitest';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { validateManifest } from '../../src/manifest/validate.js';
import { parseYamlSource } from '../../src/source/source.js';
import { irFromText } from '../helpers/ir.js';

const SPEC = `openapi: 3.0.3
info: { title: t, version: '1' }
servers: [{ url: 'https://api.example.com' }]
paths:
  /accounts/{account}/pets:
    parameters: [{ name: account, in: path, required: true, schema: { type: string } }]
    get:
      operationId: listPets
      parameters:
        - { name: token, in: query, required: true, schema: { type: string } }
        - { name: limit, in: query, required: true, description: Page size., schema: { type: integer } }
        - { name: q, in: query, schema: { type: string } }
        - { name: __proto__, in: header, schema: { type: string } }
      responses: { '200': { description: ok } }
    post:
      operationId: createPet
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, properties: { name: { type: string } } } } }
      responses: { '201': { description: ok } }
`;

function setup(manifestYaml: string) {
  const { ir, diagnostics } = irFromText({ spec: SPEC, version: '3.0', manifestYaml });
  return { ir, diagnostics, tool: (name: string) => ir.tools.find((t) => t.name === name)! };
}

/** [code, line, col, pointer, message, help] of every diagnostic, sorted. */
const rows = (d: Diagnostics) => d.sorted().map((x) => [x.code, x.location.line, x.location.col, x.location.pointer, x.message, x.help]);

describe('argument overrides', () => {
  it('hides, fills, defaults, describes and renames arguments; the request mapping keeps the wire names', () => {
    const { ir, diagnostics, tool } = setup(`overrides:
  listPets:
    arguments:
      account: { hidden: true, env: ACME_ACCOUNT }
      token: { hidden: true, value: { nested: [1, "two"] } }
      limit: { default: 25, description: How many pets. }
      q: { name: search }
      __proto__: { hidden: true, value: proto-header }
  createPet:
    arguments:
      body: { name: pet }
`);
    expect(diagnostics.items).toStrictEqual([]);
    const list = tool('listPets');
    expect(list.inputSchema).toStrictEqual({
      type: 'object',
      properties: {
        limit: { type: 'integer', description: 'How many pets.', default: 25 },
        search: { type: 'string' },
      },
      additionalProperties: false,
    });
    expect(list.params).toStrictEqual([
      {
        kind: 'param',
        arg: 'account',
        name: 'account',
        in: 'path',
        required: true,
        fixed: { env: 'ACME_ACCOUNT' },
        origin: { file: 'openapi.yaml', pointer: '/paths/~1accounts~1{account}~1pets/parameters/0' },
      },
      {
        kind: 'param',
        arg: 'token',
        name: 'token',
        in: 'query',
        required: true,
        fixed: { value: { nested: [1, 'two'] } },
        origin: { file: 'openapi.yaml', pointer: '/paths/~1accounts~1{account}~1pets/get/parameters/0' },
      },
      {
        kind: 'param',
        arg: 'limit',
        name: 'limit',
        in: 'query',
        required: true,
        default: 25,
        origin: { file: 'openapi.yaml', pointer: '/paths/~1accounts~1{account}~1pets/get/parameters/1' },
      },
      {
        kind: 'param',
        arg: 'search',
        name: 'q',
        in: 'query',
        required: false,
        origin: { file: 'openapi.yaml', pointer: '/paths/~1accounts~1{account}~1pets/get/parameters/2' },
      },
      {
        kind: 'param',
        arg: '__proto__',
        name: '__proto__',
        in: 'header',
        required: false,
        fixed: { value: 'proto-header' },
        origin: { file: 'openapi.yaml', pointer: '/paths/~1accounts~1{account}~1pets/get/parameters/3' },
      },
    ]);
    const create = tool('createPet');
    expect(create.inputSchema.required).toStrictEqual(['account', 'pet']);
    expect(Object.keys(create.inputSchema.properties as object)).toStrictEqual(['account', 'pet']);
    expect(create.body).toMatchObject({ arg: 'pet', contentType: 'application/json' });
    expect(ir.tools.map((t) => t.name)).toStrictEqual(['listPets', 'createPet']);
  });

  it('keeps an argument named __proto__ as a property, and hides a whole body', () => {
    const { diagnostics, tool } = setup(`overrides:
  listPets:
    arguments:
      __proto__: { description: A header. }
  createPet:
    arguments:
      body: { hidden: true, value: { name: Rex } }
`);
    expect(diagnostics.items).toStrictEqual([]);
    const props = tool('listPets').inputSchema.properties as Record<string, unknown>;
    expect(Object.hasOwn(props, '__proto__')).toBe(true);
    // a header parameter: mirrored as Mcp-Param-__proto__ (SEP-2243 x-mcp-header)
    expect(JSON.stringify(props)).toContain('"__proto__":{"type":"string","x-mcp-header":"__proto__","description":"A header."}');
    const create = tool('createPet');
    expect(create.inputSchema).toStrictEqual({
      type: 'object',
      properties: { account: { type: 'string' } },
      required: ['account'],
      additionalProperties: false,
    });
    expect(create.body?.fixed).toStrictEqual({ value: { name: 'Rex' } });
  });

  it('reports every inconsistent override, located, with a fix', () => {
    const { diagnostics } = setup(`overrides:
  listPets:
    arguments:
      tokn: { hidden: true, value: x }
      token: { hidden: true }
      limit: { hidden: true, value: 1, env: LIMIT, default: 2 }
      q: { value: fixed, name: limit }
      account: { hidden: true, env: X_BASE_URL }
  createPet:
    arguments:
      body: { default: .inf }
      account: { name: body }
`);
    expect(rows(diagnostics)).toStrictEqual([
      ['MCPGEN_UNKNOWN_ARGUMENT', 4, 7, '/overrides/listPets/arguments/tokn', 'GET /accounts/{account}/pets has no argument "tokn"', 'did you mean "token"?'],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        5,
        16,
        '/overrides/listPets/arguments/token/hidden',
        'hidden argument "token" of GET /accounts/{account}/pets has neither `value` nor `env`, so the server has nothing to send',
        'add `value: <constant>`, or `env: <VARIABLE>` to read it from the environment',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        6,
        40,
        '/overrides/listPets/arguments/limit/env',
        'hidden argument "limit" of GET /accounts/{account}/pets gives both `value` and `env`',
        'keep one: `value` for a constant, `env` for a value read from the environment',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        6,
        52,
        '/overrides/listPets/arguments/limit/default',
        '`default` does not apply to argument "limit" of GET /accounts/{account}/pets, which is hidden from the model',
        'remove `default`',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        7,
        12,
        '/overrides/listPets/arguments/q/value',
        '`value` of argument "q" of GET /accounts/{account}/pets applies only to a hidden argument',
        'add `hidden: true`, or use `default` for a value the model may change',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        7,
        32,
        '/overrides/listPets/arguments/q/name',
        'cannot rename argument "q" of GET /accounts/{account}/pets to "limit": argument "limit" has that name',
        'choose another name, or rename that argument too',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        8,
        37,
        '/overrides/listPets/arguments/account/env',
        "X_BASE_URL is one of the server's own settings variables and cannot hold an argument",
        'choose another variable name',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        11,
        24,
        '/overrides/createPet/arguments/body/default',
        '`default` of argument "body" of POST /accounts/{account}/pets is not a JSON value',
        'use a string, a finite number, a boolean, null, or lists and mappings of those',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        12,
        24,
        '/overrides/createPet/arguments/account/name',
        'cannot rename argument "account" of POST /accounts/{account}/pets to "body": argument "body" has that name',
        'choose another name, or rename that argument too',
      ],
    ]);
  });

  it('checks variable and argument names also when the schema did not run', () => {
    const { diagnostics } = setup(`overrides:
  listPets:
    arguments:
      token: { hidden: true, env: acme-token }
      q: { name: "two words" }
`);
    expect(rows(diagnostics).map((r) => r.slice(0, 5))).toStrictEqual([
      ['MCPGEN_ARGUMENT_OVERRIDE_INVALID', 4, 35, '/overrides/listPets/arguments/token/env', '"acme-token" is not a legal environment variable name'],
      ['MCPGEN_ARGUMENT_OVERRIDE_INVALID', 5, 18, '/overrides/listPets/arguments/q/name', '"two words" is not a legal argument name'],
    ]);
  });

  it('header: mirrors a primitive argument as Mcp-Param-<header>; refuses other types, clashes and hidden arguments', () => {
    const ok = setup(`overrides:
  listPets:
    arguments:
      limit: { header: Page-Size }
`);
    expect(ok.diagnostics.items).toStrictEqual([]);
    const props = ok.tool('listPets').inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.limit).toStrictEqual({ type: 'integer', description: 'Page size.', 'x-mcp-header': 'Page-Size' });
    expect(props.token!['x-mcp-header']).toBeUndefined();
    const bad = setup(`overrides:
  listPets:
    arguments:
      limit: { header: __PROTO__ }
      token: { hidden: true, value: t, header: Token }
  createPet:
    arguments:
      body: { header: Pet }
`);
    expect(rows(bad.diagnostics).map((r) => [r[0], r[3], r[4]])).toStrictEqual([
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        '/overrides/listPets/arguments/limit/header',
        'argument "limit" of GET /accounts/{account}/pets cannot be mirrored as the Mcp-Param-__PROTO__ header: argument "__proto__" is mirrored as __proto__',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        '/overrides/listPets/arguments/token/header',
        '`header` does not apply to argument "token" of GET /accounts/{account}/pets, which is hidden from the model',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        '/overrides/createPet/arguments/body/header',
        'argument "body" of POST /accounts/{account}/pets cannot be mirrored as the Mcp-Param-Pet header: its schema\'s type is "object"',
      ],
    ]);
  });

  it('the manifest schema rejects an illegal variable or argument name at the value', () => {
    const diagnostics = new Diagnostics();
    const source = parseYamlSource({
      file: 'mcpgen.yaml',
      text: 'name: x\nopenapi: ./o.yaml\noverrides:\n  listPets:\n    arguments:\n      token: { hidden: true, env: acme-token }\n      q: { name: "a b", hiden: true }\n',
      diagnostics,
      syntaxCode: 'MCPGEN_MANIFEST_SYNTAX',
    })!;
    expect(validateManifest(source, diagnostics)).toBe(false);
    expect(diagnostics.sorted().map((d) => [d.code, d.location.line, d.location.pointer])).toStrictEqual([
      ['MCPGEN_MANIFEST_INVALID', 6, '/overrides/listPets/arguments/token/env'],
      ['MCPGEN_MANIFEST_INVALID', 7, '/overrides/listPets/arguments/q/name'],
      ['MCPGEN_MANIFEST_UNKNOWN_KEY', 7, '/overrides/listPets/arguments/q/hiden'],
    ]);
  });
});

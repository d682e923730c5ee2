import { describe, expect, it } from 'vitest';
import { Diagnostics } from '../../src/core/diagnostics.js';
import type { BuildManifest } from '../../src/ir/build.js';
import { validateManifest } from '../../src/manifest/validate.js';
import { parseYamlSource } from '../../src/source/source.js';
import { irFromText } from '../helpers/ir.js';

const SPEC = `openapi: 3.0.3
info: { title: t, version: '1' }
servers: [{ url: 'https://api.example.com' }]
paths:
  /pets:
    get:
      operationId: listPets
      tags: [pets]
      parameters:
        - { name: token, in: query, required: true, description: Auth token., schema: { type: string } }
        - { name: limit, in: query, required: true, schema: { type: integer } }
        - { name: channel, in: query, schema: { type: string } }
      responses: { '200': { description: ok } }
    post:
      operationId: createPet
      tags: [pets]
      parameters:
        - { name: token, in: header, required: true, schema: { type: string } }
      requestBody:
        required: true
        content: { application/json: { schema: { type: object, properties: { name: { type: string } } } } }
      responses: { '201': { description: ok } }
  /pets/{petId}:
    delete:
      operationId: deletePet
      tags: [admin]
      parameters:
        - { name: petId, in: path, required: true, schema: { type: string } }
        - { name: token, in: query, schema: { type: string } }
        - { name: conversation, in: query, schema: { type: string } }
        - { name: channel, in: query, schema: { type: string } }
      responses: { '204': { description: gone } }
  /notes:
    post:
      operationId: addNote
      tags: [notes]
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded:
            schema: { type: object, properties: { token: { type: string, description: Auth token. }, text: { type: string } }, required: [token, text] }
      responses: { '200': { description: ok } }
  /stores:
    get:
      operationId: listStores
      tags: [stores]
      parameters:
        - { name: limit, in: query, schema: { type: integer } }
      responses: { '200': { description: ok } }
`;

function setup(manifestYaml: string) {
  const { ir, diagnostics } = irFromText({
    spec: SPEC,
    version: '3.0',
    manifestYaml,
    fromYaml: ({ arguments: argumentRules, ...rest }) => ({
      ...rest,
      ...(argumentRules ? { argumentRules: argumentRules as BuildManifest['argumentRules'] } : {}),
    }),
  });
  return { ir, diagnostics, tool: (name: string) => ir.tools.find((t) => t.name === name)! };
}

/** [code, severity, line, col, pointer, message, help] of every diagnostic, sorted. */
const rows = (d: Diagnostics) => d.sorted().map((x) => [x.code, x.severity, x.location.line, x.location.col, x.location.pointer, x.message, x.help]);
const props = (schema: Record<string, unknown>) => Object.keys(schema.properties as object);
const param = (ir: ReturnType<typeof setup>, tool: string, name: string) => ir.tool(tool).params.find((p) => p.name === name);

describe('argument rules', () => {
  it('one rule hides an argument on every tool that has it, and leaves the others alone', () => {
    const b = setup('arguments:\n  - name: token\n    hidden: true\n    env: ACME_TOKEN\n');
    expect(b.diagnostics.items).toStrictEqual([]);
    for (const name of ['listPets', 'createPet', 'deletePet']) {
      const t = b.tool(name);
      expect(props(t.inputSchema), name).not.toContain('token');
      expect((t.inputSchema.required as string[] | undefined) ?? [], name).not.toContain('token');
      expect(JSON.stringify(t.inputSchema), name).not.toContain('token');
      expect(param(b, name, 'token'), name).toMatchObject({ arg: 'token', fixed: { env: 'ACME_TOKEN' } });
    }
    expect(b.tool('listPets').inputSchema.required).toStrictEqual(['limit']);
    expect(b.tool('listStores').inputSchema).toStrictEqual({ type: 'object', properties: { limit: { type: 'integer' } }, additionalProperties: false });
    // a form field of that name too: gone from the body's schema, set by the server
    const note = b.tool('addNote');
    expect(note.inputSchema.properties).toStrictEqual({ body: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } });
    expect(note.body!.fields).toStrictEqual([{ name: 'token', fixed: { env: 'ACME_TOKEN' } }]);
    expect(b.ir.argumentRules).toStrictEqual([
      { index: 0, name: 'token', sets: ['hidden'], fill: { env: 'ACME_TOKEN' }, tools: ['listPets', 'createPet', 'deletePet', 'addNote'] },
    ]);
  });

  it('match selects by operationId, path, method and tag; `as` renames, `default` and `description` publish', () => {
    const b = setup(`arguments:
  - match: { operationId: [listPets] }
    name: channel
    as: conversation
  - match: { path: /pets, method: get }
    name: limit
    default: 100
  - match: { tag: stores }
    name: limit
    description: Page size.
`);
    expect(b.diagnostics.items).toStrictEqual([]);
    const list = b.tool('listPets');
    expect(list.inputSchema.properties).toStrictEqual({
      token: { type: 'string', description: 'Auth token.' },
      limit: { type: 'integer', default: 100 },
      conversation: { type: 'string' },
    });
    expect(list.inputSchema.required).toStrictEqual(['token']);
    expect(param(b, 'listPets', 'channel')).toMatchObject({ arg: 'conversation', name: 'channel', in: 'query' });
    expect(param(b, 'listPets', 'limit')).toMatchObject({ arg: 'limit', default: 100 });
    // deletePet has a `channel` too, outside the match: unchanged
    expect(param(b, 'deletePet', 'channel')).toMatchObject({ arg: 'channel' });
    expect(b.tool('listStores').inputSchema.properties).toStrictEqual({ limit: { type: 'integer', description: 'Page size.' } });
    expect(b.ir.argumentRules!.map((r) => [r.index, r.sets, r.as, r.tools])).toStrictEqual([
      [0, ['as'], 'conversation', ['listPets']],
      [1, ['default'], undefined, ['listPets']],
      [2, ['description'], undefined, ['listStores']],
    ]);
  });

  it("a tool's own override wins over rules, field by field", () => {
    const b = setup(`arguments:
  - name: token
    hidden: true
    env: ACME_TOKEN
  - name: limit
    default: 100
    description: How many.
overrides:
  createPet:
    arguments:
      token: { hidden: true, value: fixed-for-create }
  deletePet:
    arguments:
      token: { hidden: false, description: Only here the model sends it. }
  listStores:
    arguments:
      limit: { default: 5 }
`);
    expect(rows(b.diagnostics)).toStrictEqual([]);
    expect(param(b, 'listPets', 'token')!.fixed).toStrictEqual({ env: 'ACME_TOKEN' });
    expect(param(b, 'createPet', 'token')!.fixed).toStrictEqual({ value: 'fixed-for-create' });
    expect(param(b, 'deletePet', 'token')!.fixed).toBeUndefined();
    expect((b.tool('deletePet').inputSchema.properties as Record<string, unknown>).token).toStrictEqual({
      type: 'string',
      description: 'Only here the model sends it.',
    });
    expect((b.tool('listStores').inputSchema.properties as Record<string, unknown>).limit).toStrictEqual({
      type: 'integer',
      description: 'How many.',
      default: 5,
    });
    expect(b.ir.argumentRules!.map((r) => r.tools)).toStrictEqual([
      ['listPets', 'addNote'],
      ['listPets', 'listStores'],
    ]);
  });

  it('reports a rule that changes no tool, with a suggestion that clears it', () => {
    const b = setup(`arguments:
  - name: tokn
    hidden: true
    value: x
  - match: { tag: stores }
    name: token
    hidden: true
    value: x
  - match: { path: /nowhere/** }
    name: limit
    default: 1
`);
    expect(rows(b.diagnostics)).toStrictEqual([
      [
        'MCPGEN_ARGUMENT_RULE_UNMATCHED',
        'warning',
        2,
        11,
        '/arguments/0/name',
        'argument rule arguments[0] applies to no tool: none of the tools it matches has an argument "tokn"',
        'did you mean "token"?',
      ],
      [
        'MCPGEN_ARGUMENT_RULE_UNMATCHED',
        'warning',
        6,
        11,
        '/arguments/1/name',
        'argument rule arguments[1] applies to no tool: none of the tools it matches has an argument "token"',
        "arguments are named as generated (the names in a tool's input schema, `body` for a request body): fix `name` or `match`, or remove the rule",
      ],
      [
        'MCPGEN_ARGUMENT_RULE_UNMATCHED',
        'warning',
        9,
        5,
        '/arguments/2/match',
        'argument rule arguments[2] (argument "limit") applies to no tool: its `match` selects none of the server\'s tools',
        'widen `match` (it takes the fields of an `include` selector; the operations `include`/`exclude` leave out are not tools), or remove the rule',
      ],
      [
        'MCPGEN_UNMATCHED_PATH',
        'warning',
        9,
        20,
        '/arguments/2/match/path',
        'arguments[2].match path glob "/nowhere/**" matches no operation',
        '`*` matches within one path segment, `**` across segments; paths start with `/`',
      ],
    ]);
  });

  it('two rules setting one field of one argument on a tool are an error naming both, once per pair', () => {
    const b = setup(`arguments:
  - name: limit
    default: 10
  - match: { tag: stores }
    name: limit
    default: 20
  - name: token
    hidden: true
    env: ACME_TOKEN
  - match: { method: delete }
    name: token
    description: The token.
  - match: { tag: pets }
    name: limit
    description: Page size.
`);
    expect(rows(b.diagnostics)).toStrictEqual([
      [
        'MCPGEN_ARGUMENT_RULE_CONFLICT',
        'error',
        6,
        5,
        '/arguments/1/default',
        'argument rules arguments[0] (line 2) and arguments[1] both set `default` of argument "limit" on 1 tool: listStores',
        "set each field of an argument in one rule: narrow one rule's `match` so they do not overlap, or give the tools that need something else `overrides.<operation>.arguments`",
      ],
      [
        'MCPGEN_ARGUMENT_RULE_CONFLICT',
        'error',
        12,
        5,
        '/arguments/3/description',
        'argument rules arguments[2] (line 7) and arguments[3] both set `description` of argument "token" (arguments[2] hides it) on 1 tool: deletePet',
        "set each field of an argument in one rule: narrow one rule's `match` so they do not overlap, or give the tools that need something else `overrides.<operation>.arguments`",
      ],
    ]);
    // arguments[4] sets another field of `limit` than arguments[0]: no conflict, both apply
    expect((b.tool('listPets').inputSchema.properties as Record<string, unknown>).limit).toStrictEqual({
      type: 'integer',
      description: 'Page size.',
      default: 10,
    });
  });

  it('checks each rule once, where it is written, and the tool-level problems where their fields are', () => {
    const b = setup(`arguments:
  - name: token
    hidden: true
  - name: limit
    value: 3
  - name: token
    hidden: true
    env: X_BASE_URL
  - name: limit
  - match: { operationId: listPet }
    name: limit
    default: 1
  - match: { operationId: deletePet }
    name: channel
    as: conversation
  - name: token
    hidden: true
    value: t
overrides:
  listPets:
    arguments:
      token: { description: Shown? }
`);
    expect(rows(b.diagnostics).map((r) => r.slice(0, 6))).toStrictEqual([
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        'error',
        3,
        5,
        '/arguments/0/hidden',
        'hidden argument "token" of arguments[0] has neither `value` nor `env`, so the server has nothing to send',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        'error',
        5,
        5,
        '/arguments/1/value',
        '`value` of argument "limit" of arguments[1] applies only to a hidden argument',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        'error',
        8,
        10,
        '/arguments/2/env',
        "X_BASE_URL is one of the server's own settings variables and cannot hold an argument",
      ],
      ['MCPGEN_ARGUMENT_OVERRIDE_INVALID', 'error', 9, 5, '/arguments/3', 'argument rule arguments[3] changes nothing about argument "limit"'],
      [
        'MCPGEN_UNKNOWN_OPERATION',
        'error',
        10,
        27,
        '/arguments/4/match/operationId',
        'arguments[4].match names operationId "listPet", which the spec does not have',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        'error',
        15,
        9,
        '/arguments/5/as',
        'cannot rename argument "channel" of DELETE /pets/{petId} to "conversation": argument "conversation" has that name',
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        'error',
        22,
        16,
        '/overrides/listPets/arguments/token/description',
        '`description` does not apply to argument "token" of GET /pets, which is hidden from the model',
      ],
    ]);
  });

  it('the manifest schema knows `arguments`: `name` is required, fields are checked', () => {
    const diagnostics = new Diagnostics();
    const source = parseYamlSource({
      file: 'mcpgen.yaml',
      text: 'name: x\nopenapi: ./o.yaml\narguments:\n  - hidden: true\n    env: T\n  - name: q\n    as: "a b"\n    match: { tags: x }\n',
      diagnostics,
      syntaxCode: 'MCPGEN_MANIFEST_SYNTAX',
    })!;
    expect(validateManifest(source, diagnostics)).toBe(false);
    expect(diagnostics.sorted().map((d) => [d.code, d.location.line, d.location.pointer])).toStrictEqual([
      ['MCPGEN_MANIFEST_INVALID', 4, '/arguments/0'],
      ['MCPGEN_MANIFEST_INVALID', 7, '/arguments/1/as'],
      ['MCPGEN_MANIFEST_UNKNOWN_KEY', 8, '/arguments/1/match/tags'],
    ]);
  });
});

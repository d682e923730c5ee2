import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { type Diagnostic, Diagnostics } from '../../../src/core/diagnostics.js';
import { loadManifest } from '../../../src/manifest/load.js';
import { validateManifest } from '../../../src/manifest/validate.js';
import { parseYamlSource } from '../../../src/source/source.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const FIXTURES = 'test/fixtures/bad-manifests';

/** [line, col, code, pointer, message, help] — compact and exact. */
type Row = [number, number, string, string, string, string];
const rows = (list: Diagnostic[]): Row[] => list.map((d) => [d.location.line, d.location.col, d.code, d.location.pointer, d.message, d.help]);

function validate(text: string): { valid: boolean; rows: Row[]; items: Diagnostic[] } {
  const diagnostics = new Diagnostics();
  const source = parseYamlSource({ file: 'mcpgen.yaml', text, diagnostics, syntaxCode: 'MCPGEN_MANIFEST_SYNTAX' });
  if (!source) throw new Error(`syntax errors: ${JSON.stringify(diagnostics.items)}`);
  const valid = validateManifest(source, diagnostics);
  return { valid, rows: rows(diagnostics.items), items: diagnostics.items };
}

const BASE = 'name: petstore\nopenapi: ./petstore.yaml\n';
const DESC = {
  maxToolNameLength:
    'Longest tool name to emit, 1–128. Defaults to 64. Lower it to leave room for client prefixes such as `mcp__server__` (Claude Code counts the whole prefixed name against 64).',
  include: 'Which operations become tools. An operation is included when it matches at least one selector. Omit to include every operation.',
  name: 'Name of the generated server: its npm package name, its bin name and the `serverInfo.name` it reports. Lower case letters, digits, `-`, `_` and `.`; starts with a letter or digit.',
  tag: 'Tag name(s) the operation carries.',
};

describe('fixtures', () => {
  async function load(name: string) {
    const diagnostics = new Diagnostics();
    const loaded = await loadManifest(`${FIXTURES}/${name}/mcpgen.yaml`, diagnostics, { cwd: ROOT });
    return { loaded, items: diagnostics.items };
  }

  test('unknown-key: top level and inside an override, located at the key, with a suggestion', async () => {
    const { loaded, items } = await load('unknown-key');
    expect(loaded?.valid).toBe(false);
    expect(items).toStrictEqual([
      {
        code: 'MCPGEN_MANIFEST_UNKNOWN_KEY',
        severity: 'error',
        message: 'unknown key "nmae"',
        help: 'did you mean "name"?',
        location: { file: `${FIXTURES}/unknown-key/mcpgen.yaml`, pointer: '/nmae', line: 3, col: 1 },
      },
      {
        code: 'MCPGEN_MANIFEST_UNKNOWN_KEY',
        severity: 'error',
        message: 'unknown key "nmae"',
        help: 'did you mean "name"?',
        location: { file: `${FIXTURES}/unknown-key/mcpgen.yaml`, pointer: '/overrides/listPets/nmae', line: 6, col: 5 },
      },
    ]);
  });

  test('wrong-type: both problems at once, at the values', async () => {
    const { loaded, items } = await load('wrong-type');
    expect(loaded?.valid).toBe(false);
    expect(rows(items)).toStrictEqual([
      [3, 20, 'MCPGEN_MANIFEST_INVALID', '/maxToolNameLength', '"maxToolNameLength" must be integer, got string "abc"', DESC.maxToolNameLength],
      [4, 10, 'MCPGEN_MANIFEST_INVALID', '/include', '"include" must be array, got string "tag-string-not-list"', DESC.include],
    ]);
  });

  test('missing-required: located at the parent object', async () => {
    const { loaded, items } = await load('missing-required');
    expect(loaded?.valid).toBe(false);
    expect(rows(items)).toStrictEqual([
      [
        2,
        1,
        'MCPGEN_MANIFEST_INVALID',
        '',
        'missing required key "openapi"',
        'add `openapi:`. Path of the OpenAPI description (Swagger 2.0, OpenAPI 3.0 or 3.1; YAML or JSON), relative to this manifest.',
      ],
    ]);
  });

  test('syntax-error: no manifest, one positioned syntax diagnostic', async () => {
    const { loaded, items } = await load('syntax-error');
    expect(loaded).toBeUndefined();
    expect(rows(items)).toStrictEqual([
      [
        6,
        4,
        'MCPGEN_MANIFEST_SYNTAX',
        '',
        'all mapping items must start at the same column',
        'check the indentation: entries of one mapping or list must start in the same column',
      ],
    ]);
  });
});

describe('validateManifest', () => {
  test('a valid manifest', () => {
    expect(validate(`${BASE}include:\n  - tag: pets\n    method: [get, post]\noverrides:\n  listPets:\n    name: list_pets\n`)).toStrictEqual({
      valid: true,
      rows: [],
      items: [],
    });
  });

  test('an unknown key without a near match lists the allowed keys', () => {
    expect(validate(`${BASE}include:\n  - colour: red\n`).rows).toStrictEqual([
      [4, 5, 'MCPGEN_MANIFEST_UNKNOWN_KEY', '/include/0/colour', 'unknown key "colour"', 'allowed keys: tag, operationId, path, method, deprecated'],
    ]);
  });

  test('case-insensitive and transposition typos', () => {
    expect(validate(`${BASE}overrides:\n  x:\n    annotations:\n      readonlyhint: true\n      destrutciveHint: true\n`).rows).toStrictEqual([
      [6, 7, 'MCPGEN_MANIFEST_UNKNOWN_KEY', '/overrides/x/annotations/readonlyhint', 'unknown key "readonlyhint"', 'did you mean "readOnlyHint"?'],
      [7, 7, 'MCPGEN_MANIFEST_UNKNOWN_KEY', '/overrides/x/annotations/destrutciveHint', 'unknown key "destrutciveHint"', 'did you mean "destructiveHint"?'],
    ]);
  });

  test('a typo of a required key is reported once', () => {
    expect(validate('nmae: petstore\nopenapi: ./petstore.yaml\n').rows).toStrictEqual([
      [1, 1, 'MCPGEN_MANIFEST_UNKNOWN_KEY', '/nmae', 'unknown key "nmae"', 'did you mean "name"?'],
    ]);
  });

  test('pattern: the property description is the help', () => {
    expect(validate('name: My Server\nopenapi: x.yaml\n').rows).toStrictEqual([
      [1, 7, 'MCPGEN_MANIFEST_INVALID', '/name', '"name" must match the pattern ^[a-z0-9][a-z0-9._-]*$, got string "My Server"', DESC.name],
    ]);
  });

  test('anyOf collapses to one diagnostic', () => {
    expect(validate(`${BASE}include:\n  - tag: 5\n  - method: 7\n`).rows).toStrictEqual([
      [4, 10, 'MCPGEN_MANIFEST_INVALID', '/include/0/tag', '"include[0].tag" must be a string or a list of strings, got number 5', DESC.tag],
      [
        5,
        13,
        'MCPGEN_MANIFEST_INVALID',
        '/include/1/method',
        '"include[1].method" must be one of "get", "put", "post", "delete", "options", "head", "patch", "trace", or a list of them, got number 7',
        'HTTP method(s), lower case.',
      ],
    ]);
  });

  test('anyOf: when the type fits one alternative, its precise error is reported', () => {
    expect(validate(`${BASE}include:\n  - tag: ""\n  - method: GET\n  - method: [get, fetch]\n  - path: []\n`).rows).toStrictEqual([
      [4, 10, 'MCPGEN_MANIFEST_INVALID', '/include/0/tag', '"include[0].tag" must not be empty', DESC.tag],
      [
        5,
        13,
        'MCPGEN_MANIFEST_INVALID',
        '/include/1/method',
        '"include[1].method" must be one of "get", "put", "post", "delete", "options", "head", "patch", "trace", got string "GET"',
        'did you mean "get"?',
      ],
      [
        6,
        19,
        'MCPGEN_MANIFEST_INVALID',
        '/include/2/method/1',
        '"include[2].method[1]" must be one of "get", "put", "post", "delete", "options", "head", "patch", "trace", got string "fetch"',
        'did you mean "patch"?',
      ],
      [
        7,
        11,
        'MCPGEN_MANIFEST_INVALID',
        '/include/3/path',
        '"include[3].path" must not be an empty list',
        'Path glob(s) over the path template, e.g. `/pets/**` or `/store/*`: `*` matches within one segment, `**` across segments. Braces are literal, so `/pets/{petId}` matches that template.',
      ],
    ]);
  });

  test('ranges, empty selectors, duplicates, quoted numbers, nested types', () => {
    const text = `${BASE}maxToolNameLength: 500\ntimeoutMs: "5000"\nallowRemoteRefs: [https://a/, https://a/]\ninclude:\n  - {}\noverrides:\n  GET /pets:\n    annotations:\n      readOnlyHint: "yes"\n`;
    expect(validate(text).rows).toStrictEqual([
      [3, 20, 'MCPGEN_MANIFEST_INVALID', '/maxToolNameLength', '"maxToolNameLength" must be at most 128, got 500', DESC.maxToolNameLength],
      [4, 12, 'MCPGEN_MANIFEST_INVALID', '/timeoutMs', '"timeoutMs" must be integer, got string "5000"', 'remove the quotes: 5000'],
      [5, 31, 'MCPGEN_MANIFEST_INVALID', '/allowRemoteRefs/1', '"allowRemoteRefs" lists "https://a/" more than once', 'remove the repeated entry'],
      [7, 5, 'MCPGEN_MANIFEST_INVALID', '/include/0', '"include[0]" must not be empty', 'give at least one of: tag, operationId, path, method, deprecated'],
      [
        11,
        21,
        'MCPGEN_MANIFEST_INVALID',
        '/overrides/GET ~1pets/annotations/readOnlyHint',
        '"overrides[GET /pets].annotations.readOnlyHint" must be boolean, got string "yes"',
        'The tool does not modify its environment.',
      ],
    ]);
  });

  test('an empty manifest or a non-mapping root', () => {
    const help = 'the manifest is a YAML mapping; it needs at least `name:` and `openapi:`';
    expect(validate('# nothing yet\n').rows).toStrictEqual([[1, 1, 'MCPGEN_MANIFEST_INVALID', '', 'the manifest is empty', help]]);
    expect(validate('- a\n').rows).toStrictEqual([[1, 1, 'MCPGEN_MANIFEST_INVALID', '', 'the manifest must be object, got array', help]]);
  });

  test('every diagnostic at once, ordered by position', () => {
    const { rows: r } = validate('openapi: 5\nname: A\nzzz: 1\n');
    expect(r.map(([line, col, code]) => [line, col, code])).toStrictEqual([
      [1, 10, 'MCPGEN_MANIFEST_INVALID'],
      [2, 7, 'MCPGEN_MANIFEST_INVALID'],
      [3, 1, 'MCPGEN_MANIFEST_UNKNOWN_KEY'],
    ]);
  });

  test('auth: variable names, https token URLs and known fields only', () => {
    expect(
      validate(
        `${BASE}auth:\n  api_key: { env: PETSTORE_KEY }\n  oauth: { clientId: ID, clientSecret: _SECRET, tokenUrl: 'https://a.example.com/t', scopes: [read] }\n`,
      ).valid,
    ).toBe(true);
    const { rows: r } = validate(`${BASE}auth:\n  bearer:\n    env: my_token\n    usrname: X\n  oauth:\n    tokenUrl: http://a.example.com/t\n  basic: 7\n`);
    expect(r.map(([line, col, code, pointer]) => [line, col, code, pointer])).toStrictEqual([
      [5, 10, 'MCPGEN_MANIFEST_INVALID', '/auth/bearer/env'],
      [6, 5, 'MCPGEN_MANIFEST_UNKNOWN_KEY', '/auth/bearer/usrname'],
      [8, 15, 'MCPGEN_MANIFEST_INVALID', '/auth/oauth/tokenUrl'],
      [9, 10, 'MCPGEN_MANIFEST_INVALID', '/auth/basic'],
    ]);
    expect(r[1]![5]).toBe('did you mean "username"?');
  });
});

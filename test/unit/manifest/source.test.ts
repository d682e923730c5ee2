import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { type Diagnostic, Diagnostics, pointer } from '../../../src/core/diagnostics.js';
import { parseYamlSource, type YamlSource } from '../../../src/source/source.js';
import { corpusSpec } from '../../helpers/corpus.js';

function parse(text: string, file = 'doc.yaml'): { source: YamlSource | undefined; diagnostics: Diagnostic[] } {
  const diagnostics = new Diagnostics();
  const source = parseYamlSource({ file, text, diagnostics, syntaxCode: 'MCPGEN_SPEC_SYNTAX' });
  return { source, diagnostics: diagnostics.items };
}

function must(text: string, file?: string): YamlSource {
  const { source, diagnostics } = parse(text, file);
  expect(diagnostics).toStrictEqual([]);
  if (!source) throw new Error('expected a source');
  return source;
}

const pos = (s: YamlSource, ptr: string, key = false) => {
  const l = s.locate(ptr, key ? { key: true } : undefined);
  return [l.line, l.col];
};

const YAML = `# leading comment
openapi: 3.1.0
paths:
  /pets/{petId}:
    get:
      operationId: getPet
      responses:
        200:
          description: ok
  a~b/c:
    x: [1, {y: 2}]
tags:
  - name: pets
  - name: store
empty:
quoted: "value"
`;

/** The same document as JSON, pretty-printed (2-space indent). */
const JSON_TEXT = JSON.stringify(
  {
    openapi: '3.1.0',
    paths: { '/pets/{petId}': { get: { operationId: 'getPet', responses: { '200': { description: 'ok' } } } }, 'a~b/c': { x: [1, { y: 2 }] } },
    tags: [{ name: 'pets' }, { name: 'store' }],
    empty: null,
    quoted: 'value',
  },
  null,
  2,
);

describe('parseYamlSource: YAML', () => {
  const s = must(YAML, 'mcpgen.yaml');

  test('value is plain data (numeric keys become strings)', () => {
    expect(s.value).toStrictEqual(JSON.parse(JSON_TEXT));
    expect(s.file).toBe('mcpgen.yaml');
  });

  test('locate values and keys', () => {
    expect(s.locate('/openapi')).toStrictEqual({ file: 'mcpgen.yaml', pointer: '/openapi', line: 2, col: 10 });
    expect(pos(s, '/openapi', true)).toStrictEqual([2, 1]);
    expect(pos(s, '')).toStrictEqual([2, 1]);
    expect(pos(s, '/paths/~1pets~1{petId}/get/operationId')).toStrictEqual([6, 20]);
    expect(pos(s, '/paths/~1pets~1{petId}/get/operationId', true)).toStrictEqual([6, 7]);
    expect(pos(s, '/paths/~1pets~1{petId}/get/responses/200/description')).toStrictEqual([9, 24]);
    expect(pos(s, '/paths/~1pets~1{petId}/get/responses/200', true)).toStrictEqual([8, 9]);
    expect(pos(s, '/quoted')).toStrictEqual([16, 9]);
  });

  test('keys containing / and ~', () => {
    expect(pointer(['paths', 'a~b/c', 'x', 1, 'y'])).toBe('/paths/a~0b~1c/x/1/y');
    expect(pos(s, '/paths/a~0b~1c', true)).toStrictEqual([10, 3]);
    expect(pos(s, '/paths/a~0b~1c/x/1/y')).toStrictEqual([11, 16]);
    expect(pos(s, '/paths/a~0b~1c/x/0')).toStrictEqual([11, 9]);
  });

  test('sequences', () => {
    expect(pos(s, '/tags/1')).toStrictEqual([14, 5]);
    expect(pos(s, '/tags/1/name')).toStrictEqual([14, 11]);
    // an array item has no key: key: true gives the item itself
    expect(pos(s, '/tags/1', true)).toStrictEqual([14, 5]);
  });

  test('an empty value is located at its key', () => {
    expect(pos(s, '/empty')).toStrictEqual([15, 1]);
  });

  test('a missing pointer resolves to its nearest existing ancestor', () => {
    expect(s.locate('/paths/~1pets~1{petId}/post/x')).toStrictEqual({ file: 'mcpgen.yaml', pointer: '/paths/~1pets~1{petId}/post/x', line: 5, col: 5 });
    expect(pos(s, '/nope', true)).toStrictEqual([2, 1]);
    expect(pos(s, '/tags/7')).toStrictEqual([13, 3]);
    expect(pos(s, '/tags/01')).toStrictEqual([13, 3]);
    expect(pos(s, '/openapi/deeper')).toStrictEqual([2, 10]);
  });

  test('aliases are followed', () => {
    const a = must('base: &b\n  x: 1\nuse: *b\n');
    expect(a.value).toStrictEqual({ base: { x: 1 }, use: { x: 1 } });
    expect(pos(a, '/use')).toStrictEqual([3, 6]);
    expect(pos(a, '/use/x')).toStrictEqual([2, 6]);
  });

  test('a byte-order mark does not shift columns', () => {
    expect(pos(must('\uFEFFa: 1\n'), '/a')).toStrictEqual([1, 4]);
  });

  test('an empty document is null and located at 1:1', () => {
    const e = must('# nothing\n');
    expect(e.value).toBeNull();
    expect(pos(e, '/x')).toStrictEqual([1, 1]);
  });
});

describe('parseYamlSource: JSON', () => {
  const s = must(JSON_TEXT, 'spec.json');

  test('value', () => {
    expect(s.value).toStrictEqual(JSON.parse(JSON_TEXT));
  });

  test('locate values and keys', () => {
    expect(s.locate('/openapi')).toStrictEqual({ file: 'spec.json', pointer: '/openapi', line: 2, col: 14 });
    expect(pos(s, '/openapi', true)).toStrictEqual([2, 3]);
    expect(pos(s, '')).toStrictEqual([1, 1]);
    expect(pos(s, '/paths/~1pets~1{petId}/get/operationId')).toStrictEqual([6, 24]);
    expect(pos(s, '/paths/~1pets~1{petId}/get/responses/200', true)).toStrictEqual([8, 11]);
    expect(pos(s, '/tags/1/name')).toStrictEqual([28, 15]);
    expect(pos(s, '/empty')).toStrictEqual([31, 12]);
  });

  test('keys containing / and ~, and escaped keys', () => {
    expect(pos(s, '/paths/a~0b~1c', true)).toStrictEqual([14, 5]);
    expect(pos(s, '/paths/a~0b~1c/x/1/y')).toStrictEqual([18, 16]);
    const e = must('{"a\\"b": {"c\\u002fd": [10, 20]}}', 'e.json');
    expect(pos(e, '/a"b/c~1d/1')).toStrictEqual([1, 28]);
  });

  test('a missing pointer resolves to its nearest existing ancestor', () => {
    expect(pos(s, '/paths/~1pets~1{petId}/post/x')).toStrictEqual([4, 22]);
    expect(pos(s, '/tags/9', true)).toStrictEqual([23, 11]);
    expect(pos(s, '/openapi/x')).toStrictEqual([2, 14]);
  });

  test('JSON text in a .yaml file takes the same path', () => {
    const y = must('{"a": {"b": true}}', 'x.yaml');
    expect(pos(y, '/a/b', true)).toStrictEqual([1, 8]);
  });

  test('duplicate keys are errors, with pointer and position', () => {
    const { source, diagnostics } = parse('{\n  "x": [1, {"a": 1,\n "a": 2}]\n}', 'dup.json');
    expect(source).toBeUndefined();
    expect(diagnostics).toStrictEqual([
      {
        code: 'MCPGEN_SPEC_SYNTAX',
        severity: 'error',
        message: 'duplicate key "a"',
        help: 'remove or rename one of the duplicate keys',
        location: { file: 'dup.json', pointer: '/x/1/a', line: 3, col: 2 },
      },
    ]);
  });

  test('broken JSON falls back to the YAML parser for positioned errors', () => {
    const { source, diagnostics } = parse('{\n  "a": 1,\n  "b": [1, 2\n}\n', 'broken.json');
    expect(source).toBeUndefined();
    expect(diagnostics.length).toBeGreaterThan(0);
    for (const d of diagnostics) {
      expect(d.code).toBe('MCPGEN_SPEC_SYNTAX');
      expect(d.location.file).toBe('broken.json');
      expect(d.location.line).toBeGreaterThan(0);
    }
  });
});

describe('parseYamlSource: syntax errors', () => {
  test('the first error is reported, with its position, and not what the parser guessed after it', () => {
    const { source, diagnostics } = parse('name: petstore\n  openapi: ./petstore.yaml\n');
    expect(source).toBeUndefined();
    expect(diagnostics.map((d) => [d.code, d.severity, d.location.line, d.location.col, d.message])).toStrictEqual([
      ['MCPGEN_SPEC_SYNTAX', 'error', 1, 7, 'nested mappings are not allowed in compact mappings'],
    ]);
  });

  test('one unclosed bracket or quote in a large document is one error (issue 10, item 16)', () => {
    const ops = (broken: (i: number) => boolean) =>
      Array.from(
        { length: 30 },
        (_, i) => `  /p${i}:\n    get:\n      operationId: op${i}\n      tags: [a${broken(i) ? '' : ']'}\n      responses:\n        '200': {description: ok}\n`,
      ).join('');
    const yaml = parse(`openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n${ops((i) => i === 3)}`);
    // reported where the parser finds the bracket missing: the line after it
    expect(yaml.diagnostics.map((d) => [d.location.line, d.message])).toStrictEqual([[4 + 3 * 6 + 4, expect.stringMatching(/end with a \]/)]]);
    const json = JSON.stringify(
      {
        openapi: '3.0.3',
        paths: Object.fromEntries(
          Array.from({ length: 30 }, (_, i) => [`/p${i}`, { get: { operationId: `op${i}`, responses: { 200: { description: 'ok' } } } }]),
        ),
      },
      null,
      2,
    );
    const unclosed = json.replace('"description": "ok"', '"description": "ok');
    expect(parse(unclosed, 'spec.json').diagnostics).toHaveLength(1);
    const noBracket = json.replace(/("\/p3": \{[^]*?)\n {4}\},/, '$1');
    expect(parse(noBracket, 'spec.json').diagnostics).toHaveLength(1);
  });

  test('duplicate keys before the first other error are reported too', () => {
    const { diagnostics } = parse('a: 1\na: 2\nb: [1\nc: 3\nc: 4\n');
    expect(diagnostics.map((d) => [d.message, d.location.line])).toStrictEqual([
      ['duplicate key "a"', 2],
      [expect.stringMatching(/flow sequence/), 4],
    ]);
  });

  test('duplicate keys', () => {
    const { source, diagnostics } = parse('a: 1\nb:\n  c: 1\n  c: 2\n');
    expect(source).toBeUndefined();
    expect(diagnostics).toStrictEqual([
      {
        code: 'MCPGEN_SPEC_SYNTAX',
        severity: 'error',
        message: 'duplicate key "c"',
        help: 'remove or rename one of the duplicate keys',
        location: { file: 'doc.yaml', pointer: '/b/c', line: 4, col: 3 },
      },
    ]);
  });

  test('indentation errors point at the misplaced token', () => {
    const { diagnostics } = parse('a:\n  b: 1\n c: 2\n');
    expect(diagnostics.map((d) => [d.message, d.location.line, d.location.col])).toStrictEqual([['all mapping items must start at the same column', 3, 2]]);
  });

  test('tabs, several documents and unknown aliases', () => {
    expect(parse('\ta: 1\n').diagnostics.map((d) => [d.message, d.help])).toStrictEqual([
      ['tabs are not allowed as indentation', 'indent with spaces, not tabs'],
    ]);
    expect(parse('a: 1\n---\nb: 2\n').diagnostics.map((d) => [d.location.line, d.location.col])).toStrictEqual([[2, 1]]);
    expect(parse('a: *nope\n').diagnostics.map((d) => [d.message, d.location.pointer, d.location.line, d.location.col])).toStrictEqual([
      ['unknown alias *nope', '', 1, 4],
    ]);
  });
});

describe('parseYamlSource: the JSON fast path agrees with the YAML parser', () => {
  // A YAML comment in front forces the YAML parser over the same JSON text (one line lower).
  const doc = {
    'a/b~c': { 'x"y': [1, -2.5e3, true, null, { deep: ['\u00e9\u{1F600}', 'q\\"'] }], empty: {}, none: [] },
    list: [[[]], [{}], [{ k: 'v' }, 'w']],
    üñí: { '': 0, ' spaced key ': '\n\t' },
  };
  const pointers: string[] = [];
  const walk = (v: unknown, tokens: Array<string | number>) => {
    pointers.push(pointer(tokens));
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...tokens, i]));
    else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) walk(x, [...tokens, k]);
  };
  walk(doc, []);
  pointers.push('/a~1b~0c/x"y/9', '/list/0/0/0', '/missing');

  for (const [name, text] of [
    ['pretty', JSON.stringify(doc, null, 2)],
    ['compact', JSON.stringify(doc)],
  ] as const) {
    test(name, () => {
      const json = must(text, 'x.json');
      const yaml = must(`# c\n${text}`, 'x.yaml');
      expect(yaml.value).toStrictEqual(json.value);
      for (const p of pointers) {
        for (const key of [false, true]) {
          const j = json.locate(p, { key });
          const y = yaml.locate(p, { key });
          expect([p, key, j.line, j.col]).toStrictEqual([p, key, y.line - 1, y.col]);
        }
      }
    });
  }
});

test('a 13 MB JSON spec: fast path, exact positions', () => {
  const text = readFileSync(corpusSpec('github-rest.json'), 'utf8');
  const s = must(text, '.corpus/github-rest.json');
  const lines = text.split('\n');
  const at = (ptr: string, key = false) => {
    const l = s.locate(ptr, { key });
    return lines[l.line - 1]!.slice(l.col - 1, l.col - 1 + 30);
  };
  expect(at('/paths/~1repos~1{owner}~1{repo}/get/operationId')).toMatch(/^"repos\/get"/);
  expect(at('/paths/~1repos~1{owner}~1{repo}/get', true)).toMatch(/^"get"/);
  expect(at('/components/schemas/repository/properties/name', true)).toMatch(/^"name"/);
  expect(at('/openapi')).toMatch(/^"3\.\d/);
});

import { Project } from 'ts-morph';
import { describe, expect, it, test } from 'vitest';
import { camelCase, docComment, docText, identifier, pascalCase, printLiteral, propKey, tsLiteral, tsString } from '../../src/emit/safe.js';

const HOSTILE = [
  'plain',
  'quote " and \' and `backtick`',
  '${process.exit(7)}',
  '*/ process.exit(7) /*',
  'line\u2028separator\u2029paragraph',
  '</script><script>alert(1)</script>',
  'back\\slash\\',
  'new\nline\r\nand\rcr',
  'emoji 🐶 and ünïcödé',
  '"; process.exit(7); "',
];

/** Parses a TS snippet and returns its syntax errors. */
function syntaxErrors(code: string): string[] {
  const project = new Project({ useInMemoryFileSystem: true });
  const file = project.createSourceFile('x.ts', code);
  return file
    .getPreEmitDiagnostics()
    .filter((d) => d.getCode() < 2000)
    .map((d) => String(d.getMessageText()));
}

describe('tsString / tsLiteral', () => {
  it.each(HOSTILE)('round-trips %j as a single string literal', (value) => {
    const lit = tsString(value);
    expect(lit).not.toMatch(/[\u2028\u2029<]/);
    expect(syntaxErrors(`export const x = ${lit};`)).toEqual([]);
    // evaluating the literal as JSON gives the original value back
    expect(JSON.parse(lit)).toBe(value);
  });

  it('renders nested JSON values with hostile keys and values as data', () => {
    const value = { [HOSTILE[3]!]: HOSTILE.slice(0, 5), n: 1, nested: { 'a"b': null, t: true } };
    const lit = tsLiteral(value, 2);
    expect(syntaxErrors(`export const x = ${lit};`)).toEqual([]);
    expect(JSON.parse(lit)).toEqual(value);
  });

  it('refuses values that are not JSON', () => {
    expect(() => tsLiteral(undefined)).toThrow(TypeError);
  });
});

describe('docText / docComment', () => {
  it.each(HOSTILE)('keeps %j inside one comment', (value) => {
    const code = `${docComment(value)}export const x = 1;`;
    expect(syntaxErrors(code)).toEqual([]);
    // the only statement is the declaration: nothing escaped the comment
    const project = new Project({ useInMemoryFileSystem: true });
    expect(project.createSourceFile('x.ts', code).getStatements()).toHaveLength(1);
  });

  it('normalises line terminators and trims trailing spaces', () => {
    expect(docText('a  \r\nb\rc\u2028d\u2029e  ')).toBe('a\nb\nc\nd\ne');
    expect(docText('x */ y')).toBe('x *\\/ y');
  });

  it('returns nothing for empty text', () => {
    expect(docComment('  \n ')).toBe('');
    expect(docComment(undefined)).toBe('');
  });
});

describe('identifier / propKey / case helpers', () => {
  it.each([
    ['get-pet', 'get_pet'],
    ['123abc', '_123abc'],
    ['class', 'class_'],
    ['tools', 'tools_'],
    ['OperationTool', 'OperationTool_'],
    ['', '_'],
    ['ünï', '_n_'],
    ['a$b', 'a$b'],
  ])('identifier(%j) = %j', (input, want) => {
    expect(identifier(input)).toBe(want);
  });

  it('quotes property keys that are not identifier names', () => {
    expect(propKey('name')).toBe('name');
    expect(propKey('X-Request-Id')).toBe('"X-Request-Id"');
    expect(propKey('a"b')).toBe('"a\\"b"');
    expect(propKey('1x')).toBe('"1x"');
  });

  it('splits words on non-alphanumerics', () => {
    expect(pascalCase('get-pet_byID')).toBe('GetPetByID');
    expect(camelCase('store.inventory')).toBe('storeInventory');
    expect(pascalCase('---')).toBe('');
  });
});

describe('tsLiteral keeps JSON semantics', () => {
  it('writes __proto__ keys as computed keys so they stay own properties', () => {
    const value = JSON.parse('{"properties":{"__proto__":{"type":"string"},"a":1}}') as unknown;
    const lit = tsLiteral(value, 2);
    expect(lit).toContain('["__proto__"]');
    expect(syntaxErrors(`export const x = ${lit};`)).toEqual([]);
    // evaluate the literal the way generated code would be evaluated
    const evaluated = new Function(`return (${lit});`)() as { properties: object };
    expect(Object.getPrototypeOf(evaluated.properties)).toBe(Object.prototype);
    expect(Object.keys(evaluated.properties)).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(evaluated)).toBe(JSON.stringify(value));
  });

  it('prints the same text as JSON.stringify apart from the escapes', () => {
    const value = { a: [1, 'two', { b: null, c: true }], d: {}, e: [] };
    expect(tsLiteral(value, 2)).toBe(JSON.stringify(value, null, 2));
    expect(tsLiteral(value)).toBe(JSON.stringify(value));
  });
});

describe('generated README helpers', () => {
  it('quotes shell words and escapes markdown so spec text stays text', async () => {
    const { mdText, shellQuote } = await import('../../src/emit/project/files.js');
    expect(shellQuote('https://api.example.com/v1')).toBe('https://api.example.com/v1');
    expect(shellQuote("http://x/$(rm -rf ~)'")).toBe(`'http://x/$(rm -rf ~)'\\'''`);
    expect(mdText('a|b `c` <script>\nnext')).toBe('a\\|b \\`c\\` \\<script\\> next');
  });

  it('puts any text into one inline code span that a table cell cannot lose', async () => {
    const { mdCode } = await import('../../src/emit/project/files.js');
    expect(mdCode('petstore://species/{species}/care')).toBe('`petstore://species/{species}/care`');
    expect(mdCode('a|b')).toBe('`a\\|b`');
    expect(mdCode('x`y')).toBe('``x`y``');
    expect(mdCode('`start')).toBe('`` `start ``');
    expect(mdCode('a``b`\nnext')).toBe('```a``b` next```');
  });
});

describe('tsLiteral (JSON.stringify fast path) prints what the careful printer prints', () => {
  const values: unknown[] = [
    null,
    true,
    0,
    -0,
    1.5e300,
    'a<b',
    'line\u2028sep\u2029',
    '"__proto__": x',
    '\\"__proto__":',
    [],
    {},
    [undefined, 1],
    { a: undefined, b: [{}, []], c: { d: 'e</script>' } },
    { __proto__: 1 },
    JSON.parse('{"__proto__": {"x": "<y>"}, "z": ["\\u2028"]}'),
    // what YAML's !!timestamp, !!binary, !!set and !!omap give: printed as they always were
    { d: new Date(0) },
    [new Date(0)],
    { s: new Set([1]) },
    { u: new Uint8Array([1]) },
    { m: new Map([[1, 2]]) },
    { 'with "quotes"': 'and \\ backslashes', nested: { deep: [[[1, 2, { k: 'v' }]]] } },
  ];
  test.each(values.map((v, i) => ({ v, i })))('value $i, with and without indent', ({ v }) => {
    expect(tsLiteral(v)).toBe(printLiteral(v));
    expect(tsLiteral(v, 2)).toBe(printLiteral(v, 2));
  });
  test('refusals are the same', () => {
    for (const bad of [Number.NaN, { a: Infinity }, [() => 1], { f: Symbol('s') }, undefined]) {
      expect(() => tsLiteral(bad)).toThrow(TypeError);
      expect(() => printLiteral(bad)).toThrow(TypeError);
    }
  });
});

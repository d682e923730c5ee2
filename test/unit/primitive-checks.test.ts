import { describe, expect, it } from 'vitest';
import { guessMimeType, isTextualMime } from '../../src/ir/features/mime.js';
import { checkPromptTemplate } from '../../src/ir/features/prompt-template.js';
import { checkUriTemplate } from '../../src/ir/features/uri-template.js';
import { exportedNames } from '../../src/write/exported-names.js';

describe('checkPromptTemplate', () => {
  const args = ['species', 'budget', 'items'];
  const cases: Array<[string, string, { error?: RegExp; unknown?: string[] }]> = [
    ['plain variables', 'Adopt a {{species}} for {{budget}}', {}],
    ['if / unless / else keep the context', '{{#if budget}}{{budget}}{{else}}{{specie}}{{/if}}{{#unless species}}x{{/unless}}', { unknown: ['specie'] }],
    ['each and with change the context', '{{#each items}}{{name}} {{@index}} {{this}}{{/each}}{{#with budget}}{{amount}}{{/with}}', {}],
    ['a section over a context value', '{{#budget}}{{currency}}{{/budget}}{{#colour}}x{{/colour}}', { unknown: ['colour'] }],
    ['lookup with parameters', '{{lookup items species}}{{lookup items kind}}', { unknown: ['kind'] }],
    ['parent and data paths are not arguments', '{{#each items}}{{../species}}{{/each}}{{@root.species}}', {}],
    ['a syntax error names the template line', 'line one\n{{#if species}}never closed', { error: /^Parse error on line 2: Expecting .*got 'EOF'$/ }],
    ['a mismatched block', '{{#if species}}x{{/each}}', { error: /if doesn't match each/ }],
    ['an unknown helper', 'Hi {{shout species}}', { error: /the helper "shout" does not exist \(available: lookup, log\) \(line 1 of the template\)/ }],
    ['an unknown block helper', '{{#repeat 3 species}}x{{/repeat}}', { error: /the helper "repeat" does not exist/ }],
    ['a partial', 'a\n{{> footer}}', { error: /partials .* are not available in prompt templates \(line 2 of the template\)/ }],
    ['a comment is fine', '{{!-- {{nothing}} --}}{{species}}', {}],
  ];
  it.each(cases)('%s', (_label, text, want) => {
    const r = checkPromptTemplate(text, args);
    if (want.error) expect(r.error).toMatch(want.error);
    else expect(r.error).toBeUndefined();
    expect(r.unknownVariables).toEqual(want.unknown ?? []);
  });
});

describe('checkUriTemplate', () => {
  it.each([
    ['petstore://pets/{petId}', ['petId']],
    ['file:///docs/{+path}{?q,lang}', ['path', 'q', 'lang']],
    ['x://{a}/{a}{#frag}{.ext*}{/seg:3}{;m}{&n}', ['a', 'frag', 'ext', 'seg', 'm', 'n']],
    ['x://static/uri%20ok', []],
    ['x://{var.name}/{pct%41}', ['var.name', 'pct%41']],
  ])('%s has variables %j', (template, variables) => {
    expect(checkUriTemplate(template)).toEqual({ variables });
  });
  it.each([
    ['x://{unclosed', /has no closing "}"/],
    ['x://close}', /"}" without an opening "{"/],
    ['x://{}', /names no variable/],
    ['x://{a b}', /"a b" in \{a b\} is not a valid variable name/],
    ['x://{a:0}', /not a valid modifier/],
    ['x://{=a}', /operator "=" is reserved/],
    ['x://a b/{c}', /contains " " outside an expression/],
    ['x://a%zz', /"%" that does not start a percent-encoded byte/],
    ['x://{a{b}}', /contains "\{"/],
  ])('rejects %s', (template, message) => {
    expect(checkUriTemplate(template).error).toMatch(message);
  });
});

describe('exportedNames', () => {
  it('finds functions, variables and export lists', () => {
    const source = [
      'export async function alpha(a: number) {}',
      'export function* gen() {}',
      'export const beta = () => 1;',
      'export let $gamma = 2;',
      'function delta() {}',
      'const eps = 1;',
      'export { delta, eps as epsilon, type Zeta };',
      'async function notExported() {}',
    ].join('\n');
    expect([...exportedNames(source)].sort()).toEqual(['$gamma', 'Zeta', 'alpha', 'beta', 'delta', 'epsilon', 'gen']);
  });
});

describe('MIME types of embedded files', () => {
  it('guesses by extension and tells text from binary', () => {
    expect(guessMimeType('docs/Guide.MD')).toBe('text/markdown');
    expect(guessMimeType('logo.png')).toBe('image/png');
    expect(guessMimeType('data.bin')).toBe('application/octet-stream');
    expect(guessMimeType('Makefile')).toBe('application/octet-stream');
    for (const t of ['text/plain', 'application/json', 'application/ld+json', 'image/svg+xml', 'application/yaml; charset=utf-8'])
      expect(isTextualMime(t), t).toBe(true);
    for (const t of ['image/png', 'application/octet-stream', 'application/pdf']) expect(isTextualMime(t), t).toBe(false);
  });
});

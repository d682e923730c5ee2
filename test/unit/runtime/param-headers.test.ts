import { describe, expect, it } from 'vitest';
import { mcpHeaderProblem } from '../../../src/ir/tools/mcp-header.js';
import { checkParamHeaders, decodeParamValue, HEADER_MISMATCH, paramHeaders } from '../../../templates/runtime/operation/param-headers.js';

const SCHEMA = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    count: { type: 'integer', 'x-mcp-header': 'Count' },
    dry: { type: 'boolean', 'x-mcp-header': 'Dry' },
    ratio: { type: 'number', 'x-mcp-header': 'Ratio' },
    tags: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Tag' } },
    nested: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
  },
};
const headers = (h: Record<string, string>) => new Headers(h);

describe('x-mcp-header (SEP-2243)', () => {
  it('finds the marked properties reached through properties alone, of the types the spec allows', () => {
    expect(paramHeaders(SCHEMA).map((d) => [d.path.join('.'), d.name, d.type])).toStrictEqual([
      ['region', 'Region', 'string'],
      ['count', 'Count', 'integer'],
      ['dry', 'Dry', 'boolean'],
      ['nested.zone', 'Zone', 'string'],
    ]);
  });

  it('checks each header the body needs against the body, decoding Base64', () => {
    const declared = paramHeaders(SCHEMA);
    const args = { region: 'Zürich', count: 42, dry: false, nested: { zone: 'b' } };
    const all = {
      'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=`,
      'mcp-param-count': '42.0',
      'mcp-param-dry': 'false',
      'mcp-param-zone': 'b',
    };
    expect(checkParamHeaders(declared, args, headers(all))).toBeUndefined();
    // absent or null in the body: no header needed (one sent anyway is ignored)
    expect(checkParamHeaders(declared, { region: null }, headers({ 'mcp-param-count': 'x' }))).toBeUndefined();
    const refused = (h: Record<string, string>, a: unknown = args) => checkParamHeaders(declared, a, headers({ ...all, ...h }));
    expect(refused({ 'mcp-param-count': '43' })).toMatchObject({ status: 400, code: HEADER_MISMATCH, data: { mismatch: { header: 'Mcp-Param-Count' } } });
    expect(refused({ 'mcp-param-dry': 'False' })?.message).toBe(
      'Bad Request: the request headers and body disagree: the Mcp-Param-Dry header decodes to "False" but the body carries dry=false',
    );
    expect(refused({ 'mcp-param-region': '=?base64?SGVsbG8?=' })?.message).toContain('invalid Base64');
    expect(refused({ 'mcp-param-region': '=?base64?SGVs!!!bG8=?=' })?.code).toBe(HEADER_MISMATCH);
    const { 'mcp-param-zone': _zone, ...withoutZone } = all;
    expect(checkParamHeaders(declared, args, headers(withoutZone))?.message).toContain('the Mcp-Param-Zone header is absent');
  });

  it('takes a value without the whole Base64 wrapper literally, and refuses Base64 of invalid UTF-8', () => {
    expect(decodeParamValue('SGVsbG8=')).toBe('SGVsbG8=');
    expect(decodeParamValue('=?base64?SGVsbG8=')).toBe('=?base64?SGVsbG8=');
    expect(decodeParamValue('=?base64?SGVsbG8=?=')).toBe('Hello');
    expect(decodeParamValue(`=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`)).toBeUndefined();
  });

  it('refuses at build time what a 2026-07-28 client would reject', () => {
    expect(mcpHeaderProblem({ type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'A' } } })).toBeUndefined();
    expect(mcpHeaderProblem(SCHEMA)).toBe('ratio: x-mcp-header is allowed only on a string, integer or boolean property, got type "number"');
    expect(mcpHeaderProblem({ type: 'object', properties: { a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } } })).toMatch(
      /^a\.<items>: x-mcp-header is allowed only on a property reached through `properties` alone/,
    );
    expect(mcpHeaderProblem({ type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'A b' } } })).toBe(
      'a: x-mcp-header must be an HTTP header name token, got "A b"',
    );
    expect(
      mcpHeaderProblem({ type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'Key' }, b: { type: 'string', 'x-mcp-header': 'KEY' } } }),
    ).toBe('b: x-mcp-header "KEY" is also a\'s (names must differ ignoring case)');
    expect(mcpHeaderProblem({ type: 'object', 'x-mcp-header': 'Root' })).toMatch(/^the root: /);
  });
});

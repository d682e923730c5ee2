import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, test } from 'vitest';
import { escapeGithubData, escapeGithubProperty, formatDiagnostics } from '../../src/cli/format.js';
import { formatGithubDrift, formatJsonReport } from '../../src/cli/report.js';
import { paint } from '../../src/cli/terminal.js';
import { type Diagnostic, Diagnostics } from '../../src/core/diagnostics.js';
import { loadManifest } from '../../src/manifest/load.js';
import type { Summary } from '../../src/summary.js';

const unknownKey: Diagnostic = {
  code: 'MCPGEN_MANIFEST_UNKNOWN_KEY',
  severity: 'error',
  message: 'unknown key "nmae"',
  help: 'did you mean "name"?',
  location: { file: 'mcpgen.yaml', pointer: '/nmae', line: 3, col: 1 },
};
const missing: Diagnostic = {
  code: 'MCPGEN_MANIFEST_INVALID',
  severity: 'error',
  message: 'missing required key "openapi"',
  help: 'add `openapi:`',
  location: { file: 'mcpgen.yaml', pointer: '', line: 1, col: 1 },
};
const warning: Diagnostic = {
  code: 'MCPGEN_NO_BASE_URL',
  severity: 'warning',
  message: 'no base URL',
  help: '',
  location: { file: 'dir, with: odd%chars/spec.json', pointer: '/servers', line: 12, col: 0 },
};
const notFound: Diagnostic = {
  code: 'MCPGEN_MANIFEST_NOT_FOUND',
  severity: 'error',
  message: 'manifest nope.yaml not found',
  help: 'check the path',
  location: { file: 'nope.yaml', pointer: '', line: 0, col: 0 },
};

describe('text', () => {
  test('one diagnostic', () => {
    expect(formatDiagnostics([unknownKey], 'text')).toBe(
      'mcpgen.yaml:3:1 error MCPGEN_MANIFEST_UNKNOWN_KEY unknown key "nmae"\n  at /nmae\n  help: did you mean "name"?\n1 error, 0 warnings\n',
    );
  });

  test('the root pointer, an empty help and unknown positions are left out; summary counts', () => {
    expect(formatDiagnostics([missing, unknownKey, warning, notFound], 'text')).toBe(
      [
        'mcpgen.yaml:1:1 error MCPGEN_MANIFEST_INVALID missing required key "openapi"',
        '  help: add `openapi:`',
        'mcpgen.yaml:3:1 error MCPGEN_MANIFEST_UNKNOWN_KEY unknown key "nmae"',
        '  at /nmae',
        '  help: did you mean "name"?',
        'dir, with: odd%chars/spec.json:12 warning MCPGEN_NO_BASE_URL no base URL',
        '  at /servers',
        'nope.yaml error MCPGEN_MANIFEST_NOT_FOUND manifest nope.yaml not found',
        '  help: check the path',
        '3 errors, 1 warning',
        '',
      ].join('\n'),
    );
  });

  test('nothing to report', () => {
    expect(formatDiagnostics([], 'text')).toBe('0 errors, 0 warnings\n');
  });

  test("a message's list and a multi-line help keep their lines, indented under the diagnostic", () => {
    const over: Diagnostic = {
      code: 'MCPGEN_OVER_BUDGET',
      severity: 'error',
      message:
        'tools/list is 900 bytes, over budget.maxListBytes 500; the largest tools:\n  - a 400 bytes\n  - b 300 bytes\n  cheapest ways to get under (400 bytes):\n    - `exclude` 1 tool(s) (a): saves 401 bytes',
      help: 'trim the surface\r\nor raise the budget',
      location: { file: 'mcpgen.yaml', pointer: '/budget/maxListBytes', line: 4, col: 3 },
    };
    expect(formatDiagnostics([over, warning], 'text')).toBe(
      [
        'mcpgen.yaml:4:3 error MCPGEN_OVER_BUDGET tools/list is 900 bytes, over budget.maxListBytes 500; the largest tools:',
        '    - a 400 bytes',
        '    - b 300 bytes',
        '    cheapest ways to get under (400 bytes):',
        '      - `exclude` 1 tool(s) (a): saves 401 bytes',
        '  at /budget/maxListBytes',
        '  help: trim the surface',
        '        or raise the budget',
        'dir, with: odd%chars/spec.json:12 warning MCPGEN_NO_BASE_URL no base URL',
        '  at /servers',
        '1 error, 1 warning',
        '',
      ].join('\n'),
    );
  });

  test('far along a long line (a minified spec) the place is file#pointer, not a column', () => {
    const far: Diagnostic = { ...warning, location: { file: 'asana.json', pointer: '/components/securitySchemes/oauth2', line: 1, col: 375401 } };
    const near: Diagnostic = { ...warning, location: { file: 'asana.json', pointer: '/servers', line: 1, col: 200 } };
    expect(formatDiagnostics([far, near], 'text')).toBe(
      [
        'asana.json#/components/securitySchemes/oauth2 warning MCPGEN_NO_BASE_URL no base URL',
        'asana.json:1:200 warning MCPGEN_NO_BASE_URL no base URL',
        '  at /servers',
        '0 errors, 2 warnings',
        '',
      ].join('\n'),
    );
    expect(formatDiagnostics([far], 'github')).toBe(
      '::warning file=asana.json,line=1,title=MCPGEN_NO_BASE_URL::no base URL (at /components/securitySchemes/oauth2)\n',
    );
    // the JSON document keeps the numbers: a tool can decide for itself
    expect(JSON.parse(formatDiagnostics([far], 'json')).diagnostics[0].location).toStrictEqual(far.location);
  });

  test('colours only when asked (a TTY), the same text without them', () => {
    const plain = formatDiagnostics([unknownKey, warning], 'text');
    expect(plain).not.toMatch(/\u001b\[/);
    expect(formatDiagnostics([unknownKey, warning], 'text', paint(false))).toBe(plain);
    const coloured = formatDiagnostics([unknownKey, warning], 'text', paint(true));
    expect(coloured).toMatch(/\u001b\[31m/); // red error
    expect(coloured).toMatch(/\u001b\[33m/); // yellow warning
    expect(stripVTControlCharacters(coloured)).toBe(plain);
  });
});

describe('json', () => {
  test('one document: diagnostics with a fixed key order, no summary, no drift', () => {
    const scrambled = {
      location: { col: 1, line: 3, pointer: '/nmae', file: 'mcpgen.yaml' },
      help: unknownKey.help,
      message: unknownKey.message,
      severity: 'error',
      code: unknownKey.code,
    } as Diagnostic;
    const out = formatDiagnostics([scrambled, warning], 'json');
    expect(out.endsWith('\n')).toBe(true);
    const doc = { diagnostics: [unknownKey, warning], summary: null, drift: [] };
    expect(JSON.parse(out)).toStrictEqual(doc);
    expect(out).toBe(JSON.stringify(doc, null, 2) + '\n');
  });

  test('empty', () => {
    expect(JSON.parse(formatDiagnostics([], 'json'))).toStrictEqual({ diagnostics: [], summary: null, drift: [] });
  });

  test('with a summary and drift (build --check)', () => {
    const out = formatJsonReport([warning], summaryOf, [
      { change: 'changed', file: 'server/src/tools.gen.ts' },
      { change: 'added', file: 'server/README.md' },
    ]);
    expect(Object.keys(JSON.parse(out))).toEqual(['diagnostics', 'summary', 'drift']);
    expect(JSON.parse(out)).toStrictEqual({
      diagnostics: [warning],
      summary: summaryOf,
      drift: [
        { change: 'changed', file: 'server/src/tools.gen.ts' },
        { change: 'added', file: 'server/README.md' },
      ],
    });
  });
});

const summaryOf: Summary = {
  name: 'petstore',
  version: '1.0.0',
  output: 'server',
  tools: 6,
  operationTools: 6,
  extraTools: 0,
  prompts: 0,
  resources: 0,
  resourceTemplates: 0,
  concerns: 0,
  preprocessors: 0,
  gatedTools: 0,
  listBytes: 4242,
  listTokens: null,
  withOutputSchema: 4,
  outputSchemasDropped: 0,
  inputSchemasCut: 0,
};

describe('github', () => {
  test('workflow commands', () => {
    expect(formatDiagnostics([unknownKey, notFound], 'github')).toBe(
      '::error file=mcpgen.yaml,line=3,col=1,title=MCPGEN_MANIFEST_UNKNOWN_KEY::unknown key "nmae" (help: did you mean "name"?)\n' +
        '::error file=nope.yaml,title=MCPGEN_MANIFEST_NOT_FOUND::manifest nope.yaml not found (help: check the path)\n',
    );
  });

  test('one annotation per drifted file', () => {
    expect(
      formatGithubDrift(
        [
          { change: 'changed', file: 'server/src/tools.gen.ts' },
          { change: 'missing', file: 'dir, x/src/handlers/a.ts' },
        ],
        'mcpgen.yaml',
      ),
    ).toBe(
      '::error file=server/src/tools.gen.ts,title=mcpgen drift (changed)::server/src/tools.gen.ts is out of date: it differs from what mcpgen generates; run `mcpgen build mcpgen.yaml` and commit the result\n' +
        '::error file=dir%2C x/src/handlers/a.ts,title=mcpgen drift (missing)::dir, x/src/handlers/a.ts is missing: a handler file the server imports (`mcpgen build` writes a stub); run `mcpgen build mcpgen.yaml` and commit the result\n',
    );
  });

  test('escaping of properties and data', () => {
    const d: Diagnostic = { ...warning, message: '100% bad\r\nline: two, three', help: '' };
    expect(formatDiagnostics([d], 'github')).toBe(
      '::warning file=dir%2C with%3A odd%25chars/spec.json,line=12,title=MCPGEN_NO_BASE_URL::100%25 bad%0D%0Aline: two, three\n',
    );
    expect(escapeGithubData('a%b\nc:d,e')).toBe('a%25b%0Ac:d,e');
    expect(escapeGithubProperty('a%b\nc:d,e')).toBe('a%25b%0Ac%3Ad%2Ce');
  });
});

test('the bad-manifest fixtures render as documented', async () => {
  const diagnostics = new Diagnostics();
  await loadManifest('test/fixtures/bad-manifests/unknown-key/mcpgen.yaml', diagnostics, { cwd: path.resolve(import.meta.dirname, '../..') });
  expect(formatDiagnostics(diagnostics.sorted(), 'text')).toBe(
    [
      'test/fixtures/bad-manifests/unknown-key/mcpgen.yaml:3:1 error MCPGEN_MANIFEST_UNKNOWN_KEY unknown key "nmae"',
      '  at /nmae',
      '  help: did you mean "name"?',
      'test/fixtures/bad-manifests/unknown-key/mcpgen.yaml:6:5 error MCPGEN_MANIFEST_UNKNOWN_KEY unknown key "nmae"',
      '  at /overrides/listPets/nmae',
      '  help: did you mean "name"?',
      '2 errors, 0 warnings',
      '',
    ].join('\n'),
  );
});

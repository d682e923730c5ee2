import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { escapeGithubData, escapeGithubProperty, formatDiagnostics } from '../../src/cli/format.js';
import { type Diagnostic, Diagnostics } from '../../src/diagnostics.js';
import { loadManifest } from '../../src/manifest/load.js';

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
});

describe('json', () => {
  test('an array of diagnostics with a fixed key order', () => {
    const scrambled = { location: { col: 1, line: 3, pointer: '/nmae', file: 'mcpgen.yaml' }, help: unknownKey.help, message: unknownKey.message, severity: 'error', code: unknownKey.code } as Diagnostic;
    const out = formatDiagnostics([scrambled, warning], 'json');
    expect(out.endsWith('\n')).toBe(true);
    expect(JSON.parse(out)).toStrictEqual([unknownKey, warning]);
    expect(out).toBe(JSON.stringify([unknownKey, warning], null, 2) + '\n');
  });

  test('empty', () => {
    expect(formatDiagnostics([], 'json')).toBe('[]\n');
  });
});

describe('github', () => {
  test('workflow commands', () => {
    expect(formatDiagnostics([unknownKey, notFound], 'github')).toBe(
      '::error file=mcpgen.yaml,line=3,col=1,title=MCPGEN_MANIFEST_UNKNOWN_KEY::unknown key "nmae" (help: did you mean "name"?)\n' +
        '::error file=nope.yaml,title=MCPGEN_MANIFEST_NOT_FOUND::manifest nope.yaml not found (help: check the path)\n',
    );
  });

  test('escaping of properties and data', () => {
    const d: Diagnostic = { ...warning, message: '100% bad\r\nline: two, three', help: '' };
    expect(formatDiagnostics([d], 'github')).toBe('::warning file=dir%2C with%3A odd%25chars/spec.json,line=12,title=MCPGEN_NO_BASE_URL::100%25 bad%0D%0Aline: two, three\n');
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

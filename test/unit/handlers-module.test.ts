/**
 * templates/runtime/handlers.ts is what users' handler files import (`'../runtime/handlers.js'`):
 * its names are a promise across mcpgen versions. This pins them (a module moving between the
 * runtime's folders must leave them exported), checks that the values load, and that
 * docs/generated-server.md lists each one for handler authors.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const SOURCE = readFileSync(new URL('../../templates/runtime/handlers.ts', import.meta.url), 'utf8');
const TYPES = [
  'ApiClient',
  'ApiOperation',
  'ApiResult',
  'ClientLog',
  'ClientProgress',
  'CompletionContext',
  'ElicitAnswer',
  'ElicitForm',
  'ElicitUrlAnswer',
  'ExtraToolContext',
  'HandlerInput',
  'InputKind',
  'InputOptions',
  'ListKind',
  'PreprocessorContext',
  'RequestExtra',
  'ResourceContent',
  'SampleAnswer',
  'Variables',
];
const VALUES = [
  'InputRequestFailed',
  'MissingRequiredClientCapabilityError',
  'ProtocolError',
  'ProtocolErrorCode',
  'notifyListChanged',
  'notifyResourceUpdated',
];

const exported = (kind: 'type' | 'value'): string[] =>
  [...SOURCE.matchAll(kind === 'type' ? /^export type \{([^}]*)\}/gm : /^export \{([^}]*)\}/gm)]
    .flatMap((m) => m[1]!.split(',').map((n) => n.trim()))
    .filter((n) => n !== '')
    .sort();

describe('runtime/handlers.ts, the module handler code imports', () => {
  it('exports exactly the promised names', () => {
    expect(exported('type')).toEqual([...TYPES].sort());
    expect(exported('value')).toEqual([...VALUES].sort());
  });

  it('its values load', async () => {
    const mod = (await import('../../templates/runtime/handlers.js')) as Record<string, unknown>;
    for (const name of VALUES) expect(mod[name], name).toBeDefined();
    expect(typeof mod.notifyListChanged).toBe('function');
  });

  it('docs/generated-server.md names every export for handler authors', () => {
    const doc = readFileSync(new URL('../../docs/generated-server.md', import.meta.url), 'utf8');
    for (const name of [...TYPES, ...VALUES]) expect(doc, name).toContain(`\`${name}\``);
  });
});

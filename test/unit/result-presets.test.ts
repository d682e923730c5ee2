/**
 * Result settings per concern preset (manifest `results.presets`): the schema's shape, preset
 * names checked against `concernPresets` (a located `MCPGEN_UNKNOWN_PRESET`, as `budget.presets`
 * and `discovery.presets`), and `config.resultPresets` in the generated config — only the presets
 * that set something, with only the keys written.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { emitConfigFile, serverConfig } from '../../src/emit/ts/entry.js';
import { validateManifest } from '../../src/manifest/validate.js';
import { parseYamlSource } from '../../src/source/source.js';

const SPEC = `openapi: 3.0.3
info: { title: t, version: '1' }
servers: [{ url: 'https://api.example.com' }]
paths:
  /issues:
    get:
      operationId: listIssues
      responses: { '200': { description: ok, content: { application/json: { schema: { type: array, items: { type: object } } } } } }
    post:
      operationId: createIssue
      responses: { '201': { description: ok, content: { application/json: { schema: { type: object } } } } }
`;
const CONCERNS = `concerns:
  - { name: access, values: [read, write] }
concernMappings:
  tools:
    listIssues: { access: read }
    createIssue: { access: write }
concernPresets:
  read-only: { access: read }
  writer: { access: write }
  everything: {}
`;

function project(extra: string, concerns = CONCERNS): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-result-presets-'));
  writeFileSync(path.join(dir, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: presets\nopenapi: ./openapi.yaml\n${concerns}${extra}`);
  return dir;
}

const errorsOf = (res: Awaited<ReturnType<typeof compile>>) => res.diagnostics.items.filter((d) => d.severity === 'error');

describe('manifest schema: results.presets', () => {
  const check = (yaml: string) => {
    const diagnostics = new Diagnostics();
    const source = parseYamlSource({ file: 'mcpgen.yaml', text: `name: x\nopenapi: ./o.yaml\n${yaml}`, diagnostics, syntaxCode: 'MCPGEN_MANIFEST_SYNTAX' })!;
    return { valid: validateManifest(source, diagnostics), pointers: diagnostics.items.map((d) => [d.code, d.location.pointer]) };
  };

  it('takes maxTokens, compact, omit and maxStringChars per preset', () => {
    expect(check('results:\n  presets:\n    a: { maxTokens: 20000, compact: false, omit: [], maxStringChars: 64 }\n    b: {}\n').valid).toBe(true);
  });

  it('rejects projection (a build-time argument, not a per-request setting), unknown keys and bad values, where they are', () => {
    expect(check('results: { presets: { a: { projection: true } } }\n').pointers).toEqual([['MCPGEN_MANIFEST_UNKNOWN_KEY', '/results/presets/a/projection']]);
    expect(check('results: { presets: { a: { maxTokens: 255 } } }\n').pointers).toEqual([['MCPGEN_MANIFEST_INVALID', '/results/presets/a/maxTokens']]);
    expect(check('results: { presets: { a: { maxStringChars: 63 } } }\n').pointers).toEqual([['MCPGEN_MANIFEST_INVALID', '/results/presets/a/maxStringChars']]);
    expect(check('results: { presets: { a: { omit: ["x", "x"] } } }\n').pointers).toEqual([['MCPGEN_MANIFEST_INVALID', '/results/presets/a/omit/1']]);
    expect(check('results: { presets: { a: 8000 } }\n').pointers).toEqual([['MCPGEN_MANIFEST_INVALID', '/results/presets/a']]);
  });
});

describe('results.presets in the IR and the generated config', () => {
  it('keeps the presets that set something, with only the keys written, in the emitted order', async () => {
    const res = await compile({
      manifestPath: 'mcpgen.yaml',
      cwd: project(
        'results:\n  maxTokens: 6000\n  presets:\n    writer: { maxStringChars: 200, omit: ["etag"], maxTokens: 3000 }\n    read-only: { compact: false }\n    everything: {}\n',
      ),
      emit: false,
    });
    expect(errorsOf(res)).toEqual([]);
    const ir = res.ir!;
    expect(ir.resultPresets).toStrictEqual({ writer: { maxTokens: 3000, omit: ['etag'], maxStringChars: 200 }, 'read-only': { compact: false } });
    // the server-wide settings are not folded into a preset: the runtime merges at request time
    expect(ir.results.maxTokens).toBe(6000);
    expect(serverConfig(ir).resultPresets).toStrictEqual(ir.resultPresets);
    expect(emitConfigFile(ir)).toContain(
      '  "resultPresets": {\n    "writer": {\n      "maxTokens": 3000,\n      "omit": [\n        "etag"\n      ],\n      "maxStringChars": 200\n    },\n    "read-only": {\n      "compact": false\n    }\n  }',
    );
  });

  it('emits no resultPresets without presets, or when none sets anything', async () => {
    for (const extra of ['', 'results:\n  presets:\n    everything: {}\n']) {
      const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: project(extra), emit: false });
      expect(errorsOf(res)).toEqual([]);
      expect(res.ir!.resultPresets).toBeUndefined();
      expect(serverConfig(res.ir!)).not.toHaveProperty('resultPresets');
      expect(emitConfigFile(res.ir!)).not.toContain('resultPresets');
    }
  });

  it('an undeclared preset is MCPGEN_UNKNOWN_PRESET, located at the key', async () => {
    const res = await compile({
      manifestPath: 'mcpgen.yaml',
      cwd: project('results:\n  presets:\n    reader: { maxTokens: 3000 }\n    writer: { maxTokens: 3000 }\n'),
      emit: false,
    });
    const errors = errorsOf(res);
    expect(errors.map((e) => [e.code, e.location.pointer, e.location.line, e.help])).toEqual([
      ['MCPGEN_UNKNOWN_PRESET', '/results/presets/reader', 15, 'use one of "read-only", "writer", "everything"'],
    ]);
    expect(errors[0]!.message).toBe('results.presets names preset "reader", which concernPresets does not declare');
  });

  it('without concernPresets, every preset named is unknown, with a hint to use the top-level settings', async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: project('results:\n  presets:\n    triage: { maxTokens: 3000 }\n', ''), emit: false });
    expect(errorsOf(res).map((e) => [e.code, e.location.pointer, e.help])).toEqual([
      ['MCPGEN_UNKNOWN_PRESET', '/results/presets/triage', 'declare it under `concernPresets`, or set the top-level `results` for the whole server'],
    ]);
  });
});

/**
 * Preprocessors and the reflection gate through the compiler (load → validate → IR → emit):
 * located diagnostics for every semantic check, the IR they build, and what gets emitted.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';

const SPEC = `openapi: 3.0.3
info: { title: t, version: '1' }
servers: [{ url: 'https://api.example.com' }]
paths:
  /pets/{petId}:
    parameters: [{ name: petId, in: path, required: true, schema: { type: integer } }]
    delete: { operationId: deletePet, responses: { '204': { description: ok } } }
    put:
      operationId: updatePet
      requestBody: { content: { application/json: { schema: { type: object, properties: { name: { type: string } } } } } }
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object, properties: { id: { type: integer } } } } } } }
`;

const HANDLERS = {
  'server/src/handlers/pre.ts':
    'export async function a() { return "a"; }\nexport async function b() { return "b"; }\nexport async function c() { return "c"; }\n',
};
const PRE = (name: string, fn: string, extra = '') => `  - { name: ${name}, handler: 'handlers/pre.ts#${fn}'${extra} }\n`;
const GATE = `{ domain: pets, prompt: why_delete, promptArgs: { petId: '{{petId}}' }, template: 'Why delete {{petId}}?' }`;

function fixture(manifest: string, files: Record<string, string> = HANDLERS): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-gates-'));
  writeFileSync(path.join(dir, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: gates\nopenapi: ./openapi.yaml\n${manifest}`);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

async function diagnose(manifest: string, files?: Record<string, string>) {
  const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: fixture(manifest, files), emit: false });
  return res.diagnostics
    .sorted()
    .map((d) => ({ code: d.code, severity: d.severity, message: d.message, help: d.help, at: `${d.location.line}:${d.location.col} ${d.location.pointer}` }));
}

describe('preprocessors: build-time checks', () => {
  it('reports unknown after names with a suggestion, self-reference, duplicates and clashes with tools', async () => {
    const d = await diagnose(
      `preprocessors:\n${PRE('ctx', 'a', ', after: [ctz]')}${PRE('own', 'b', ', after: [own]')}${PRE('ctx', 'c')}${PRE('deletePet', 'c')}`,
    );
    expect(d).toEqual([
      {
        code: 'MCPGEN_UNKNOWN_PREPROCESSOR',
        severity: 'error',
        message: 'preprocessor "ctx" runs after "ctz", which is not a preprocessor',
        help: 'did you mean "ctx"?',
        at: '4:56 /preprocessors/0/after/0',
      },
      {
        code: 'MCPGEN_PREPROCESSOR_CYCLE',
        severity: 'error',
        message: 'preprocessor "own" is listed in its own `after`',
        help: 'remove it from the list',
        at: '5:56 /preprocessors/1/after/0',
      },
      {
        code: 'MCPGEN_DUPLICATE_PRIMITIVE',
        severity: 'error',
        message: 'preprocessor name "ctx" is already used by entry 0',
        help: 'give each preprocessor a different name',
        at: '6:13 /preprocessors/2/name',
      },
      expect.objectContaining({
        code: 'MCPGEN_DUPLICATE_PRIMITIVE',
        message: 'preprocessor name "deletePet" is also the name of a tool',
        at: '7:13 /preprocessors/3/name',
      }),
    ]);
  });

  it('reports a cycle once, with its path, at an `after` entry on it', async () => {
    const d = await diagnose(`preprocessors:\n${PRE('a', 'a', ', after: [c]')}${PRE('b', 'b', ', after: [a]')}${PRE('c', 'c', ', after: [b]')}`);
    expect(d).toEqual([
      {
        code: 'MCPGEN_PREPROCESSOR_CYCLE',
        severity: 'error',
        message: 'preprocessors wait for each other in a cycle: "a" after "c" after "b" after "a"',
        help: 'remove one `after` entry of the cycle',
        at: '4:54 /preprocessors/0/after/0',
      },
    ]);
  });

  it('reserves the with_context prompt name', async () => {
    const d = await diagnose(`preprocessors:\n${PRE('a', 'a')}prompts:\n  - { name: with_context, messages: [{ text: hi }] }\n`);
    expect(d).toEqual([
      expect.objectContaining({
        code: 'MCPGEN_DUPLICATE_PRIMITIVE',
        message: 'prompt name "with_context" is taken by the preprocessors\' prompt',
        at: '6:13 /prompts/0/name',
      }),
    ]);
  });

  it('emits the preprocessors with their handlers, ships the host helper, and needs zod', async () => {
    const res = await compile({
      manifestPath: 'mcpgen.yaml',
      cwd: fixture(`preprocessors:\n${PRE('late', 'a', ', after: [early], timeoutMs: 50, onError: fail, description: Late.')}${PRE('early', 'b')}`),
      emit: true,
    });
    expect(res.diagnostics.items).toEqual([]);
    const files = res.files!;
    const gen = files.get('src/preprocessors.gen.ts')!;
    expect(gen).toContain('import * as $handlers_pre from "./handlers/pre.js";');
    expect(gen).toMatch(
      /"name": "late",\n {4}"description": "Late.",\n {4}"after": \["early"\],\n {4}"timeoutMs": 50,\n {4}"onError": "fail",\n {4}"handler": \$handlers_pre\.a/,
    );
    expect(files.has('src/runtime/preprocessors/preprocessors-host.ts')).toBe(true);
    expect(files.get('src/server.ts')).toContain('preprocessorNames: preprocessors.map((p) => p.name),');
    expect(files.get('src/server.ts')).toContain('experimental: { preprocessors: preprocessorCapability(preprocessors) as never }');
    // with_context is a prompt: the project needs handlebars (runtime/primitives/prompts.ts) even without manifest prompts
    expect(Object.keys(JSON.parse(files.get('package.json')!).dependencies)).toEqual(expect.arrayContaining(['handlebars', 'zod']));
  });

  it('makes a server of preprocessors alone legitimate (no operation left is then a warning)', async () => {
    const d = await diagnose(`exclude: [{ path: '/**' }]\npreprocessors:\n${PRE('a', 'a')}`);
    expect(d.map((x) => [x.code, x.severity])).toEqual([['MCPGEN_NO_TOOLS', 'warning']]);
  });

  it('reserves persist_justification when the reflection gate has a host flow', async () => {
    const d = await diagnose(`preprocessors:\n${PRE('persist_justification', 'a')}reflection:\n  gates:\n    deletePet: ${GATE}\n`);
    expect(d.map((x) => [x.code, x.message])).toEqual([['MCPGEN_DUPLICATE_PRIMITIVE', 'preprocessor name "persist_justification" is also the name of a tool']]);
  });
});

describe('reflection gate: build-time checks', () => {
  it('accepts one gate or a list, defaults domains to those used, and emits the config', async () => {
    const res = await compile({
      manifestPath: 'mcpgen.yaml',
      cwd: fixture(
        `reflection:\n  gates:\n    deletePet: ${GATE}\n    updatePet:\n      - { domain: pets, prompt: why_change, scope: tool, promptArgs: { change: '{{json body}}' }, template: 'Why {{change}}?' }\n      - { domain: audit, prompt: why_delete, promptArgs: { petId: '{{petId}}' }, template: 'Why delete {{petId}}?' }\n`,
      ),
      emit: true,
    });
    expect(res.diagnostics.items).toEqual([]);
    const r = res.ir!.reflection!;
    // a lenient output schema (nothing required) accepts a hint as structuredContent
    expect(r).toMatchObject({ storeDir: '.preflight/justifications', mode: 'auto', scope: 'domain', domains: ['pets', 'audit'], toolsWithOutputSchema: [] });
    expect(Object.entries(r.gates).map(([t, gs]) => [t, gs.map((g) => `${g.domain}/${g.prompt}${g.scope ? `/${g.scope}` : ''}`)])).toEqual([
      ['deletePet', ['pets/why_delete']],
      ['updatePet', ['pets/why_change/tool', 'audit/why_delete']],
    ]);
    const files = res.files!;
    expect(files.get('src/reflection.gen.ts')).toContain('export const reflection: ReflectionConfig = {');
    expect(files.get('src/server.ts')).toContain(
      'reflection: (key, extra) => (reflectionGate = new ReflectionGate({ ...reflectionConfigFromEnv(reflection, config.envPrefix, key), ...extra })),',
    );
    expect(files.get('src/server.ts')).toContain('installPrompts(server, [...reflectionPrompts]);');
    expect(JSON.parse(files.get('package.json')!).dependencies.handlebars).toBeDefined();
  });

  it('keeps the hint out of structuredContent of tools whose output schema could reject it', async () => {
    const manifest = `reflection:\n  gates:\n    deletePet: ${GATE}\n    updatePet: ${GATE.replace('why_delete', 'why_update')}\n`;
    const strict = await compile({ manifestPath: 'mcpgen.yaml', cwd: fixture(`outputSchemas: strict\n${manifest}`), emit: false });
    expect(strict.ir!.reflection!.toolsWithOutputSchema).toEqual(['updatePet']);
    const perTool = await compile({
      manifestPath: 'mcpgen.yaml',
      cwd: fixture(`overrides:\n  updatePet: { outputSchemas: strict }\n${manifest}`),
      emit: false,
    });
    expect(perTool.ir!.reflection!.toolsWithOutputSchema).toEqual(['updatePet']);
    const none = await compile({ manifestPath: 'mcpgen.yaml', cwd: fixture(`outputSchemas: none\n${manifest}`), emit: false });
    expect(none.ir!.reflection!.toolsWithOutputSchema).toEqual([]);
  });

  it('reports unknown tools, undeclared domains, bad prompt arguments and template problems, each located', async () => {
    const d = await diagnose(
      `reflection:\n  domains: [pets]\n  gates:\n    deletPet: ${GATE}\n    deletePet:\n      - { domain: pest, prompt: p1, promptArgs: { id: '{{petID}}' }, template: 'Delete {{id}} {{why}}' }\n      - { domain: pets, prompt: p2, template: '{{#if x}}never closed' }\n      - { domain: pets, prompt: p1, promptArgs: { id: '{{petId}}' }, template: 'Other text' }\n`,
    );
    expect(d.map((x) => [x.code, x.at, x.message, x.help])).toEqual([
      ['MCPGEN_UNKNOWN_PRIMITIVE', '6:5 /reflection/gates/deletPet', 'gated tool "deletPet" does not exist', 'did you mean "deletePet"?'],
      [
        'MCPGEN_REFLECTION_UNKNOWN_DOMAIN',
        '8:19 /reflection/gates/deletePet/0/domain',
        'domain "pest" is not declared in `reflection.domains`',
        'did you mean "pets"?',
      ],
      [
        'MCPGEN_REFLECTION_PROMPT_ARGUMENT',
        '8:55 /reflection/gates/deletePet/0/promptArgs/id',
        'prompt argument "id" of a gate of deletePet reads {{petID}}, which is not an argument of deletePet',
        'did you mean "petId"?',
      ],
      [
        'MCPGEN_REFLECTION_PROMPT_ARGUMENT',
        '8:80 /reflection/gates/deletePet/0/template',
        'the template of gate prompt "p1" uses {{why}}, which no gate gives it under `promptArgs`',
        'add `why` to `promptArgs` (now: id)',
      ],
      [
        'MCPGEN_PROMPT_TEMPLATE_INVALID',
        '9:47 /reflection/gates/deletePet/1/template',
        expect.stringMatching(/^the template of gate prompt "p2" is not valid: Parse error on line 1/),
        expect.any(String),
      ],
      [
        'MCPGEN_DUPLICATE_PRIMITIVE',
        '10:80 /reflection/gates/deletePet/2/template',
        'gate prompt "p1" is used with two different templates',
        'give this gate another prompt name, or the same template',
      ],
    ]);
  });

  it('keeps gate prompts apart from manifest prompts, and persist_justification apart from tools', async () => {
    const d = await diagnose(
      `extraTools:\n  - { name: persist_justification, inputSchema: { type: object }, handler: 'handlers/pre.ts#a' }\nprompts:\n  - { name: why_delete, messages: [{ text: hi }] }\nreflection:\n  gates:\n    deletePet: ${GATE}\n  justificationSchema: { type: array }\n`,
    );
    expect(d.map((x) => [x.code, x.at, x.message])).toEqual([
      ['MCPGEN_DUPLICATE_TOOL_NAME', '8:3 /reflection', 'tool name "persist_justification" is taken by the reflection gate\'s host flow'],
      ['MCPGEN_DUPLICATE_PRIMITIVE', '9:40 /reflection/gates/deletePet/prompt', 'gate prompt name "why_delete" is also the name of another prompt'],
      ['MCPGEN_TOOL_SCHEMA_INVALID', '10:24 /reflection/justificationSchema', 'the justification schema must be an object schema, got type "array"'],
    ]);
    // mode sampling has no host flow, so the name is free
    const sampling = await diagnose(
      `extraTools:\n  - { name: persist_justification, inputSchema: { type: object }, handler: 'handlers/pre.ts#a' }\nreflection:\n  mode: sampling\n  gates:\n    deletePet: ${GATE}\n`,
    );
    expect(sampling).toEqual([]);
  });

  it('refuses concern mappings of gate prompts (they follow their tool), but not of with_context', async () => {
    const d = await diagnose(
      `concerns: [{ name: risk, values: [low, high] }]\nconcernMappings:\n  prompts: { why_delete: { risk: low }, with_context: { risk: low } }\npreprocessors:\n${PRE('a', 'a')}reflection:\n  gates:\n    deletePet: ${GATE}\n`,
    );
    expect(d.map((x) => [x.code, x.at, x.message, x.help])).toEqual([
      [
        'MCPGEN_UNKNOWN_PRIMITIVE',
        '5:14 /concernMappings/prompts/why_delete',
        'prompt "why_delete" is a reflection gate prompt, which follows its tool and cannot be mapped to concerns',
        'map the gated tool instead: concernMappings.tools.deletePet',
      ],
    ]);
  });

  it('warns about gates that gate nothing, and about unknown arguments of tools that admit any', async () => {
    const d = await diagnose(
      `extraTools:\n  - { name: open, inputSchema: { type: object, properties: { a: { type: string } }, additionalProperties: true }, handler: 'handlers/pre.ts#a' }\nreflection:\n  gates:\n    open: { domain: d, prompt: p, promptArgs: { x: '{{b}}' }, template: '{{x}}' }\n`,
    );
    expect(d.map((x) => [x.code, x.severity, x.message])).toEqual([
      ['MCPGEN_REFLECTION_PROMPT_ARGUMENT', 'warning', 'prompt argument "x" of a gate of open reads {{b}}, which is not a declared argument of open'],
    ]);
    const none = await diagnose(`reflection:\n  mode: host\n`);
    expect(none.map((x) => [x.code, x.severity, x.at])).toEqual([['MCPGEN_REFLECTION_NO_GATES', 'warning', '4:3 /reflection']]);
  });

  it('rejects traversal-shaped domains in the schema', async () => {
    const d = await diagnose(`reflection:\n  domains: ['..', 'a/b']\n  gates:\n    deletePet: { domain: '..', prompt: p, template: t }\n`);
    expect(d.map((x) => [x.code, x.at])).toEqual([
      ['MCPGEN_MANIFEST_INVALID', '4:13 /reflection/domains/0'],
      ['MCPGEN_MANIFEST_INVALID', '4:19 /reflection/domains/1'],
      ['MCPGEN_MANIFEST_INVALID', '6:26 /reflection/gates/deletePet/domain'],
    ]);
  });
});

/**
 * Completion sources and rich prompt messages through the compiler (load → validate → IR →
 * emit): the located diagnostics of each build-time check (MCPGEN_PROMPT_CONTENT,
 * MCPGEN_COMPLETION_SOURCE, MCPGEN_RESOURCE_FILE for embedded files), the values resolved from
 * OpenAPI enums, and what the entry declares (`completions` only when something completes).
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
  /pets/{kind}:
    parameters:
      - { name: kind, in: path, required: true, schema: { type: string, enum: [cat, dog] } }
    get:
      operationId: listPets
      parameters:
        - { name: kind, in: path, required: true, schema: { type: string, enum: [cat, dog, 7, true, null, cat] } }
        - { name: sort, in: query, schema: { type: string } }
        - { name: size, in: header, schema: { $ref: '#/components/schemas/Size' } }
      responses: { '200': { description: ok } }
components:
  schemas:
    Size: { type: string, enum: [s, m, l] }
`;

function fixture(manifest: string, files: Record<string, string | Buffer> = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-pc-'));
  writeFileSync(path.join(dir, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: pc\nopenapi: ./openapi.yaml\n${manifest}`);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

async function build(manifest: string, files: Record<string, string | Buffer> = {}) {
  return compile({ manifestPath: 'mcpgen.yaml', cwd: fixture(manifest, files), emit: true });
}

async function diagnose(manifest: string, files: Record<string, string | Buffer> = {}) {
  const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: fixture(manifest, files), emit: false });
  return res.diagnostics.sorted().map((d) => ({ code: d.code, message: d.message, at: `${d.location.line}:${d.location.col} ${d.location.pointer}` }));
}

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC', 'base64');

describe('completion sources', () => {
  it('resolves OpenAPI enums (operation-level over path-level, $ref followed, strings, no null or duplicates); `complete` wins', async () => {
    const res = await build(
      'prompts:\n  - name: p\n    arguments:\n      - { name: kind, parameter: { operation: listPets, name: kind } }\n      - { name: size, parameter: { operation: listPets, name: size, in: header } }\n      - { name: both, complete: [x, y, x], parameter: { operation: listPets, name: sort } }\n      - { name: none }\n    messages: [{ text: hi }]\n',
    );
    expect(res.diagnostics.items.filter((d) => d.severity === 'error')).toEqual([]);
    expect(res.ir!.prompts[0]!.arguments.map((a) => [a.name, a.complete])).toEqual([
      ['kind', ['cat', 'dog', '7', 'true']],
      ['size', ['s', 'm', 'l']],
      ['both', ['x', 'y']],
      ['none', undefined],
    ]);
    const entry = res.files!.get('src/server.ts')!;
    expect(entry).toContain('  completions: {},');
    expect(entry).toContain('installCompletions(server, { prompts });');
    expect(res.files!.has('src/runtime/primitives/completion.ts')).toBe(true);
  });

  it('declares no completions capability, and ships no completion module, when nothing completes', async () => {
    const res = await build('prompts:\n  - name: p\n    arguments: [{ name: a }]\n    messages: [{ text: hi }]\n');
    expect(res.files!.get('src/server.ts')).not.toMatch(/completion/);
    expect(res.files!.has('src/runtime/primitives/completion.ts')).toBe(false);
  });

  it('reports bindings to operations or parameters that do not exist or have no enum, and unknown template variables', async () => {
    const d = await diagnose(
      'prompts:\n  - name: p\n    arguments:\n      - { name: a, parameter: { operation: nope, name: kind } }\n      - { name: b, parameter: { operation: listPets, name: color } }\n      - { name: c, parameter: { operation: listPets, name: sort } }\n    messages: [{ text: hi }]\n' +
        "resourceTemplates:\n  - uriTemplate: 'x://pets/{kind}'\n    name: t\n    handler: handlers/t.ts#t\n    variables:\n      kind: { complete: [cat] }\n      other: { complete: [x] }\n",
      { 'server/src/handlers/t.ts': 'export const t = () => "t";\n' },
    );
    expect(d.filter((x) => x.code !== 'MCPGEN_HANDLER_MISSING')).toEqual([
      { code: 'MCPGEN_COMPLETION_SOURCE', message: 'no operation has operationId "nope"', at: '6:31 /prompts/0/arguments/0/parameter' },
      { code: 'MCPGEN_COMPLETION_SOURCE', message: 'operation listPets has no parameter "color"', at: '7:31 /prompts/0/arguments/1/parameter' },
      {
        code: 'MCPGEN_COMPLETION_SOURCE',
        message: 'parameter "sort" of operation listPets has no enum to complete from',
        at: '8:31 /prompts/0/arguments/2/parameter',
      },
      { code: 'MCPGEN_COMPLETION_SOURCE', message: '"other" is not a variable of x://pets/{kind}', at: '16:7 /resourceTemplates/0/variables/other' },
    ]);
  });
});

describe('prompt message content', () => {
  it('reports messages with no or two contents, undeclared resources, mismatched media, nameless links, and files outside the folder or too large', async () => {
    const outside = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-pc-out-'));
    writeFileSync(path.join(outside, 'x.png'), PNG);
    const d = await diagnose(
      'prompts:\n  - name: p\n    messages:\n' +
        '      - { role: user }\n' +
        '      - { text: hi, image: { file: ./a.png } }\n' +
        "      - resource: { uri: 'x://nope' }\n" +
        "      - resource: { uri: 'x://a', text: t, file: ./a.png }\n" +
        '      - image: { file: ./notes.txt }\n' +
        "      - resourceLink: { uri: 'x://elsewhere' }\n" +
        `      - image: { file: ${JSON.stringify(path.join(outside, 'x.png'))} }\n` +
        '      - audio: { file: ./big.wav }\n' +
        "resources:\n  - { uri: 'x://docs', name: docs, text: D }\n",
      { 'a.png': PNG, 'notes.txt': 'n', 'big.wav': Buffer.alloc(1024 * 1024 + 1) },
    );
    expect(d.map((x) => [x.code, x.at])).toEqual([
      ['MCPGEN_PROMPT_CONTENT', '6:9 /prompts/0/messages/0'],
      ['MCPGEN_PROMPT_CONTENT', '7:9 /prompts/0/messages/1'],
      ['MCPGEN_PROMPT_CONTENT', '8:26 /prompts/0/messages/2/resource/uri'],
      ['MCPGEN_PROMPT_CONTENT', '9:19 /prompts/0/messages/3/resource'],
      ['MCPGEN_PROMPT_CONTENT', '10:16 /prompts/0/messages/4/image'],
      ['MCPGEN_PROMPT_CONTENT', '11:23 /prompts/0/messages/5/resourceLink'],
      ['MCPGEN_RESOURCE_FILE', '12:24 /prompts/0/messages/6/image/file'],
      ['MCPGEN_RESOURCE_FILE', '13:24 /prompts/0/messages/7/audio/file'],
    ]);
    expect(d[0]!.message).toBe('message 0 of prompt "p" has no content');
    expect(d[1]!.message).toBe('message 1 of prompt "p" gives `text` and `image`');
    expect(d[2]!.message).toBe('message 2 of prompt "p": "x://nope" is not one of `resources`');
    expect(d[4]!.message).toBe('message 4 of prompt "p": ./notes.txt is text/plain, not an image');
    expect(d[6]!.message).toMatch(/is outside the manifest's folder$/);
    expect(d[7]!.message).toBe('resource file ./big.wav cannot be read: 1048577 bytes, more than the 1048576 a prompt may embed');
  });

  it('checks templates in an embedded resource against the arguments, and keeps hostile text as data in the emitted file', async () => {
    const hostile = '*/ `${process.exit(1)}` \\u2028 \'" </script>';
    const res = await build(
      `prompts:\n  - name: p\n    arguments: [{ name: a }]\n    messages:\n      - resource: { uri: 'x://{{a}}/{{b}}', text: ${JSON.stringify(hostile)} }\n`,
    );
    expect(res.diagnostics.items.map((x) => [x.code, x.location.pointer])).toEqual([['MCPGEN_PROMPT_UNKNOWN_VARIABLE', '/prompts/0/messages/0/resource/uri']]);
    const file = res.files!.get('src/prompts.gen.ts')!;
    // the text is one JSON string literal: evaluating the array gives it back unchanged
    const literal = file.slice(file.indexOf('= [') + 2, file.lastIndexOf(';'));
    expect((JSON.parse(literal) as Array<{ messages: Array<{ resource: { text: string } }> }>)[0]!.messages[0]!.resource.text).toBe(hostile);
  });
});

/**
 * Custom primitives and concerns through the whole compiler (load → validate → IR → emit):
 * located diagnostics for every semantic check, the IR they build, what gets emitted, and the
 * write-once handler stubs.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { compile } from '../../src/compile.js';
import type { Diagnostic } from '../../src/core/diagnostics.js';

const SPEC = `openapi: 3.0.3
info: { title: t, version: '1' }
servers: [{ url: 'https://api.example.com' }]
paths:
  /pets:
    get: { operationId: listPets, responses: { '200': { description: ok } } }
    post: { operationId: createPet, responses: { '201': { description: ok } } }
`;

const TOOL = `  - name: fee
    inputSchema: { type: object, properties: { age: { type: integer } }, required: [age] }
    outputSchema: { type: object, properties: { fee: { type: number } } }
    handler: handlers/fee.ts#fee
`;

/** A project folder with the spec, the manifest (`name`/`openapi` prepended) and extra files. */
function fixture(manifest: string, files: Record<string, string | Buffer> = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-prim-'));
  writeFileSync(path.join(dir, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: prim\nopenapi: ./openapi.yaml\n${manifest}`);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

const handlerFile = { 'server/src/handlers/fee.ts': 'export async function fee() { return { fee: 1 }; }\n' };

async function diagnose(
  manifest: string,
  files: Record<string, string | Buffer> = handlerFile,
): Promise<Array<Pick<Diagnostic, 'code' | 'severity' | 'message' | 'help'> & { at: string }>> {
  const dir = fixture(manifest, files);
  const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: false });
  return res.diagnostics
    .sorted()
    .map((d) => ({ code: d.code, severity: d.severity, message: d.message, help: d.help, at: `${d.location.line}:${d.location.col} ${d.location.pointer}` }));
}

describe('custom primitives: IR and emitted files', () => {
  it('builds tools, prompts, text/blob/handler resources and templates, and emits only what is used', async () => {
    const dir = fixture(
      `extraTools:\n${TOOL}prompts:\n  - name: hello\n    arguments: [{ name: who, required: true }]\n    messages: [{ text: 'Hi {{who}}' }, { role: assistant, text: Hello }]\n` +
        `resources:\n  - { uri: 'x://a', name: a, text: A }\n  - { uri: 'x://b', name: b, file: ./b.json }\n  - { uri: 'x://c', name: c, file: ./c.bin, mimeType: text/plain }\n  - { uri: 'x://d', name: d, handler: 'handlers/res.ts#readD' }\n` +
        `resourceTemplates:\n  - { uriTemplate: 'x://pets/{id}{?full}', name: pet, handler: './handlers/res.ts#readPet' }\n`,
      {
        ...handlerFile,
        'b.json': '{"b":1}',
        'c.bin': Buffer.from([0xff, 0x00, 0x01]),
        'server/src/handlers/res.ts': 'export const readD = () => "d";\nexport function readPet() { return "p"; }\n',
      },
    );
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: true });
    expect(res.diagnostics.items).toEqual([]);
    const ir = res.ir!;
    expect(ir.extraTools.map((t) => [t.name, t.argsTypeName, t.resultTypeName, t.constName, t.handler])).toStrictEqual([
      [
        'fee',
        'FeeArgs',
        'FeeResult',
        'feeTool',
        {
          file: 'handlers/fee.ts',
          exportName: 'fee',
          moduleAlias: '$handlers_fee',
          importPath: './handlers/fee.js',
          origin: { file: 'mcpgen.yaml', pointer: '/extraTools/0/handler' },
        },
      ],
    ]);
    expect(ir.prompts[0]).toStrictEqual({
      kind: 'prompt',
      name: 'hello',
      arguments: [{ name: 'who', required: true }],
      messages: [
        { role: 'user', text: 'Hi {{who}}' },
        { role: 'assistant', text: 'Hello' },
      ],
      origin: { file: 'mcpgen.yaml', pointer: '/prompts/0' },
    });
    expect(ir.resources.map((r) => [r.uri, r.mimeType, r.content.kind === 'handler' ? r.content.handler.moduleAlias : r.content])).toStrictEqual([
      ['x://a', undefined, { kind: 'text', text: 'A' }],
      ['x://b', 'application/json', { kind: 'text', text: '{"b":1}' }],
      ['x://c', 'text/plain', { kind: 'blob', blob: '/wAB' }], // textual type, but not UTF-8
      ['x://d', undefined, '$handlers_res'],
    ]);
    expect(ir.resourceTemplates.map((t) => [t.uriTemplate, t.variables, t.handler.file])).toStrictEqual([
      ['x://pets/{id}{?full}', ['id', 'full'], 'handlers/res.ts'],
    ]);
    const files = res.files!;
    expect([...files.keys()].filter((f) => !f.startsWith('src/runtime/'))).toEqual([
      '.dockerignore',
      '.env.example',
      '.gitignore',
      '.mcp.json',
      '.mcpbignore',
      'Dockerfile',
      'README.md',
      'manifest.json',
      'package.json',
      'src/config.gen.ts',
      'src/extra-tools.gen.ts',
      'src/index.ts',
      'src/prompts.gen.ts',
      'src/resources.gen.ts',
      'src/server.ts',
      'src/tools.gen.ts',
      'tsconfig.json',
      '.mcpgen.json',
    ]);
    expect(files.get('src/extra-tools.gen.ts')).toContain('export const feeTool = defineTool<FeeArgs, FeeResult>({');
    // no concerns: no concern module, no listChanged, no experimental capability
    const pkg = JSON.parse(files.get('package.json')!) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies)).toEqual([
      '@modelcontextprotocol/node',
      '@modelcontextprotocol/server',
      'ajv',
      'ajv-formats',
      'handlebars',
      'ioredis',
      'jose',
      'rate-limiter-flexible',
      're2js',
      'undici',
      'zod',
    ]);
    expect(files.has('src/runtime/concerns/concern-protocol.ts')).toBe(false);
    // handler resources and templates can change: subscriptions, and the capability says so
    expect(files.get('src/server.ts')).toContain(
      'const capabilities: ServerCapabilities = {\n  tools: {},\n  prompts: {},\n  resources: { subscribe: true },\n};',
    );
    expect(files.get('src/server.ts')).toContain(
      'installPrompts(server, prompts);\n    installResources(server, { resources, templates: resourceTemplates });\n    installSubscriptions(server, instance, { resources, templates: resourceTemplates });',
    );
    expect(files.get('src/server.ts')).toContain('  subscriptions: resourceChanges,');
    expect(files.has('src/runtime/primitives/subscriptions.ts')).toBe(true);
  });

  it('scopes of prompts, resources and templates: deduplicated and sorted in the IR, emitted, handed to main, and the base gate guards them', async () => {
    const dir = fixture(
      `prompts:\n  - { name: p, scopes: [write, read, write], messages: [{ text: hi }] }\n  - { name: q, messages: [{ text: hi }] }\n` +
        `resources:\n  - { uri: 'x://a', name: a, text: A, scopes: [docs] }\n` +
        `resourceTemplates:\n  - { uriTemplate: 'x://pets/{id}', name: pet, handler: 'handlers/res.ts#readPet', scopes: [notes] }\n`,
      { 'server/src/handlers/res.ts': 'export function readPet() { return "p"; }\n' },
    );
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: true });
    expect(res.diagnostics.items).toEqual([]);
    expect(res.ir!.prompts.map((p) => p.scopes)).toStrictEqual([['read', 'write'], undefined]);
    expect(res.ir!.resources[0]!.scopes).toStrictEqual(['docs']);
    expect(res.ir!.resourceTemplates[0]!.scopes).toStrictEqual(['notes']);
    const files = res.files!;
    expect(files.get('src/prompts.gen.ts')).toContain('"scopes": [\n      "read",\n      "write"\n    ],');
    expect(files.get('src/resources.gen.ts')).toContain('"scopes": ["docs"],');
    const entry = files.get('src/server.ts')!;
    expect(entry).toContain('  scoped: { prompts, resources, templates: resourceTemplates },');
    expect(entry).toContain('  install: (server, instance, base) => {\n    const gate = base;\n    installPrompts(server, prompts, { gate });');
  });

  it("a plain OpenAPI server's bin loads no prompt, resource or concern code; only its library entry does (handlebars for registered prompts)", async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: fixture(''), emit: true });
    const files = res.files!;
    expect(files.get('src/server.ts')).toMatch(/\nawait main\(config, tools\);\n$/);
    // the modules each entry loads: its relative imports, followed through the emitted files
    const closure = (entry: string): string[] => {
      const seen = new Set<string>();
      const visit = (file: string) => {
        if (seen.has(file) || !files.has(file)) return;
        seen.add(file);
        for (const m of files.get(file)!.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)) visit(path.posix.join(path.posix.dirname(file), m[1]! + '.ts'));
      };
      visit(entry);
      return [...seen];
    };
    const primitiveCode = (f: string) => /prompts|resources|concern|library|registry/.test(f);
    expect(closure('src/server.ts').filter(primitiveCode)).toEqual([]);
    expect(closure('src/index.ts').filter(primitiveCode).sort()).toEqual([
      'src/runtime/concerns/concerns.ts',
      'src/runtime/library.ts',
      'src/runtime/primitives/prompts.ts',
      'src/runtime/primitives/resources.ts',
      'src/runtime/server/registry.ts',
    ]);
    expect([...files.keys()].filter((f) => /\.gen\.ts$/.test(f) && /prompts|resources|concern|extra-tools/.test(f))).toEqual([]);
    expect(Object.keys((JSON.parse(files.get('package.json')!) as { dependencies: object }).dependencies)).toEqual([
      '@modelcontextprotocol/node',
      '@modelcontextprotocol/server',
      'ajv',
      'ajv-formats',
      'handlebars',
      'ioredis',
      'jose',
      'rate-limiter-flexible',
      're2js',
      'undici',
      'zod',
    ]);
  });
});

describe('custom primitives: located diagnostics', () => {
  it('names colliding with operation tools, other prompts, resources and templates', async () => {
    const d = await diagnose(
      `extraTools:\n${TOOL}  - name: listPets\n    inputSchema: { type: object }\n    handler: handlers/fee.ts#fee\n` +
        `prompts:\n  - { name: p, messages: [{ text: a }] }\n  - { name: p, messages: [{ text: b }] }\n` +
        `resources:\n  - { uri: 'x://a', name: a, text: A }\n  - { uri: 'x://a', name: b, text: B }\n` +
        `resourceTemplates:\n  - { uriTemplate: 'x://{id}', name: t, handler: 'handlers/fee.ts#fee' }\n  - { uriTemplate: 'x://{id}', name: u, handler: 'handlers/fee.ts#fee' }\n`,
    );
    expect(d.map((x) => [x.code, x.at])).toEqual([
      ['MCPGEN_DUPLICATE_TOOL_NAME', '8:11 /extraTools/1/name'],
      ['MCPGEN_DUPLICATE_PRIMITIVE', '13:13 /prompts/1/name'],
      ['MCPGEN_DUPLICATE_PRIMITIVE', '16:12 /resources/1/uri'],
      ['MCPGEN_DUPLICATE_PRIMITIVE', '19:20 /resourceTemplates/1/uriTemplate'],
      // the operation's side of the clash, in the spec
      ['MCPGEN_DUPLICATE_TOOL_NAME', '6:10 /paths/~1pets/get'],
    ]);
    expect(d[0]!.message).toBe('tool name "listPets" of extraTools[1] is also used by GET /pets');
    expect(d[1]!.message).toBe('prompt name "p" is already used by entry 0');
  });

  it('concern mappings: unknown primitives, concerns and values, with did-you-mean', async () => {
    const d = await diagnose(
      `extraTools:\n${TOOL}concerns:\n  - { name: risk, values: [low, high], default: medium }\n` +
        `concernMappings:\n  tools:\n    lisPets: { risk: low }\n    fee: { rsk: low, risk: [low, hihg] }\n  prompts:\n    nope: { risk: low }\n` +
        `concernPresets:\n  safe: { risk: lo }\n`,
    );
    expect(d.map((x) => [x.code, x.at, x.help])).toEqual([
      ['MCPGEN_UNKNOWN_CONCERN_VALUE', '9:49 /concerns/0/default', 'allowed values: low, high'],
      ['MCPGEN_UNKNOWN_PRIMITIVE', '12:5 /concernMappings/tools/lisPets', 'did you mean "listPets"?'],
      ['MCPGEN_UNKNOWN_CONCERN', '13:12 /concernMappings/tools/fee/rsk', 'did you mean "risk"?'],
      ['MCPGEN_UNKNOWN_CONCERN_VALUE', '13:34 /concernMappings/tools/fee/risk/1', 'did you mean "high"?'],
      ['MCPGEN_UNKNOWN_PRIMITIVE', '15:5 /concernMappings/prompts/nope', 'the server has no prompts'],
      ['MCPGEN_UNKNOWN_CONCERN_VALUE', '17:17 /concernPresets/safe/risk', 'did you mean "low"?'],
    ]);
  });

  it('prompt templates: a syntax error is located at the message, an unknown variable warns', async () => {
    const d = await diagnose(
      `prompts:\n  - name: p\n    arguments: [{ name: who }]\n    messages:\n      - text: "Hi {{who}}"\n      - text: "{{#if who}}\\n{{whom}}"\n  - name: q\n    messages: [{ text: "{{wat}}" }]\n`,
    );
    expect(d.map((x) => [x.code, x.severity, x.at])).toEqual([
      ['MCPGEN_PROMPT_TEMPLATE_INVALID', 'error', '8:15 /prompts/0/messages/1/text'],
      ['MCPGEN_PROMPT_UNKNOWN_VARIABLE', 'warning', '10:24 /prompts/1/messages/0/text'],
    ]);
    expect(d[0]!.message).toMatch(/^message 1 of prompt "p" is not a valid template: Parse error on line 2: Expecting .* got 'EOF'$/);
    expect(d[1]!.message).toBe('message 0 of prompt "q" uses {{wat}}, which is not an argument (the prompt declares no arguments)');
  });

  it('handlers: a missing export is an error at the handler value; a generated path is refused', async () => {
    const d = await diagnose(`extraTools:\n${TOOL.replace('#fee', '#feee')}  - { name: g, inputSchema: { type: object }, handler: 'tools.gen.ts#g' }\n`);
    expect(d.map((x) => [x.code, x.at, x.message])).toEqual([
      ['MCPGEN_HANDLER_EXPORT_MISSING', '7:14 /extraTools/0/handler', 'handler file server/src/handlers/fee.ts does not export "feee"'],
      ['MCPGEN_HANDLER_INVALID', '8:56 /extraTools/1/handler', 'handler file src/tools.gen.ts is a file mcpgen generates'],
    ]);
  });

  it('resources: content, embedded files, URI templates and tool schemas', async () => {
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-outside-'));
    writeFileSync(path.join(elsewhere, 'outside.txt'), 'secret');
    const d = await diagnose(
      `extraTools:\n  - { name: s, inputSchema: { type: string }, handler: 'h/x.ts#x' }\n  - { name: t, inputSchema: { type: object, properties: { a: { type: nope } } }, handler: 'h/x.ts#x' }\n` +
        `resources:\n  - { uri: 'x://a', name: a }\n  - { uri: 'x://b', name: b, text: B, file: ./b.txt }\n  - { uri: 'x://c', name: c, file: ./missing.txt }\n  - { uri: 'x://d', name: d, file: '${path.join(elsewhere, 'outside.txt')}' }\n` +
        `resourceTemplates:\n  - { uriTemplate: 'x://{a-b}', name: t, handler: 'h/x.ts#x' }\n`,
      { 'server/src/h/x.ts': 'export const x = 1;\n', 'b.txt': 'b' },
    );
    expect(d.map((x) => [x.code, x.at])).toEqual([
      ['MCPGEN_TOOL_SCHEMA_INVALID', '4:29 /extraTools/0/inputSchema'],
      ['MCPGEN_TOOL_SCHEMA_INVALID', '5:29 /extraTools/1/inputSchema'],
      ['MCPGEN_RESOURCE_CONTENT', '7:5 /resources/0'],
      ['MCPGEN_RESOURCE_CONTENT', '8:5 /resources/1'],
      ['MCPGEN_RESOURCE_FILE', '9:36 /resources/2/file'],
      ['MCPGEN_RESOURCE_FILE', '10:36 /resources/3/file'],
      ['MCPGEN_INVALID_URI_TEMPLATE', '12:20 /resourceTemplates/0/uriTemplate'],
    ]);
    expect(d[3]!.message).toBe('resource "x://b" gives `text` and `file`');
    expect(d[4]!.message).toBe('resource file ./missing.txt does not exist');
    expect(d[5]!.message).toBe(`resource file ${path.join(elsewhere, 'outside.txt')} is outside the manifest's folder`);
  });

  it('refreshMs needs a handler; an x-mcp-header a 2026-07-28 client would reject is refused', async () => {
    const d = await diagnose(
      `extraTools:\n  - { name: s, inputSchema: { type: object, properties: { n: { type: number, x-mcp-header: N } } }, handler: 'h/x.ts#x' }\n` +
        `resources:\n  - { uri: 'x://a', name: a, text: A, refreshMs: 1000 }\n  - { uri: 'x://b', name: b, handler: 'h/x.ts#x', refreshMs: 1000 }\n`,
      { 'server/src/h/x.ts': 'export const x = 1;\n' },
    );
    expect(d.map((x) => [x.code, x.at, x.message])).toEqual([
      [
        'MCPGEN_TOOL_SCHEMA_INVALID',
        '4:29 /extraTools/0/inputSchema',
        'the input schema\'s x-mcp-header is invalid: n: x-mcp-header is allowed only on a string, integer or boolean property, got type "number"',
      ],
      ['MCPGEN_RESOURCE_CONTENT', '6:50 /resources/0/refreshMs', 'resource "x://a" has `refreshMs` but no handler: static content never changes'],
    ]);
  });

  it('the schema refuses handler paths that leave src/ or are not TypeScript', async () => {
    for (const handler of ['../x.ts#f', '/abs/x.ts#f', 'x.js#f', 'x.ts', 'a/../b.ts#f', 'x.ts#not-an-id']) {
      const d = await diagnose(`extraTools:\n  - { name: s, inputSchema: { type: object }, handler: '${handler}' }\n`);
      expect(
        d.map((x) => [x.code, x.at]),
        handler,
      ).toEqual([['MCPGEN_MANIFEST_INVALID', '4:56 /extraTools/0/handler']]);
    }
  });
});

describe('handler stubs', () => {
  const io = () => {
    const out = { stdout: '', stderr: '' };
    return { out, io: { stdout: (s: string) => void (out.stdout += s), stderr: (s: string) => void (out.stderr += s), cwd: '' } };
  };

  it('are written once by build, never overwritten, never listed as generated, and count as drift for --check', async () => {
    const dir = fixture(`extraTools:\n${TOOL}resourceTemplates:\n  - { uriTemplate: 'x://{id}', name: t, handler: 'handlers/fee.ts#readIt' }\n`, {});
    const stub = path.join(dir, 'server/src/handlers/fee.ts');
    const check = io();
    expect(await main(['build', 'mcpgen.yaml', '--check'], { ...check.io, cwd: dir })).toBe(1);
    expect(check.out.stderr).toContain('missing  server/src/handlers/fee.ts (handler file; `mcpgen build` writes a stub)');
    expect(existsSync(stub)).toBe(false);

    const first = io();
    expect(await main(['build', 'mcpgen.yaml'], { ...first.io, cwd: dir })).toBe(0);
    expect(first.out.stdout).toContain('Wrote handler stub server/src/handlers/fee.ts');
    expect(first.out.stderr).toContain('MCPGEN_HANDLER_MISSING');
    const text = readFileSync(stub, 'utf8');
    expect(text).not.toContain('@generated');
    expect(text).toContain('import type { FeeArgs, FeeResult } from "../extra-tools.gen.js";');
    expect(text).toContain('export async function fee(_args: FeeArgs, _ctx: ExtraToolContext): Promise<FeeResult> {');
    expect(text).toContain('export async function readIt(_uri: URL, _variables: Variables, _extra: RequestExtra): Promise<ResourceContent> {');
    // runtime types come from the one module whose path stays put, which the project ships
    expect(text).toContain('import type { ExtraToolContext, RequestExtra, ResourceContent, Variables } from "../runtime/handlers.js";');
    expect(text).not.toMatch(/@modelcontextprotocol|runtime\/(?!handlers\.js)/);
    expect(existsSync(path.join(dir, 'server/src/runtime/handlers.ts'))).toBe(true);
    const lock = JSON.parse(readFileSync(path.join(dir, 'server/.mcpgen.json'), 'utf8')) as { files: Record<string, string> };
    expect(Object.keys(lock.files)).not.toContain('src/handlers/fee.ts');

    const edited = text.replace('throw new Error("the fee tool is not implemented yet: edit src/handlers/fee.ts");', 'return { fee: 2 };');
    writeFileSync(stub, edited);
    const again = io();
    expect(await main(['build', 'mcpgen.yaml'], { ...again.io, cwd: dir })).toBe(0);
    expect(again.out.stdout).not.toContain('Wrote handler stub');
    expect(readFileSync(stub, 'utf8')).toBe(edited);
    expect(await main(['build', 'mcpgen.yaml', '--check'], { ...io().io, cwd: dir })).toBe(0);
  });
});

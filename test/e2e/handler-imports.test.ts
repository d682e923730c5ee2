/**
 * The runtime module for handler code, `src/runtime/handlers.ts`: a project whose handler files
 * import everything from it (types, notify functions, errors; from `src/handlers/` and from a
 * folder below it) is built, compiled with tsc and served over stdio, where the imported values
 * work. And a handler file that still imports a flat runtime path from before the runtime had
 * folders gets MCPGEN_HANDLER_RUNTIME_IMPORT from `validate` and `build`, at the import's line
 * and column, naming the old path and the new one, and the file is left as it was.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { connect } from '../helpers/generated-server.js';
import { ROOT, run } from '../helpers/project.js';

const MANIFEST = `name: hfx
version: 1.0.0
openapi: ./openapi.yaml
output: ./server
extraTools:
  - name: touch
    description: Tells listeners that a note changed.
    inputSchema: { type: object, properties: { fail: { type: boolean } } }
    handler: handlers/touch.ts#touch
resourceTemplates:
  - uriTemplate: 'notes://{id}'
    name: note
    handler: handlers/deep/notes.ts#readNote
    variables:
      id: { complete: handlers/deep/notes.ts#completeId }
preprocessors:
  - name: hint
    description: Adds a hint.
    handler: handlers/deep/notes.ts#hint
`;

const SPEC = `openapi: 3.0.3
info: { title: H, version: 1.0.0 }
servers: [{ url: 'http://127.0.0.1:9' }]
paths:
  /status:
    get:
      operationId: getStatus
      responses: { '200': { description: ok } }
`;

const TOUCH = `import { InputRequestFailed, notifyListChanged, notifyResourceUpdated, ProtocolError, ProtocolErrorCode } from '../runtime/handlers.js';
import type { ApiResult, ElicitAnswer, ExtraToolContext, ListKind } from '../runtime/handlers.js';
import type { TouchArgs, TouchResult } from '../extra-tools.gen.js';

export async function touch(args: TouchArgs, ctx: ExtraToolContext): Promise<TouchResult> {
  if (args.fail === true) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'refused on purpose');
  const kind: ListKind = 'resources';
  notifyListChanged(kind);
  notifyResourceUpdated('notes://1');
  const unused: ApiResult | ElicitAnswer | undefined = undefined;
  return \`touched \${typeof ctx.signal} \${typeof InputRequestFailed} \${String(unused)}\`;
}
`;

const NOTES = `import type { CompletionContext, PreprocessorContext, RequestExtra, ResourceContent, Variables } from '../../runtime/handlers.js';

export async function readNote(_uri: URL, variables: Variables, _extra: RequestExtra): Promise<ResourceContent> {
  return { text: \`note \${String(variables.id)}\`, mimeType: 'text/plain' };
}

export async function completeId(value: string, _context: CompletionContext): Promise<string[]> {
  return ['1', '2'].filter((v) => v.startsWith(value));
}

export async function hint(request: { input: string }, ctx: PreprocessorContext): Promise<unknown> {
  return \`\${request.input} \${typeof ctx.signal}\`;
}
`;

const work = path.join(ROOT, '.cache/handler-imports-e2e');
afterAll(() => rmSync(work, { recursive: true, force: true }));

function project(name: string, files: Record<string, string>): string {
  const dir = path.join(work, name);
  rmSync(dir, { recursive: true, force: true });
  for (const [file, text] of Object.entries({ 'mcpgen.yaml': MANIFEST, 'openapi.yaml': SPEC, ...files })) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

async function cli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const code = await main(args, { stdout: (s: string) => void (out.stdout += s), stderr: (s: string) => void (out.stderr += s), cwd });
  return { code, ...out };
}

describe('handler code imports the runtime from src/runtime/handlers.ts', () => {
  it('builds without warnings, type-checks, and the imported functions and errors work in the served tool', async () => {
    const dir = project('stable', { 'server/src/handlers/touch.ts': TOUCH, 'server/src/handlers/deep/notes.ts': NOTES });
    const built = await cli(['build', 'mcpgen.yaml'], dir);
    expect(built.stderr).not.toContain('MCPGEN_');
    expect(built.code).toBe(0);
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'server')], { maxBuffer: 16 * 1024 * 1024 }).catch(
      (e: { stdout?: string }) => {
        throw new Error(`the project does not compile:\n${e.stdout ?? String(e)}`);
      },
    );
    const c = await connect(path.join(dir, 'server'), {});
    try {
      const ok = await c.client.callTool({ name: 'touch', arguments: {} });
      expect(ok.content).toEqual([{ type: 'text', text: 'touched object function undefined' }]);
      // a ProtocolError from the module fails the call with its JSON-RPC error, not an isError result
      await expect(c.client.callTool({ name: 'touch', arguments: { fail: true } })).rejects.toThrow(/refused on purpose/);
      const read = await c.client.readResource({ uri: 'notes://7' });
      expect(read.contents).toEqual([{ uri: 'notes://7', mimeType: 'text/plain', text: 'note 7' }]);
    } finally {
      await c.close();
    }
  });
});

describe('MCPGEN_HANDLER_RUNTIME_IMPORT', () => {
  const OLD_TOUCH = TOUCH.replace(
    "import type { ApiResult, ElicitAnswer, ExtraToolContext, ListKind } from '../runtime/handlers.js';",
    "import type { ApiResult } from '../runtime/tools/api-client.js';\nimport type { ElicitAnswer } from '../runtime/tools/handler-input.js';\nimport type { ExtraToolContext } from '../runtime/extra-tools.js';\nimport type { ListKind } from '../runtime/list-changes.js';",
  );
  const OLD_NOTES = NOTES.replace(
    "import type { CompletionContext, PreprocessorContext, RequestExtra, ResourceContent, Variables } from '../../runtime/handlers.js';",
    'import type { Variables } from "@modelcontextprotocol/server";\nimport type { CompletionContext } from "../../runtime/primitives/completion.js";\nimport type { PreprocessorContext } from "../../runtime/preprocessors.js";\nimport type { RequestExtra } from "../../runtime/primitives.js";\nimport type { ResourceContent } from \'../../runtime/resources.js\';',
  );

  it('validate and build name each flat runtime import at its line and column, with the replacement, and leave the files alone', async () => {
    const dir = project('old', { 'server/src/handlers/touch.ts': OLD_TOUCH, 'server/src/handlers/deep/notes.ts': OLD_NOTES });
    const expected = [
      "server/src/handlers/deep/notes.ts:3:42 warning MCPGEN_HANDLER_RUNTIME_IMPORT handler file server/src/handlers/deep/notes.ts imports ../../runtime/preprocessors.js, a runtime module that no longer exists (the runtime's modules are in folders now); the project will not compile",
      "  help: import from '../../runtime/handlers.js' instead: it exports every type and function handlers use, and its path stays the same (mcpgen does not edit your file)",
      "server/src/handlers/deep/notes.ts:4:35 warning MCPGEN_HANDLER_RUNTIME_IMPORT handler file server/src/handlers/deep/notes.ts imports ../../runtime/primitives.js, a runtime module that no longer exists (the runtime's modules are in folders now); the project will not compile",
      "server/src/handlers/deep/notes.ts:5:38 warning MCPGEN_HANDLER_RUNTIME_IMPORT handler file server/src/handlers/deep/notes.ts imports ../../runtime/resources.js, a runtime module that no longer exists (the runtime's modules are in folders now); the project will not compile",
      "server/src/handlers/touch.ts:4:39 warning MCPGEN_HANDLER_RUNTIME_IMPORT handler file server/src/handlers/touch.ts imports ../runtime/extra-tools.js, a runtime module that no longer exists (the runtime's modules are in folders now); the project will not compile",
      "  help: import from '../runtime/handlers.js' instead: it exports every type and function handlers use, and its path stays the same (mcpgen does not edit your file)",
      "server/src/handlers/touch.ts:5:31 warning MCPGEN_HANDLER_RUNTIME_IMPORT handler file server/src/handlers/touch.ts imports ../runtime/list-changes.js, a runtime module that no longer exists (the runtime's modules are in folders now); the project will not compile",
    ];
    for (const command of ['validate', 'build']) {
      const res = await cli([command, 'mcpgen.yaml'], dir);
      expect(res.code, res.stderr).toBe(0);
      const lines = res.stderr.split('\n').filter((l) => l.includes('MCPGEN_HANDLER_RUNTIME_IMPORT'));
      // one per flat import (the folder paths and the SDK import still resolve: no warning for them)
      expect(lines).toEqual(expected.filter((l) => !l.startsWith('  help')));
      for (const help of expected.filter((l) => l.startsWith('  help'))) expect(res.stderr).toContain(help);
    }
    expect(readFileSync(path.join(dir, 'server/src/handlers/touch.ts'), 'utf8')).toBe(OLD_TOUCH);
    expect(readFileSync(path.join(dir, 'server/src/handlers/deep/notes.ts'), 'utf8')).toBe(OLD_NOTES);
  });
});

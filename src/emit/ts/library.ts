/**
 * Emits the entry of a project whose manifest says `entry: custom`: `src/index.ts`, the package's
 * library entry (`createServer()` over the same wiring a generated entry passes to `main`, with
 * the registered primitives added when it serves: runtime/library.ts), `src/server.ts`, the `bin`
 * (one call: the user's `register` from `src/main.ts`, then serve), and the stub of `src/main.ts`,
 * written once and never overwritten (the user's file, as handler stubs are).
 */

import { SEARCH_TOOL_NAMES } from '../../../templates/runtime/search/search-tools.js';
import { usesSearch } from '../../ir/features/discovery.js';
import { WITH_CONTEXT_PROMPT } from '../../ir/features/preprocessors.js';
import { PERSIST_TOOL_NAME } from '../../ir/features/reflection.js';
import type { IrServer } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { tsLiteral } from '../safe.js';

/** The user's registration file (project path), and the function it exports. */
export const USER_ENTRY = { file: 'src/main.ts', export: 'register' } as const;

/** What the generated entry's emitter computed: its import lines, declarations, capability lines and `main` option lines. */
export type EntryPieces = {
  readonly imports: readonly string[];
  readonly decls: string;
  readonly capabilities: readonly string[];
  readonly extensions: readonly string[];
};

/** What the server has before any registration (runtime `Taken`): a registration of one of these throws. */
export function takenNames(ir: IrServer): { tools: string[]; prompts: string[]; resources: string[]; resourceTemplates: string[] } {
  const hostFlow = ir.reflection !== undefined && ir.reflection.mode !== 'sampling';
  const tools = [
    ...ir.tools.map((t) => t.name),
    ...ir.extraTools.map((t) => t.name),
    ...ir.preprocessors.map((p) => p.name),
    ...(hostFlow ? [PERSIST_TOOL_NAME] : []),
    ...(usesSearch(ir) ? Object.values(SEARCH_TOOL_NAMES) : []),
  ];
  const gatePrompts = [...new Set(Object.values(ir.reflection?.gates ?? {}).flatMap((gates) => gates.map((g) => g.prompt)))];
  const prompts = [...ir.prompts.map((p) => p.name), ...gatePrompts, ...(ir.preprocessors.length > 0 ? [WITH_CONTEXT_PROMPT] : [])];
  return { tools, prompts, resources: ir.resources.map((r) => r.uri), resourceTemplates: ir.resourceTemplates.map((t) => t.uriTemplate) };
}

/** Renders `src/index.ts` of an `entry: custom` project. */
export function emitLibraryEntry(ir: IrServer, pieces: EntryPieces): string {
  const hasCaps = pieces.capabilities.length > 0;
  // the generated entry of a plain manifest declares no capabilities of its own: the library entry always does
  const typeImport = "import type { ServerCapabilities } from '@modelcontextprotocol/server';";
  const imports = [...(hasCaps && !pieces.imports.includes(typeImport) ? [typeImport] : []), ...pieces.imports]
    .filter((line) => hasCaps || !line.includes('ServerCapabilities'))
    .map((line) =>
      line === "import { main } from './runtime/main.js';"
        ? "import { createLibraryServer } from './runtime/library.js';\nimport type { LibraryServer } from './runtime/library.js';"
        : line,
    );
  // the policy's rules and limits select registered primitives too (runtime/policy/registered-policy.ts)
  const ext = [...(hasCaps ? [] : ['  capabilities,']), ...pieces.extensions].map((l) =>
    l.replace('createPolicy(policy, ', 'createPolicy(registeredPolicy(policy, registry.primitives()), '),
  );
  if (ext.some((l) => l.includes('registeredPolicy(')))
    imports.push("import { withRegistered as registeredPolicy } from './runtime/policy/registered-policy.js';");
  const body = ext.map((l) => '    ' + l.replace(/\n/g, '\n    ')).join('\n');
  const concerns = ir.concerns !== undefined ? ', concerns: concerns.declarations' : '';
  return (
    TS_HEADER +
    '\n' +
    imports.join('\n') +
    '\n\n' +
    "export type { LibraryServer, RegisteredPrompt, RegisteredResource, RegisteredResourceTemplate, ServeCall, ToolDefinition, ToolHandler } from './runtime/library.js';\n" +
    "export type { ExtraToolContext } from './runtime/tools/extra-tools.js';\n\n" +
    pieces.decls +
    (hasCaps
      ? '/** What the manifest makes this server declare: only the primitive kinds it has, and its protocol extensions. */\n' +
        `const declared: ServerCapabilities = {\n${pieces.capabilities.join('\n')}\n};\n\n`
      : '') +
    '/** Tool names, prompt names, resource URIs and URI templates the server has before any registration. */\n' +
    `const taken = ${tsLiteral(takenNames(ir), 2)};\n\n` +
    '/**\n * This server before it serves: register tools, prompts, resources and resource templates in code\n * (`registerTool`, `registerPrompt`, `registerResource`, `registerResourceTemplate`), then `serve()`.\n */\n' +
    'export function createServer(): LibraryServer {\n' +
    `  return createLibraryServer(config, tools, { taken${concerns} }, (registry) => {\n` +
    '    // with the kinds only registrations bring (a concern update then announces their lists too)\n' +
    `    const capabilities = registry.capabilities(${hasCaps ? 'declared' : 'undefined'}, ${ir.concerns !== undefined});\n` +
    `    return {\n${body}\n    };\n` +
    '  });\n' +
    '}\n'
  );
}

/** Renders `src/server.ts` of an `entry: custom` project: the `bin`, one call. */
export function emitCustomServerEntry(): string {
  return (
    '#!/usr/bin/env node\n' +
    TS_HEADER +
    "\nimport { createServer } from './index.js';\nimport { register } from './main.js';\n\n" +
    '// your registrations (src/main.ts), then --help, --version and --print-config answer on stdout and\n' +
    '// exit, or the server serves MCP over stdio, or Streamable HTTP with --transport http (see --help);\n' +
    '// a registration that throws is logged and the process exits with code 1\n' +
    'await createServer().serve({ setup: register });\n'
  );
}

/** The stub of `src/main.ts`: the user's file, written once when missing, never overwritten. */
export function emitUserEntryStub(): string {
  return `/**
 * Tools, prompts and resources registered in code, beside the manifest's (manifest \`entry: custom\`).
 * mcpgen wrote this file once and never overwrites it: it is yours.
 *
 * \`register\` runs once at start, before the server serves; what it throws (an invalid schema,
 * "Tool with name '…' already exists") is logged and the process exits with code 1. Registered
 * primitives go through the same pipeline as the manifest's: argument validation, concern
 * filtering (\`concerns: { <concern>: <value> }\`), the policy's access rules, limits and audit.
 */
import type { LibraryServer } from './index.js';

export async function register(server: LibraryServer): Promise<void> {
  // for example:
  // server.registerTool(
  //   'echo',
  //   { description: 'Returns its text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  //   ({ text }: { text: string }) => text,
  // );
  // if (process.env.MY_FEATURE === 'on') server.registerPrompt({ name: 'my_prompt', messages: [{ role: 'user', text: 'Hello' }] });
  void server;
}
`;
}

/**
 * Handler stubs: for each handler file a manifest names, a TypeScript module with one typed
 * function per export it must have, each throwing "not implemented". Stubs are not generated
 * files: `mcpgen build` writes one only where no file exists yet and never touches it again,
 * so they carry no generated header and are not listed in `.mcpgen.json`.
 */
import path from 'node:path';
import type { IrHandlerRef, IrServer } from '../../ir/types.js';
import { docComment, tsString } from '../safe.js';

type Use =
  | { kind: 'tool'; name: string; argsTypeName: string; resultTypeName: string; contextTypeName?: string }
  | { kind: 'resource'; uri: string }
  | { kind: 'template'; uriTemplate: string }
  | { kind: 'preprocessor'; name: string }
  | { kind: 'completion'; what: string };

/** A completion handler (rather than a list of values). */
const isRef = (c: unknown): c is IrHandlerRef => typeof c === 'object' && c !== null && !Array.isArray(c);

/** Every handler reference of the server with what it serves, in manifest order. */
function handlerUses(ir: IrServer): Array<{ ref: IrHandlerRef; use: Use }> {
  return [
    ...ir.extraTools.map((t) => ({
      ref: t.handler,
      use: {
        kind: 'tool',
        name: t.name,
        argsTypeName: t.argsTypeName,
        resultTypeName: t.resultTypeName,
        ...(t.uses && t.contextTypeName ? { contextTypeName: t.contextTypeName } : {}),
      } as Use,
    })),
    ...ir.resources.flatMap((r) => (r.content.kind === 'handler' ? [{ ref: r.content.handler, use: { kind: 'resource', uri: r.uri } as Use }] : [])),
    ...ir.resourceTemplates.map((t) => ({ ref: t.handler, use: { kind: 'template', uriTemplate: t.uriTemplate } as Use })),
    ...ir.preprocessors.map((p) => ({ ref: p.handler, use: { kind: 'preprocessor', name: p.name } as Use })),
    ...ir.prompts.flatMap((p) =>
      p.arguments.flatMap((a) =>
        isRef(a.complete) ? [{ ref: a.complete, use: { kind: 'completion', what: `argument ${a.name} of the prompt ${p.name}` } as Use }] : [],
      ),
    ),
    ...ir.resourceTemplates.flatMap((t) =>
      Object.entries(t.complete ?? {}).flatMap(([v, c]) =>
        isRef(c) ? [{ ref: c, use: { kind: 'completion', what: `variable ${v} of the resource template ${t.uriTemplate}` } as Use }] : [],
      ),
    ),
  ];
}

/**
 * The handler files of `ir` (paths relative to the project, `src/…`) ⇒ the exports each must
 * have, in manifest order (an export used twice is listed once).
 */
export function handlerExports(ir: IrServer): Map<string, Array<{ exportName: string; ref: IrHandlerRef }>> {
  const out = new Map<string, Array<{ exportName: string; ref: IrHandlerRef }>>();
  for (const { ref } of handlerUses(ir)) {
    const file = `src/${ref.file}`;
    const list = out.get(file) ?? [];
    if (!list.some((e) => e.exportName === ref.exportName)) list.push({ exportName: ref.exportName, ref });
    out.set(file, list);
  }
  return out;
}

/** Renders the stub of every handler file of `ir`, keyed by its path in the project (`src/…`). */
export function emitHandlerStubs(ir: IrServer): Map<string, string> {
  const byFile = new Map<string, Array<{ ref: IrHandlerRef; use: Use }>>();
  for (const u of handlerUses(ir)) {
    const list = byFile.get(u.ref.file) ?? [];
    if (!list.some((e) => e.ref.exportName === u.ref.exportName)) list.push(u);
    byFile.set(u.ref.file, list);
  }
  const out = new Map<string, string>();
  for (const [file, uses] of [...byFile].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out.set(`src/${file}`, stub(file, uses));
  return out;
}

function stub(file: string, uses: ReadonlyArray<{ ref: IrHandlerRef; use: Use }>): string {
  const up = path.posix.relative(path.posix.dirname(file), '.') || '.';
  const types = new Set<string>();
  // runtime types come from runtime/handlers.ts, the module whose path stays put when the runtime's folders change
  const runtime = new Set<string>();
  const need = (name: string) => runtime.add(name);
  const fns: string[] = [];
  for (const { ref, use } of uses) {
    const edit = `edit src/${file}`;
    if (use.kind === 'tool') {
      types.add(use.argsTypeName).add(use.resultTypeName);
      // a tool with `uses` gets its typed context (ctx.api), generated beside its types
      if (use.contextTypeName !== undefined) types.add(use.contextTypeName);
      else need('ExtraToolContext');
      fns.push(
        docComment(`Handler of the \`${use.name}\` tool: gets the validated arguments, returns the result (a thrown error becomes an \`isError\` result).`) +
          `export async function ${ref.exportName}(_args: ${use.argsTypeName}, _ctx: ${use.contextTypeName ?? 'ExtraToolContext'}): Promise<${use.resultTypeName}> {\n` +
          `  throw new Error(${tsString(`the ${use.name} tool is not implemented yet: ${edit}`)});\n}\n`,
      );
    } else if (use.kind === 'resource') {
      need('RequestExtra');
      need('ResourceContent');
      fns.push(
        docComment(`Reads the resource \`${use.uri}\`: return text, bytes, or \`{ text | blob, mimeType }\`.`) +
          `export async function ${ref.exportName}(_uri: URL, _extra: RequestExtra): Promise<ResourceContent> {\n` +
          `  throw new Error(${tsString(`the resource ${use.uri} is not implemented yet: ${edit}`)});\n}\n`,
      );
    } else if (use.kind === 'completion') {
      need('CompletionContext');
      fns.push(
        docComment(`Completes the ${use.what}: gets what the user typed so far, returns the values to offer (at most 100 are sent).`) +
          `export async function ${ref.exportName}(_value: string, _context: CompletionContext): Promise<string[]> {\n` +
          `  throw new Error(${tsString(`the completion of the ${use.what} is not implemented yet: ${edit}`)});\n}\n`,
      );
    } else if (use.kind === 'preprocessor') {
      need('PreprocessorContext');
      fns.push(
        docComment(
          `Preprocessor \`${use.name}\`: gets the user input, returns context for it (text, any JSON value, or \`{ content: [...] }\`); \`undefined\` adds nothing. Honour \`ctx.signal\`: it fires at the timeout.`,
        ) +
          `export async function ${ref.exportName}(_request: { input: string }, _ctx: PreprocessorContext): Promise<unknown> {\n` +
          `  throw new Error(${tsString(`the ${use.name} preprocessor is not implemented yet: ${edit}`)});\n}\n`,
      );
    } else {
      need('RequestExtra');
      need('Variables');
      need('ResourceContent');
      fns.push(
        docComment(`Reads a resource of the template \`${use.uriTemplate}\`; \`variables\` holds the template's variables.`) +
          `export async function ${ref.exportName}(_uri: URL, _variables: Variables, _extra: RequestExtra): Promise<ResourceContent> {\n` +
          `  throw new Error(${tsString(`the resource template ${use.uriTemplate} is not implemented yet: ${edit}`)});\n}\n`,
      );
    }
  }
  const imports: string[] = [];
  if (types.size > 0) imports.push(`import type { ${[...types].sort().join(', ')} } from ${tsString(`${up}/extra-tools.gen.js`)};`);
  if (runtime.size > 0) imports.push(`import type { ${[...runtime].sort().join(', ')} } from ${tsString(`${up}/runtime/handlers.js`)};`);
  return (
    '// Handlers named in the mcpgen manifest. This file is yours: `mcpgen build` wrote it once,\n' +
    '// because it did not exist, and will never change it. Replace the bodies below.\n' +
    imports.join('\n') +
    '\n\n' +
    fns.join('\n')
  );
}

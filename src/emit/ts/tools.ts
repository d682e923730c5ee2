/**
 * Emits `src/tools.gen.ts`: one exported argument type, (optional) result type and tool constant
 * per tool, and the `tools` table.
 *
 * Every constant carries an explicit type annotation (`OperationTool<Args>`) and the table is an
 * array of identifiers, so tsc never infers one giant literal type: a peer's single inferred
 * `new Map([...])` fails with TS2590 at GitHub's 1,223 operations.
 *
 * The file is assembled from fragments that each come out of `safe.ts` (docComment, tsLiteral,
 * identifiers decided in the IR, types from schema-type.ts). The result is parsed in the tests
 * (and by tsc in the generated project's build).
 */
import type { IrOperationTool, IrServer } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { docComment, tsLiteral } from '../safe.js';
import { schemaType } from './schema-type.js';

/** The runtime shape of one tool, as data. */
export function toolData(t: IrOperationTool): Record<string, unknown> {
  const http: Record<string, unknown> = {
    method: t.method,
    path: t.path,
    params: t.params.map((p) => {
      const o: Record<string, unknown> = { arg: p.arg, name: p.name, in: p.in };
      if (p.style !== undefined) o.style = p.style;
      if (p.explode !== undefined) o.explode = p.explode;
      return o;
    }),
  };
  if (t.body) http.body = { arg: t.body.arg, contentType: t.body.contentType };
  const data: Record<string, unknown> = { kind: 'operation', name: t.name };
  if (t.title !== undefined) data.title = t.title;
  if (t.description !== undefined) data.description = t.description;
  data.inputSchema = t.inputSchema;
  if (t.outputSchema) data.outputSchema = t.outputSchema;
  if (Object.keys(t.annotations).length) data.annotations = t.annotations;
  data.http = http;
  return data;
}

/** Type aliases for a schema and its `$defs`: `Name`, plus `Name$Def` per definition. */
function typeAliases(name: string, schema: Record<string, unknown>, doc: string): string {
  const defs = typeof schema.$defs === 'object' && schema.$defs !== null ? (schema.$defs as Record<string, unknown>) : {};
  const defNames = new Map<string, string>();
  for (const d of Object.keys(defs)) {
    const base = `${name}$${d.replace(/[^A-Za-z0-9_$]/g, '_')}`;
    let alias = base;
    for (let i = 2; [...defNames.values()].includes(alias); i++) alias = `${base}${i}`;
    defNames.set(d, alias);
  }
  const ctx = { defType: (d: string) => defNames.get(d) ?? 'unknown' };
  let out = `${docComment(doc)}export type ${name} = ${schemaType(schema, ctx)};\n`;
  for (const [d, alias] of defNames) out += `\nexport type ${alias} = ${schemaType(defs[d], ctx)};\n`;
  return out;
}

/** Renders `tools.gen.ts`. */
export function emitToolsFile(ir: IrServer): string {
  const parts: string[] = [TS_HEADER, "\nimport type { OperationTool } from './runtime/types.js';\n"];
  for (const t of ir.tools) {
    parts.push('\n' + typeAliases(t.argsTypeName, t.inputSchema, `Arguments of the \`${t.name}\` tool.`));
    if (t.outputSchema) parts.push('\n' + typeAliases(t.resultTypeName, t.outputSchema, `Structured result of the \`${t.name}\` tool.`));
    parts.push(
      `\n${docComment(`${t.method} ${t.path}${t.title ? ` — ${t.title}` : ''}`)}` +
        `export const ${t.constName}: OperationTool<${t.argsTypeName}> = ${tsLiteral(toolData(t), 2)};\n`,
    );
  }
  parts.push(`\n/** Every tool of this server, in spec order. */\nexport const tools: readonly OperationTool[] = [\n${ir.tools.map((t) => `  ${t.constName},\n`).join('')}];\n`);
  return parts.join('');
}

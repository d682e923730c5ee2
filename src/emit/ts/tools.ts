/**
 * Emits `src/tools.gen.ts`: one exported argument type, (optional) result type and tool constant
 * per tool, the `tools` table, and the schema definitions the tools share.
 *
 * - Every constant carries an explicit type annotation (`OperationTool<Args>`) and the table is
 *   an array of identifiers, so tsc never infers one giant literal type: a peer's single
 *   inferred `new Map([...])` fails with TS2590 at GitHub's 1,223 operations.
 * - `$defs` entries are stored once per file (`inputDefs` / `outputDefs`) and attached to each
 *   tool's schema with `withDefs`, and their TS types are declared once (`InputDef$X`), so a
 *   definition used by 800 Kubernetes tools is written once, not 800 times. The published
 *   schemas are identical to the IR's.
 * - The file is assembled from fragments that each come out of `safe.ts` (docComment,
 *   tsLiteral, identifiers decided in the IR, types from schema-type.ts); tests parse it.
 */
import type { IrBody, IrOperationTool, IrParam, IrServer, JsonSchema } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { docComment, tsLiteral } from '../safe.js';
import { objectExpr } from './literal.js';
import { declareSchemaType, defsOf, schemaType, type TypeContext } from './schema-type.js';

type Mode = 'input' | 'output';

/** Definitions shared by the tools of one file, per mode. */
class DefTable {
  readonly entries = new Map<string, unknown>();
  private readonly json = new Map<string, string>();
  private readonly aliases = new Map<string, string>();

  constructor(private readonly prefix: string) {}

  /** Registers a schema's `$defs`; false when a name is already taken by a different body. */
  add(defs: Record<string, unknown>): boolean {
    for (const [name, body] of Object.entries(defs)) {
      const j = JSON.stringify(body);
      const known = this.json.get(name);
      if (known !== undefined && known !== j) return false;
    }
    for (const [name, body] of Object.entries(defs)) {
      if (!this.json.has(name)) {
        this.json.set(name, JSON.stringify(body));
        this.entries.set(name, body);
        const base = `${this.prefix}$${name.replace(/[^A-Za-z0-9_$]/g, '_')}`;
        let alias = base;
        for (let i = 2; [...this.aliases.values()].includes(alias); i++) alias = `${base}${i}`;
        this.aliases.set(name, alias);
      }
    }
    return true;
  }

  alias(name: string): string | undefined {
    return this.aliases.get(name);
  }
}

/** Renders `tools.gen.ts`. */
export function emitToolsFile(ir: IrServer): string {
  const tables: Record<Mode, DefTable> = { input: new DefTable('InputDef'), output: new DefTable('OutputDef') };
  // which tool schemas use the shared tables (a name clash keeps that schema self-contained)
  const shared = new Map<JsonSchema, Mode>();
  for (const t of ir.tools) {
    for (const [schema, mode] of [[t.inputSchema, 'input'], [t.outputSchema, 'output']] as const) {
      const defs = schema && defsOf(schema);
      if (schema && defs && tables[mode].add(defs)) shared.set(schema, mode);
    }
  }

  const parts: string[] = [TS_HEADER, '\n'];
  const usesShared = tables.input.entries.size + tables.output.entries.size > 0;
  parts.push(usesShared ? "import { withDefs } from './runtime/defs.js';\nimport type { JsonSchema, OperationTool } from './runtime/types.js';\n" : "import type { OperationTool } from './runtime/types.js';\n");
  for (const mode of ['input', 'output'] as const) {
    const table = tables[mode];
    if (table.entries.size === 0) continue;
    const ctx: TypeContext = { defType: (d) => table.alias(d) ?? 'unknown' };
    for (const [name, body] of table.entries) {
      const doc = typeof body === 'object' && body !== null && typeof (body as JsonSchema).description === 'string' ? ((body as JsonSchema).description as string) : `Schema definition \`${name}\`.`;
      parts.push(`\n${docComment(doc)}export type ${table.alias(name)} = ${schemaType(body, ctx)};\n`);
    }
    parts.push(`\n/** Schema definitions shared by the tools' ${mode} schemas. */\nconst ${mode}Defs: Readonly<Record<string, JsonSchema>> = ${tsLiteral(Object.fromEntries(table.entries), 2)};\n`);
  }

  const typeOf = (name: string, schema: JsonSchema, doc: string): string => {
    const mode = shared.get(schema);
    return declareSchemaType({ name, schema, doc, ...(mode ? { shared: { defType: (d: string) => tables[mode].alias(d) ?? 'unknown' } } : {}) });
  };

  const schemaExpr = (schema: JsonSchema): string => {
    const mode = shared.get(schema);
    if (!mode) return tsLiteral(schema, 2);
    const { $defs, ...root } = schema;
    return `withDefs(${tsLiteral(root, 2)}, ${mode}Defs, ${tsLiteral(Object.keys($defs as object))})`;
  };

  for (const t of ir.tools) {
    parts.push('\n' + typeOf(t.argsTypeName, t.inputSchema, `Arguments of the \`${t.name}\` tool.`));
    if (t.outputSchema) parts.push('\n' + typeOf(t.resultTypeName, t.outputSchema, `Structured result of the \`${t.name}\` tool.`));
    parts.push(
      `\n${docComment(`${t.method} ${t.path}${t.title ? ` — ${t.title}` : ''}`)}` +
        `export const ${t.constName}: OperationTool<${t.argsTypeName}> = ${toolExpr(t, schemaExpr)};\n`,
    );
  }
  parts.push(`\n/** Every tool of this server, in spec order. */\nexport const tools: readonly OperationTool[] = [\n${ir.tools.map((t) => `  ${t.constName},\n`).join('')}];\n`);
  return parts.join('');
}

/** The tool constant's object literal; schemas may be `withDefs(...)` expressions. */
function toolExpr(t: IrOperationTool, schemaExpr: (s: JsonSchema) => string): string {
  const http: Record<string, unknown> = {
    method: t.method,
    path: t.path,
    params: t.params.map((p) => {
      const o: Record<string, unknown> = { arg: p.arg, name: p.name, in: p.in };
      if (p.style !== undefined) o.style = p.style;
      if (p.explode !== undefined) o.explode = p.explode;
      Object.assign(o, argumentFill(p));
      return o;
    }),
  };
  if (t.body) {
    const body: Record<string, unknown> = { arg: t.body.arg, contentType: t.body.contentType };
    if (t.body.files) body.files = t.body.files;
    if (t.body.binary) body.binary = true;
    Object.assign(body, argumentFill(t.body));
    http.body = body;
  }
  const fields: Array<[string, string]> = [
    ['kind', tsLiteral('operation')],
    ['name', tsLiteral(t.name)],
  ];
  if (t.title !== undefined) fields.push(['title', tsLiteral(t.title)]);
  if (t.description !== undefined) fields.push(['description', tsLiteral(t.description)]);
  fields.push(['inputSchema', schemaExpr(t.inputSchema)]);
  if (t.outputSchema) fields.push(['outputSchema', schemaExpr(t.outputSchema)]);
  if (Object.keys(t.annotations).length) fields.push(['annotations', tsLiteral(t.annotations, 2)]);
  fields.push(['http', tsLiteral(http, 2)]);
  if (t.security.length > 0) fields.push(['security', tsLiteral(t.security)]);
  return objectExpr(fields);
}

/**
 * What the server fills an argument with: a hidden argument's constant or the NAME of its
 * variable (never a value read from the environment), and a default. Printed by `tsLiteral`.
 */
function argumentFill(a: IrParam | IrBody): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (a.fixed) o.fixed = 'env' in a.fixed ? { env: a.fixed.env } : { value: a.fixed.value };
  if (Object.hasOwn(a, 'default')) o.default = a.default;
  return o;
}

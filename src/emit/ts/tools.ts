/**
 * Emits `src/tools.gen.ts`: one exported argument type, (optional) result type and tool constant
 * per tool, the `tools` table, and the schema definitions the tools share. The operations extra
 * tools call through `ctx.api` without being tools (`ir.apiOperations`) come after the tools,
 * declared the same way and left out of the table.
 *
 * - Every constant carries an explicit type annotation (`OperationTool<Args>`), and the table
 *   lists them each widened to `OperationTool`, so tsc never infers one giant literal or union
 *   type: a peer's single inferred `new Map([...])` fails with TS2590 at GitHub's 1,223
 *   operations, and a plain array of the constants fails the same way from about 1,400 (the
 *   union of their types is too complex to reduce). Tested with 5,000 operations.
 * - `$defs` entries are stored once per file (`inputDefs` / `outputDefs`) and attached to each
 *   tool's schema with `withDefs`, and their TS types are declared once (`InputDef$X`), so a
 *   definition used by 800 Kubernetes tools is written once, not 800 times. Which schemas share
 *   the tables and every type name are decided in the IR (`ir/tools/def-types.ts`). The published
 *   schemas are identical to the IR's.
 * - The file is assembled from fragments that each come out of `safe.ts` (docComment,
 *   tsLiteral, identifiers decided in the IR, types from schema-type.ts); tests parse it.
 */
import type { IrBody, IrOperationTool, IrParam, IrServer, JsonSchema } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { docComment, tsLiteral } from '../safe.js';
import { objectExpr } from './literal.js';
import { declareSchemaType, schemaType, type TypeContext } from './schema-type.js';

type Mode = 'input' | 'output';

/** Renders `tools.gen.ts`. */
export function emitToolsFile(ir: IrServer): string {
  // which tool schemas use the shared tables, as the IR decided (a clash keeps a schema self-contained)
  const shared = new Map<JsonSchema, Mode>();
  const apiOnly = ir.apiOperations ?? [];
  for (const t of [...ir.tools, ...apiOnly]) {
    if (t.inputDefTypes?.shared) shared.set(t.inputSchema, 'input');
    if (t.outputSchema && t.outputDefTypes?.shared) shared.set(t.outputSchema, 'output');
  }

  const parts: string[] = [TS_HEADER, '\n'];
  const usesShared = ir.sharedDefs.input.length + ir.sharedDefs.output.length > 0;
  parts.push(
    usesShared
      ? "import { withDefs } from './runtime/core/defs.js';\nimport type { JsonSchema, OperationTool } from './runtime/core/types.js';\n"
      : "import type { OperationTool } from './runtime/core/types.js';\n",
  );
  for (const mode of ['input', 'output'] as const) {
    const table = ir.sharedDefs[mode];
    if (table.length === 0) continue;
    const names = new Map(table.map((d) => [d.name, d.typeName]));
    const ctx: TypeContext = { defType: (d) => names.get(d) ?? 'unknown' };
    for (const { name, typeName, schema: body } of table) {
      const doc =
        typeof body === 'object' && body !== null && typeof (body as JsonSchema).description === 'string'
          ? ((body as JsonSchema).description as string)
          : `Schema definition \`${name}\`.`;
      parts.push(`\n${docComment(doc)}export type ${typeName} = ${schemaType(body, ctx)};\n`);
    }
    const entries = table.map((d): [string, unknown] => [d.name, d.schema]);
    parts.push(
      `\n/** Schema definitions shared by the tools' ${mode} schemas. */\nconst ${mode}Defs: Readonly<Record<string, JsonSchema>> = ${tsLiteral(Object.fromEntries(entries), 2)};\n`,
    );
  }

  const schemaExpr = (schema: JsonSchema): string => {
    const mode = shared.get(schema);
    if (!mode) return tsLiteral(schema, 2);
    const { $defs, ...root } = schema;
    return `withDefs(${tsLiteral(root, 2)}, ${mode}Defs, ${tsLiteral(Object.keys($defs as object))})`;
  };

  const api = new Set(apiOnly);
  for (const t of [...ir.tools, ...apiOnly]) {
    // an API-only operation is no tool: its doc says what calls it
    const what = api.has(t) ? `\`${t.operationId ?? t.name}\` operation (not a tool: extra tools call it through \`ctx.api\`)` : `\`${t.name}\` tool`;
    parts.push(
      '\n' +
        declareSchemaType({
          name: t.argsTypeName,
          schema: t.inputSchema,
          doc: `Arguments of the ${what}.`,
          ...(t.inputDefTypes ? { defTypes: t.inputDefTypes } : {}),
        }),
    );
    if (t.outputSchema)
      parts.push(
        '\n' +
          declareSchemaType({
            name: t.resultTypeName,
            schema: t.outputSchema,
            doc: `Structured result of the ${what}.`,
            ...(t.outputDefTypes ? { defTypes: t.outputDefTypes } : {}),
          }),
      );
    parts.push(
      `\n${docComment(`${t.method} ${t.path}${t.title ? ` — ${t.title}` : ''}`)}` +
        `export const ${t.constName}: OperationTool<${t.argsTypeName}> = ${toolExpr(t, schemaExpr)};\n`,
    );
  }
  // each element widened to `OperationTool`: an array of 5,000 differently typed constants would
  // otherwise be typed as their union, whose subtype reduction fails with TS2590 from ~1,400 tools
  parts.push(
    `\n/** Every tool of this server, in spec order. */\nexport const tools: readonly OperationTool[] = [\n${ir.tools.map((t) => `  ${t.constName} as OperationTool,\n`).join('')}];\n`,
  );
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
    // hidden fields of the body: the NAME of a variable or a constant, as for hidden arguments
    if (t.body.fields) body.fields = t.body.fields.map((f) => ({ name: f.name, fixed: 'env' in f.fixed ? { env: f.fixed.env } : { value: f.fixed.value } }));
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
  if (t.outputSchema && t.resultShape === 'wrapped') fields.push(['resultShape', tsLiteral('wrapped')]);
  if (t.outputSchema && t.outputMode === 'strict') fields.push(['strictOutput', 'true']);
  if (Object.keys(t.annotations).length) fields.push(['annotations', tsLiteral(t.annotations, 2)]);
  fields.push(['http', tsLiteral(http, 2)]);
  if (t.results) fields.push(['results', tsLiteral(resultSettings(t.results))]);
  if (t.bytesPerToken !== undefined) fields.push(['bytesPerToken', tsLiteral(t.bytesPerToken)]);
  if (t.projection) fields.push(['projection', tsLiteral({ arg: t.projection.arg })]);
  if (t.security.length > 0) fields.push(['security', tsLiteral(t.security)]);
  if (t.scopes !== undefined && t.scopes.length > 0) fields.push(['scopes', tsLiteral(t.scopes)]);
  if (t.longRunning) fields.push(['longRunning', tsLiteral(t.longRunning)]);
  return objectExpr(fields);
}

/** A tool's own result settings, in the runtime `ResultPolicy`'s key order. */
function resultSettings(r: NonNullable<IrOperationTool['results']>): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (r.maxTokens !== undefined) o.maxTokens = r.maxTokens;
  if (r.compact !== undefined) o.compact = r.compact;
  if (r.omit !== undefined) o.omit = r.omit;
  if (r.maxStringChars !== undefined) o.maxStringChars = r.maxStringChars;
  return o;
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

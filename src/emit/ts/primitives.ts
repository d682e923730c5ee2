/**
 * Emits the custom primitives of a manifest:
 * - `src/extra-tools.gen.ts`: per extra tool an exported `<Tool>Args` / `<Tool>Result` type
 *   (from its JSON Schemas) and a `defineTool<Args, Result>({…, handler })` constant, so a user
 *   handler with the wrong signature fails `tsc` right there; a tool with `uses` also gets
 *   `<Tool>Api` (its `ctx.api`, one typed method per operation) and `<Tool>Context`;
 * - `src/prompts.gen.ts`: the prompts as data (templates were checked at build time);
 * - `src/resources.gen.ts`: resources (static text, embedded files, handlers) and templates.
 * Handler modules are imported as namespaces under the aliases the IR decided.
 */
import type { IrExtraTool, IrHandlerRef, IrResource, IrResourceTemplate, IrServer } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { docComment, propKey, tsLiteral } from '../safe.js';
import { arrayExpr, member, objectExpr } from './literal.js';
import { declareSchemaType } from './schema-type.js';

/** `import * as <alias> from '<path>';` lines for the handlers used, sorted by path. */
export function handlerImports(refs: readonly IrHandlerRef[]): string {
  const byPath = new Map(refs.map((r) => [r.importPath, r.moduleAlias]));
  return [...byPath.keys()]
    .sort()
    .map((p) => `import * as ${byPath.get(p)} from ${tsLiteral(p)};\n`)
    .join('');
}

/** Renders `src/extra-tools.gen.ts`. */
export function emitExtraToolsFile(ir: IrServer): string {
  const parts = [
    TS_HEADER,
    '\n',
    "import { defineTool } from './runtime/tools/extra-tools.js';\n",
    `import type { AnyExtraTool${ir.extraTools.some((t) => t.uses) ? ', ExtraToolContext' : ''} } from './runtime/tools/extra-tools.js';\n`,
    ...apiImports(ir),
    handlerImports(ir.extraTools.map((t) => t.handler)),
  ];
  for (const t of ir.extraTools) {
    parts.push(
      '\n' +
        declareSchemaType({
          name: t.argsTypeName,
          schema: t.inputSchema,
          ...(t.inputDefTypes ? { defTypes: t.inputDefTypes } : {}),
          doc: `Arguments of the \`${t.name}\` tool, as its handler receives them (validated against the input schema).`,
        }),
    );
    if (t.outputSchema) {
      parts.push(
        '\n' +
          declareSchemaType({
            name: t.resultTypeName,
            schema: t.outputSchema,
            ...(t.outputDefTypes ? { defTypes: t.outputDefTypes } : {}),
            doc: `What the \`${t.name}\` handler returns: an object matching the output schema (also sent as \`structuredContent\`).`,
          }),
      );
    } else {
      parts.push(
        `\n${docComment(`What the \`${t.name}\` handler returns: text, any JSON value (sent as JSON text), or a complete \`CallToolResult\`.`)}export type ${t.resultTypeName} = unknown;\n`,
      );
    }
    if (t.uses && t.apiTypeName && t.contextTypeName) parts.push(apiTypes(t, t.uses, t.apiTypeName, t.contextTypeName));
    const api = t.uses && t.apiTypeName ? `, ${t.apiTypeName}` : '';
    parts.push(
      `\n${docComment(t.title ?? t.description ?? `The \`${t.name}\` tool.`)}export const ${t.constName} = defineTool<${t.argsTypeName}, ${t.resultTypeName}${api}>(${extraToolExpr(t)});\n`,
    );
  }
  parts.push(
    `\n/** Every extra tool of this server, in manifest order. */\nexport const extraTools: readonly AnyExtraTool[] = ${arrayExpr(ir.extraTools.map((t) => t.constName))};\n`,
  );
  return parts.join('');
}

function extraToolExpr(t: IrExtraTool): string {
  const fields: Array<[string, string]> = [
    ['kind', tsLiteral('extra')],
    ['name', tsLiteral(t.name)],
  ];
  if (t.title !== undefined) fields.push(['title', tsLiteral(t.title)]);
  if (t.description !== undefined) fields.push(['description', tsLiteral(t.description)]);
  fields.push(['inputSchema', tsLiteral(t.inputSchema, 2)]);
  if (t.outputSchema) fields.push(['outputSchema', tsLiteral(t.outputSchema, 2)]);
  if (Object.keys(t.annotations).length > 0) fields.push(['annotations', tsLiteral(t.annotations, 2)]);
  if (t.scopes) fields.push(['scopes', tsLiteral(t.scopes)]);
  if (t.task) fields.push(['task', tsLiteral(t.task)]);
  if (t.uses) fields.push(['uses', objectExpr(t.uses.map((u) => [u.operationId, u.constName]))]);
  fields.push(['handler', member(t.handler.moduleAlias, t.handler.exportName)]);
  return objectExpr(fields);
}

/** The imports of the `ctx.api` types and of the operations the tools use (from tools.gen.ts), sorted. */
function apiImports(ir: IrServer): string[] {
  const uses = ir.extraTools.flatMap((t) => t.uses ?? []);
  if (uses.length === 0) return [];
  const values = [...new Set(uses.map((u) => u.constName))].sort();
  const types = [...new Set(uses.flatMap((u) => [u.argsTypeName, ...(u.resultTypeName ? [u.resultTypeName] : [])]))].sort();
  return [
    "import type { ApiOperation } from './runtime/tools/api-client.js';\n",
    `import { ${values.join(', ')} } from './tools.gen.js';\n`,
    `import type { ${types.join(', ')} } from './tools.gen.js';\n`,
  ];
}

/** `<Tool>Api`: one method per operation in `uses`; `<Tool>Context`: the handler's context with it. */
function apiTypes(t: IrExtraTool, uses: NonNullable<IrExtraTool['uses']>, apiType: string, contextType: string): string {
  const methods = uses
    .map(
      (u) =>
        `${docComment(`Runs \`${u.operationId}\` as its tool \`${u.tool}\` would, as a nested call of this one.`, '  ')}  ${propKey(u.operationId)}: ApiOperation<${u.argsTypeName}, ${u.resultTypeName ?? 'unknown'}>;\n`,
    )
    .join('');
  return (
    `\n${docComment(`The API operations the \`${t.name}\` handler calls through \`ctx.api\` (manifest \`uses\`), by operationId.`)}export type ${apiType} = {\n${methods}};\n` +
    `\n${docComment(`What the \`${t.name}\` handler gets besides its arguments: \`ctx.api\` is {@link ${apiType}}.`)}export type ${contextType} = ExtraToolContext<${apiType}>;\n`
  );
}

/** A completion handler reference (rather than a list of values). */
const isHandlerRef = (c: unknown): c is IrHandlerRef =>
  typeof c === 'object' && c !== null && !Array.isArray(c) && typeof (c as IrHandlerRef).moduleAlias === 'string';

/** The completion handlers of prompt arguments and template variables (manifest `complete: <file>#<export>`). */
function completionRefs(ir: IrServer): IrHandlerRef[] {
  return [...ir.prompts.flatMap((p) => p.arguments.map((a) => a.complete)), ...ir.resourceTemplates.flatMap((t) => Object.values(t.complete ?? {}))].filter(
    isHandlerRef,
  );
}

/** A prompt with a completion handler: the same fields as the literal, the handler as a reference to its module's export. */
function promptExpr(o: Record<string, unknown>): string {
  const fields: Array<[string, string]> = Object.entries(o).map(([k, v]): [string, string] => {
    if (k !== 'arguments') return [k, tsLiteral(v, 2)];
    const args = v as Array<Record<string, unknown>>;
    return [
      k,
      arrayExpr(
        args.map((a) =>
          objectExpr(Object.entries(a).map(([ak, av]): [string, string] => [ak, isHandlerRef(av) ? member(av.moduleAlias, av.exportName) : tsLiteral(av, 2)])),
        ),
      ),
    ];
  });
  return objectExpr(fields);
}

/** Renders `src/prompts.gen.ts`. */
export function emitPromptsFile(ir: IrServer): string {
  const prompts = ir.prompts.map((p) => {
    const o: Record<string, unknown> = { name: p.name };
    if (p.title !== undefined) o.title = p.title;
    if (p.description !== undefined) o.description = p.description;
    if (p.arguments.length > 0)
      o.arguments = p.arguments.map((a) => ({
        name: a.name,
        ...(a.description !== undefined ? { description: a.description } : {}),
        required: a.required,
        ...(a.complete !== undefined ? { complete: a.complete } : {}),
      }));
    if (p.scopes !== undefined) o.scopes = p.scopes;
    o.messages = p.messages;
    return o;
  });
  // a completion handler is a reference to its module's export, not data (without one, the file is one literal)
  const handlers = ir.prompts.flatMap((p) => p.arguments.map((a) => a.complete)).filter(isHandlerRef);
  return (
    TS_HEADER +
    "\nimport type { PromptDefinition } from './runtime/primitives/prompts.js';\n" +
    (handlers.length > 0 ? handlerImports(handlers) : '') +
    '\n' +
    "/** The prompts of this server, in manifest order. Message texts (and embedded resources' `uri` and `text`) are Handlebars templates over the arguments; embedded files are inlined as base64. */\n" +
    `export const prompts: readonly PromptDefinition[] = ${handlers.length > 0 ? arrayExpr(prompts.map(promptExpr)) : tsLiteral(prompts, 2)};\n`
  );
}

/** Renders `src/resources.gen.ts`. */
export function emitResourcesFile(ir: IrServer): string {
  const refs = [
    ...ir.resources.flatMap((r) => (r.content.kind === 'handler' ? [r.content.handler] : [])),
    ...ir.resourceTemplates.map((t) => t.handler),
    ...completionRefs({ ...ir, prompts: [] }),
  ];
  const types = [ir.resources.length > 0 ? 'ResourceDefinition' : '', ir.resourceTemplates.length > 0 ? 'ResourceTemplateDefinition' : ''].filter(Boolean);
  const parts = [TS_HEADER, '\n', `import type { ${types.join(', ')} } from './runtime/primitives/resources.js';\n`, handlerImports(refs)];
  if (ir.resources.length > 0) {
    parts.push(
      `\n/** Resources with a fixed URI, in manifest order (embedded files are inlined as text or base64). */\nexport const resources: readonly ResourceDefinition[] = ${arrayExpr(ir.resources.map(resourceExpr))};\n`,
    );
  }
  if (ir.resourceTemplates.length > 0) {
    parts.push(
      `\n/** Resource templates (RFC 6570), in manifest order. */\nexport const resourceTemplates: readonly ResourceTemplateDefinition[] = ${arrayExpr(ir.resourceTemplates.map(templateExpr))};\n`,
    );
  }
  return parts.join('');
}

/** Fields every resource and template has. */
function metadataFields(r: IrResource | IrResourceTemplate): Array<[string, string]> {
  const fields: Array<[string, string]> = r.kind === 'resource' ? [['uri', tsLiteral(r.uri)]] : [['uriTemplate', tsLiteral(r.uriTemplate)]];
  fields.push(['name', tsLiteral(r.name)]);
  if (r.title !== undefined) fields.push(['title', tsLiteral(r.title)]);
  if (r.description !== undefined) fields.push(['description', tsLiteral(r.description)]);
  if (r.mimeType !== undefined) fields.push(['mimeType', tsLiteral(r.mimeType)]);
  if (r.scopes !== undefined) fields.push(['scopes', tsLiteral(r.scopes)]);
  return fields;
}

function resourceExpr(r: IrResource): string {
  const fields = metadataFields(r);
  const c = r.content;
  fields.push(
    c.kind === 'text'
      ? ['text', tsLiteral(c.text)]
      : c.kind === 'blob'
        ? ['blob', tsLiteral(c.blob)]
        : ['handler', member(c.handler.moduleAlias, c.handler.exportName)],
  );
  if (r.refreshMs !== undefined) fields.push(['refreshMs', tsLiteral(r.refreshMs)]);
  return objectExpr(fields);
}

function templateExpr(t: IrResourceTemplate): string {
  const fields = metadataFields(t);
  const complete = t.complete;
  if (complete !== undefined) {
    const byHandler = Object.values(complete).some(isHandlerRef);
    fields.push([
      'complete',
      byHandler
        ? objectExpr(Object.entries(complete).map(([k, v]): [string, string] => [k, isHandlerRef(v) ? member(v.moduleAlias, v.exportName) : tsLiteral(v, 2)]))
        : tsLiteral(complete, 2),
    ]);
  }
  return objectExpr([...fields, ['handler', member(t.handler.moduleAlias, t.handler.exportName)]]);
}

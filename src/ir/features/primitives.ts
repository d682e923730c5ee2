/**
 * Custom primitives of the manifest → IR: extra tools, prompts, resources and
 * resource templates, with their handler references resolved and every build-time check that
 * needs no output directory (schemas, templates, URI templates, embedded files, uniqueness).
 * Tool names are decided with the operation tools in `build.ts`.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { type Diagnostics, escapePointerToken, type Location } from '../../core/diagnostics.js';
import { ajv2020, ajvFormats } from '../../core/lazy.js';
import type { ResolvedManifest } from '../../manifest/load.js';
import { mcpHeaderProblem } from '../tools/mcp-header.js';
import type { IrExtraTool, IrHandlerRef, IrPrompt, IrPromptMessage, IrResource, IrResourceTemplate, IrServer, JsonSchema } from '../types.js';
import type { ParameterBinding, ParameterEnumLookup } from './completions.js';
import type { HandlerResolver } from './handlers.js';
import { guessMimeType, isTextualMime } from './mime.js';
import { buildPromptMessage, utf8 } from './prompt-content.js';
import { checkUriTemplate } from './uri-template.js';

/** Inputs of {@link buildPrimitives}. */
export type PrimitivesInput = {
  manifest: Pick<ResolvedManifest, 'extraTools' | 'prompts' | 'resources' | 'resourceTemplates' | 'dir'>;
  /** Resolves `handler` values (one resolver per build, so import aliases are shared). */
  handlers: HandlerResolver;
  /** Final name and identifiers of each extra tool, by manifest index. */
  extraToolIds: ReadonlyArray<{ name: string; argsTypeName: string; constName: string; resultTypeName: string }>;
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
  /** The enum of a bound OpenAPI parameter (completion sources); without it a `parameter` binding is an error. */
  parameterEnum?: ParameterEnumLookup;
};

/** The custom primitives, in manifest order. */
export type Primitives = Pick<IrServer, 'extraTools' | 'prompts' | 'resources' | 'resourceTemplates'>;

/**
 * A checker of object-rooted JSON Schemas written in the manifest (tool schemas, the
 * justification schema): reports a root that is not `type: object` or a schema Ajv cannot compile.
 */
export function objectSchemaChecker(
  diagnostics: Diagnostics,
  locateManifest: (pointer: string) => Location,
): (schema: JsonSchema, pointer: string, which: string) => void {
  // compiled only when the manifest has a schema to check
  let ajv: Ajv2020 | undefined;
  return (schema: JsonSchema, pointer: string, which: string) => {
    if (schema.type !== 'object') {
      diagnostics.error(
        'MCPGEN_TOOL_SCHEMA_INVALID',
        `the ${which} must be an object schema, got ${schema.type === undefined ? 'no `type`' : `type ${JSON.stringify(schema.type)}`}`,
        'set `type: object` and describe the fields under `properties`',
        locateManifest(pointer),
      );
      return;
    }
    try {
      if (!ajv) {
        ajv = new (ajv2020().Ajv2020)({ strict: false, allErrors: true, addUsedSchema: false, logger: false });
        ajvFormats()(ajv);
      }
      ajv.compile(schema);
    } catch (err) {
      diagnostics.error(
        'MCPGEN_TOOL_SCHEMA_INVALID',
        `the ${which} is not a valid JSON Schema: ${err instanceof Error ? err.message : String(err)}`,
        'fix the schema (JSON Schema draft 2020-12)',
        locateManifest(pointer),
      );
    }
  };
}

/** Builds the custom primitives; problems go to `diagnostics`. */
export function buildPrimitives(input: PrimitivesInput): Primitives {
  const { manifest: m, diagnostics, locateManifest } = input;
  const file = locateManifest('').file;
  const origin = (pointer: string) => ({ file, pointer });
  const { handlers } = input;

  const checkSchema = objectSchemaChecker(diagnostics, locateManifest);

  const extraTools: IrExtraTool[] = (m.extraTools ?? []).map((t, i) => {
    const at = `/extraTools/${i}`;
    checkSchema(t.inputSchema, `${at}/inputSchema`, 'input schema');
    const headerProblem = mcpHeaderProblem(t.inputSchema);
    if (headerProblem)
      diagnostics.error(
        'MCPGEN_TOOL_SCHEMA_INVALID',
        `the input schema's x-mcp-header is invalid: ${headerProblem}`,
        'fix it as SEP-2243 says, or remove it (a 2026-07-28 client would reject the tool)',
        locateManifest(`${at}/inputSchema`),
      );
    if (t.outputSchema) checkSchema(t.outputSchema, `${at}/outputSchema`, 'output schema');
    const ids = input.extraToolIds[i]!;
    const tool: IrExtraTool = {
      kind: 'extra-tool',
      ...ids,
      inputSchema: t.inputSchema,
      annotations: { ...(t.annotations ?? {}) },
      handler: handlers.ref(t.handler, `${at}/handler`),
      origin: origin(at),
    };
    if (t.title !== undefined) tool.title = t.title;
    if (t.description !== undefined) tool.description = t.description;
    if (t.outputSchema !== undefined) tool.outputSchema = t.outputSchema;
    if (t.scopes !== undefined && t.scopes.length > 0) tool.scopes = [...new Set(t.scopes)].sort();
    if (t.task !== undefined) tool.task = t.task;
    return tool;
  });

  const unique = (what: string, key: (i: number) => string, count: number, pointer: (i: number) => string) => {
    const seen = new Map<string, number>();
    for (let i = 0; i < count; i++) {
      const k = key(i);
      const first = seen.get(k);
      if (first === undefined) seen.set(k, i);
      else
        diagnostics.error(
          'MCPGEN_DUPLICATE_PRIMITIVE',
          `${what} ${JSON.stringify(k)} is already used by entry ${first}`,
          `give each ${what} a different value`,
          locateManifest(pointer(i)),
        );
    }
  };

  /** The completion values of a `complete` list (or its handler) or a `parameter` binding (`complete` wins); undefined when neither is given or the binding fails (reported). */
  const completion = (source: { complete?: string[] | string; parameter?: ParameterBinding }, pointer: string): string[] | IrHandlerRef | undefined => {
    if (typeof source.complete === 'string') return handlers.ref(source.complete, `${pointer}/complete`);
    if (source.complete !== undefined) return [...new Set(source.complete)];
    if (source.parameter === undefined) return undefined;
    const found = input.parameterEnum?.(source.parameter) ?? { error: 'the OpenAPI description is not available', help: 'give the values under `complete`' };
    if ('values' in found) return found.values;
    diagnostics.error('MCPGEN_COMPLETION_SOURCE', found.error, found.help, locateManifest(`${pointer}/parameter`));
    return undefined;
  };

  const declaredResources = new Map((m.resources ?? []).map((r) => [r.uri, r]));
  const readFile = (file: string, at: Location, maxBytes: number) => readEmbedded(file, m.dir, at, diagnostics, maxBytes);
  const promptsIn = m.prompts ?? [];
  unique(
    'prompt name',
    (i) => promptsIn[i]!.name,
    promptsIn.length,
    (i) => `/prompts/${i}/name`,
  );
  const prompts: IrPrompt[] = promptsIn.map((p, i) => {
    const at = `/prompts/${i}`;
    const args = (p.arguments ?? []).map((a, j) => {
      const complete = completion(a, `${at}/arguments/${j}`);
      return {
        name: a.name,
        required: a.required === true,
        ...(a.description !== undefined ? { description: a.description } : {}),
        ...(complete !== undefined ? { complete } : {}),
      };
    });
    unique(
      `argument name of prompt ${JSON.stringify(p.name)}:`,
      (j) => args[j]!.name,
      args.length,
      (j) => `${at}/arguments/${j}/name`,
    );
    const argNames = args.map((a) => a.name);
    const messages = p.messages
      .map((msg, j) =>
        buildPromptMessage(msg, {
          prompt: p.name,
          index: j,
          at: `${at}/messages/${j}`,
          argNames,
          resources: declaredResources,
          readFile,
          locateManifest,
          diagnostics,
        }),
      )
      .filter((msg): msg is IrPromptMessage => msg !== undefined);
    const prompt: IrPrompt = { kind: 'prompt', name: p.name, arguments: args, messages, origin: origin(at) };
    if (p.title !== undefined) prompt.title = p.title;
    if (p.description !== undefined) prompt.description = p.description;
    if (p.scopes !== undefined && p.scopes.length > 0) prompt.scopes = [...new Set(p.scopes)].sort();
    return prompt;
  });

  const resourcesIn = m.resources ?? [];
  unique(
    'resource URI',
    (i) => resourcesIn[i]!.uri,
    resourcesIn.length,
    (i) => `/resources/${i}/uri`,
  );
  const resources: IrResource[] = [];
  resourcesIn.forEach((r, i) => {
    const at = `/resources/${i}`;
    const given = (['text', 'file', 'handler'] as const).filter((k) => r[k] !== undefined);
    if (given.length !== 1) {
      const message =
        given.length === 0
          ? `resource ${JSON.stringify(r.uri)} has no content`
          : `resource ${JSON.stringify(r.uri)} gives ${given.map((k) => `\`${k}\``).join(' and ')}`;
      diagnostics.error(
        'MCPGEN_RESOURCE_CONTENT',
        message,
        'give exactly one of `text` (static text), `file` (embedded at build time) and `handler` (read at run time)',
        locateManifest(at),
      );
      return;
    }
    let mimeType = r.mimeType;
    let content: IrResource['content'];
    if (r.text !== undefined) content = { kind: 'text', text: r.text };
    else if (r.handler !== undefined) content = { kind: 'handler', handler: handlers.ref(r.handler, `${at}/handler`) };
    else {
      const bytes = readEmbedded(r.file!, m.dir, locateManifest(`${at}/file`), diagnostics);
      if (bytes === undefined) return;
      mimeType ??= guessMimeType(r.file!);
      const text = isTextualMime(mimeType) ? utf8(bytes) : undefined;
      content = text !== undefined ? { kind: 'text', text } : { kind: 'blob', blob: bytes.toString('base64') };
    }
    const res: IrResource = { kind: 'resource', uri: r.uri, name: r.name, content, origin: origin(at) };
    if (r.refreshMs !== undefined) {
      if (content.kind === 'handler') res.refreshMs = r.refreshMs;
      else
        diagnostics.error(
          'MCPGEN_RESOURCE_CONTENT',
          `resource ${JSON.stringify(r.uri)} has \`refreshMs\` but no handler: static content never changes`,
          'remove `refreshMs`, or read the resource with a `handler`',
          locateManifest(`${at}/refreshMs`),
        );
    }
    if (r.title !== undefined) res.title = r.title;
    if (r.description !== undefined) res.description = r.description;
    if (mimeType !== undefined) res.mimeType = mimeType;
    if (r.scopes !== undefined && r.scopes.length > 0) res.scopes = [...new Set(r.scopes)].sort();
    resources.push(res);
  });

  const templatesIn = m.resourceTemplates ?? [];
  unique(
    'resource template',
    (i) => templatesIn[i]!.uriTemplate,
    templatesIn.length,
    (i) => `/resourceTemplates/${i}/uriTemplate`,
  );
  const resourceTemplates: IrResourceTemplate[] = [];
  templatesIn.forEach((t, i) => {
    const at = `/resourceTemplates/${i}`;
    const check = checkUriTemplate(t.uriTemplate);
    if (check.error !== undefined) {
      diagnostics.error(
        'MCPGEN_INVALID_URI_TEMPLATE',
        `${JSON.stringify(t.uriTemplate)} is not a valid URI template: ${check.error}`,
        'write variables as `{name}` (RFC 6570), e.g. `petstore://pets/{petId}`',
        locateManifest(`${at}/uriTemplate`),
      );
      return;
    }
    const tpl: IrResourceTemplate = {
      kind: 'resource-template',
      uriTemplate: t.uriTemplate,
      name: t.name,
      variables: check.variables,
      handler: handlers.ref(t.handler, `${at}/handler`),
      origin: origin(at),
    };
    const complete: Record<string, string[] | IrHandlerRef> = {};
    for (const [name, source] of Object.entries(t.variables ?? {})) {
      const pointer = `${at}/variables/${escapePointerToken(name)}`;
      if (!check.variables.includes(name)) {
        diagnostics.error(
          'MCPGEN_COMPLETION_SOURCE',
          `${JSON.stringify(name)} is not a variable of ${t.uriTemplate}`,
          check.variables.length > 0 ? `its variables: ${check.variables.join(', ')}` : 'the template has no variables',
          locateManifest(pointer, { key: true }),
        );
        continue;
      }
      const values = completion(source, pointer);
      if (values !== undefined) complete[name] = values;
    }
    if (Object.keys(complete).length > 0) tpl.complete = complete;
    if (t.title !== undefined) tpl.title = t.title;
    if (t.description !== undefined) tpl.description = t.description;
    if (t.mimeType !== undefined) tpl.mimeType = t.mimeType;
    if (t.scopes !== undefined && t.scopes.length > 0) tpl.scopes = [...new Set(t.scopes)].sort();
    resourceTemplates.push(tpl);
  });

  return { extraTools, prompts, resources, resourceTemplates };
}

/** Reads a `file` resource (relative to the manifest, inside its folder, at most `maxBytes` when given); reports and returns undefined on failure. */
function readEmbedded(file: string, dir: string, at: Location, diagnostics: Diagnostics, maxBytes?: number): Buffer | undefined {
  const abs = path.resolve(dir, file);
  let real: string;
  try {
    real = realpathSync(abs);
  } catch {
    diagnostics.error('MCPGEN_RESOURCE_FILE', `resource file ${file} does not exist`, "check the path; it is relative to the manifest's folder", at);
    return undefined;
  }
  const root = realpathSync(dir);
  if (!real.startsWith(root + path.sep)) {
    diagnostics.error(
      'MCPGEN_RESOURCE_FILE',
      `resource file ${file} is outside the manifest's folder`,
      "move the file into the manifest's folder (symlinks are followed)",
      at,
    );
    return undefined;
  }
  try {
    // a FIFO would block the read forever, a device never end it: regular files only
    const stat = statSync(real);
    if (!stat.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'not a regular file' });
    if (maxBytes !== undefined && stat.size > maxBytes)
      throw Object.assign(new Error('too large'), { code: `${stat.size} bytes, more than the ${maxBytes} a prompt may embed` });
    return readFileSync(real);
  } catch (err) {
    diagnostics.error(
      'MCPGEN_RESOURCE_FILE',
      `resource file ${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      'make it a readable regular file',
      at,
    );
    return undefined;
  }
}

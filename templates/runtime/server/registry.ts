/**
 * Primitives registered in code (`entry: custom`, library.ts): tools, prompts, resources and
 * resource templates a program adds to a generated server before it serves. Each registration is
 * checked as the build checks the manifest's: names MCP-legal, the input and output schemas
 * compiled by Ajv, a resource URI that parses, a URI template the SDK can match, concern mappings
 * over declared concerns and values; and a name (URI) the server already has — an operation
 * tool, a manifest primitive, an earlier registration — throws: `Tool with name '<name>' already
 * exists` (`Prompt with name …`, `Resource with URI …`, `Resource template with URI template …`).
 *
 * This file is copied verbatim into every generated project.
 */

import type { ServerCapabilities, ToolAnnotations } from '@modelcontextprotocol/server';
import { UriTemplate } from '@modelcontextprotocol/server';
import type { ConcernDeclaration, ConcernMapping, ConcernMappings } from '../concerns/concerns.js';
import { isRecord } from '../core/json-shapes.js';
import type { JsonSchema } from '../core/types.js';
import type { PromptDefinition } from '../primitives/prompts.js';
import type { ResourceDefinition, ResourceTemplateDefinition } from '../primitives/resources.js';
import type { AnyExtraTool, ExtraToolContext } from '../tools/extra-tools.js';
import { validateArguments, validateOutput } from '../validation/validate.js';

/** What a registered primitive may add to its definition: the concern values it matches (manifest `concernMappings`). */
export type Registered = { readonly concerns?: ConcernMapping };

/** A tool registered in code: its metadata and schemas (the handler is given apart). */
export type ToolDefinition = Registered & {
  readonly title?: string;
  readonly description?: string;
  /** JSON Schema (draft 2020-12) of the arguments: an object schema. Arguments are validated against it before the handler runs. */
  readonly inputSchema: JsonSchema;
  /** JSON Schema of the result: the handler must return an object matching it (sent as `structuredContent` too). */
  readonly outputSchema?: JsonSchema;
  readonly annotations?: ToolAnnotations;
};

/** The handler of a tool registered in code: as an extra tool's, without `ctx.api`. */
export type ToolHandler<Args = Record<string, unknown>, Result = unknown> = (
  args: Args,
  ctx: ExtraToolContext<Record<string, never>>,
) => Promise<Result> | Result;

/** A prompt registered in code (messages or a handler, as the manifest's). */
export type RegisteredPrompt = PromptDefinition & Registered;
/** A resource registered in code. */
export type RegisteredResource = ResourceDefinition & Registered;
/** A resource template registered in code. */
export type RegisteredResourceTemplate = ResourceTemplateDefinition & Registered;

/** What the server has before any registration, by kind: names, URIs and URI templates. */
export type Taken = {
  readonly tools: readonly string[];
  readonly prompts: readonly string[];
  readonly resources: readonly string[];
  readonly resourceTemplates: readonly string[];
};

/** Tool and prompt names: what MCP allows (SEP-986), as the manifest's. */
const NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Every primitive registered so far, checked; the server takes them when it starts serving. */
export class Registry {
  readonly tools: AnyExtraTool[] = [];
  readonly prompts: RegisteredPrompt[] = [];
  readonly resources: RegisteredResource[] = [];
  readonly templates: RegisteredResourceTemplate[] = [];
  readonly #names: { readonly [K in keyof Taken]: Set<string> };
  readonly #mappings: {
    tools: Record<string, ConcernMapping>;
    prompts: Record<string, ConcernMapping>;
    resources: Record<string, ConcernMapping>;
    resourceTemplates: Record<string, ConcernMapping>;
  } = { tools: {}, prompts: {}, resources: {}, resourceTemplates: {} };
  readonly #declarations: readonly ConcernDeclaration[] | undefined;

  /** `taken`: the server's own primitives; `declarations`: its concerns (none: a `concerns` field is refused). */
  constructor(taken: Taken, declarations?: readonly ConcernDeclaration[]) {
    this.#names = {
      tools: new Set(taken.tools),
      prompts: new Set(taken.prompts),
      resources: new Set(taken.resources),
      resourceTemplates: new Set(taken.resourceTemplates),
    };
    this.#declarations = declarations;
  }

  /** Checks and adds a tool. */
  addTool(name: string, definition: ToolDefinition, handler: ToolHandler<never, unknown>): void {
    if (typeof name !== 'string' || !NAME.test(name))
      throw new Error(`Invalid tool name ${JSON.stringify(name)}: use 1 to 128 letters, digits, '_', '-' and '.'`);
    if (this.#names.tools.has(name)) throw new Error(`Tool with name '${name}' already exists`);
    if (typeof handler !== 'function') throw new Error(`Tool ${name}: the handler must be a function`);
    if (!isRecord(definition)) throw new Error(`Tool ${name}: the definition must be an object`);
    const { concerns, inputSchema, outputSchema } = definition;
    if (!isRecord(inputSchema) || inputSchema.type !== 'object') throw new Error(`Tool ${name}: inputSchema must be a JSON Schema of type "object"`);
    if (outputSchema !== undefined && (!isRecord(outputSchema) || outputSchema.type !== 'object'))
      throw new Error(`Tool ${name}: outputSchema must be a JSON Schema of type "object"`);
    // compiles both schemas now (the validators are cached for the calls): a bad schema fails the start, not a call
    validateArguments({ name, inputSchema }, {});
    if (outputSchema !== undefined) validateOutput({ name, inputSchema, outputSchema }, {});
    this.#checkConcerns(`Tool ${name}`, concerns);
    const tool: AnyExtraTool = {
      kind: 'extra',
      name,
      inputSchema,
      ...(definition.title !== undefined ? { title: definition.title } : {}),
      ...(definition.description !== undefined ? { description: definition.description } : {}),
      ...(outputSchema !== undefined ? { outputSchema } : {}),
      ...(definition.annotations !== undefined ? { annotations: definition.annotations } : {}),
      handler: handler as AnyExtraTool['handler'],
    };
    this.#names.tools.add(name);
    if (concerns !== undefined) this.#mappings.tools[name] = concerns;
    this.tools.push(tool);
  }

  /** Checks and adds a prompt. */
  addPrompt(def: RegisteredPrompt): void {
    if (!isRecord(def) || typeof def.name !== 'string' || !NAME.test(def.name))
      throw new Error(`Invalid prompt name ${JSON.stringify(isRecord(def) ? def.name : def)}: use 1 to 128 letters, digits, '_', '-' and '.'`);
    const { name } = def;
    if (this.#names.prompts.has(name)) throw new Error(`Prompt with name '${name}' already exists`);
    if ((def.handler === undefined) === (def.messages === undefined)) throw new Error(`Prompt ${name}: give either messages or a handler`);
    if (def.handler !== undefined && typeof def.handler !== 'function') throw new Error(`Prompt ${name}: the handler must be a function`);
    if (def.messages !== undefined && (!Array.isArray(def.messages) || def.messages.length === 0))
      throw new Error(`Prompt ${name}: messages must be a non-empty list`);
    for (const a of def.arguments ?? []) if (typeof a?.name !== 'string' || a.name === '') throw new Error(`Prompt ${name}: every argument needs a name`);
    this.#checkConcerns(`Prompt ${name}`, def.concerns);
    this.#names.prompts.add(name);
    if (def.concerns !== undefined) this.#mappings.prompts[name] = def.concerns;
    this.prompts.push(def);
  }

  /** Checks and adds a resource. */
  addResource(def: RegisteredResource): void {
    if (!isRecord(def) || typeof def.uri !== 'string') throw new Error('A resource needs a uri');
    const { uri } = def;
    if (!URL.canParse(uri)) throw new Error(`Invalid resource URI ${JSON.stringify(uri)}: it must be an absolute URI`);
    if (this.#names.resources.has(uri)) throw new Error(`Resource with URI '${uri}' already exists`);
    if (typeof def.name !== 'string' || def.name === '') throw new Error(`Resource ${uri}: it needs a name`);
    const given = [def.text, def.blob, def.handler].filter((v) => v !== undefined).length;
    if (given !== 1) throw new Error(`Resource ${uri}: give exactly one of text, blob and handler`);
    if (def.handler !== undefined && typeof def.handler !== 'function') throw new Error(`Resource ${uri}: the handler must be a function`);
    this.#checkConcerns(`Resource ${uri}`, def.concerns);
    this.#names.resources.add(uri);
    if (def.concerns !== undefined) this.#mappings.resources[uri] = def.concerns;
    this.resources.push(def);
  }

  /** Checks and adds a resource template. */
  addTemplate(def: RegisteredResourceTemplate): void {
    if (!isRecord(def) || typeof def.uriTemplate !== 'string') throw new Error('A resource template needs a uriTemplate');
    const t = def.uriTemplate;
    if (this.#names.resourceTemplates.has(t)) throw new Error(`Resource template with URI template '${t}' already exists`);
    try {
      new UriTemplate(t);
    } catch (err) {
      throw new Error(`Invalid resource URI template ${JSON.stringify(t)}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (typeof def.name !== 'string' || def.name === '') throw new Error(`Resource template ${t}: it needs a name`);
    if (typeof def.handler !== 'function') throw new Error(`Resource template ${t}: the handler must be a function`);
    this.#checkConcerns(`Resource template ${t}`, def.concerns);
    this.#names.resourceTemplates.add(t);
    if (def.concerns !== undefined) this.#mappings.resourceTemplates[t] = def.concerns;
    this.templates.push(def);
  }

  /** `declared` (the server's capabilities) with the kinds only registrations bring (`{ listChanged: true }` when concern updates change lists). */
  capabilities(declared: ServerCapabilities | undefined, listChanged: boolean): ServerCapabilities {
    const out: ServerCapabilities = { ...declared };
    const changing = listChanged ? { listChanged: true } : {};
    if (this.tools.length > 0 && out.tools === undefined) out.tools = changing;
    if (this.prompts.length > 0 && out.prompts === undefined) out.prompts = changing;
    if (this.resources.length + this.templates.length > 0 && out.resources === undefined) out.resources = changing;
    return out;
  }

  /** `base` (the manifest's concern mappings) with the registered primitives' added. */
  mappings(base: ConcernMappings): ConcernMappings {
    const m = this.#mappings;
    return {
      tools: { ...base.tools, ...m.tools },
      prompts: { ...base.prompts, ...m.prompts },
      resources: { ...base.resources, ...m.resources },
      resourceTemplates: { ...base.resourceTemplates, ...m.resourceTemplates },
    };
  }

  /** What the policy's rules and limits match registered primitives by (runtime/policy/registered-policy.ts). */
  primitives(): {
    kind: 'tools' | 'prompts' | 'resources' | 'resourceTemplates';
    id: string;
    concerns?: ConcernMapping;
    annotations?: Readonly<Record<string, unknown>>;
  }[] {
    const m = this.#mappings;
    const c = (map: Record<string, ConcernMapping>, id: string) => (Object.hasOwn(map, id) ? { concerns: map[id]! } : {});
    return [
      ...this.tools.map((t) => ({
        kind: 'tools' as const,
        id: t.name,
        ...c(m.tools, t.name),
        ...(t.annotations !== undefined ? { annotations: t.annotations as Record<string, unknown> } : {}),
      })),
      ...this.prompts.map((p) => ({ kind: 'prompts' as const, id: p.name, ...c(m.prompts, p.name) })),
      ...this.resources.map((r) => ({ kind: 'resources' as const, id: r.uri, ...c(m.resources, r.uri) })),
      ...this.templates.map((t) => ({ kind: 'resourceTemplates' as const, id: t.uriTemplate, ...c(m.resourceTemplates, t.uriTemplate) })),
    ];
  }

  /** A concern mapping names declared concerns and values only. */
  #checkConcerns(what: string, mapping: ConcernMapping | undefined): void {
    if (mapping === undefined) return;
    if (this.#declarations === undefined) throw new Error(`${what}: concerns given, but the server declares none (manifest \`concerns\`)`);
    if (!isRecord(mapping)) throw new Error(`${what}: concerns must map concern names to values`);
    for (const [concern, value] of Object.entries(mapping)) {
      const declared = this.#declarations.find((d) => d.name === concern);
      if (declared === undefined)
        throw new Error(`${what}: unknown concern ${JSON.stringify(concern)} (declared: ${this.#declarations.map((d) => d.name).join(', ')})`);
      for (const v of typeof value === 'string' ? [value] : value) {
        if (!declared.values.includes(v)) throw new Error(`${what}: ${JSON.stringify(v)} is not a value of concern ${concern} (${declared.values.join(', ')})`);
      }
    }
  }
}

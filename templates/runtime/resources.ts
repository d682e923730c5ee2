/**
 * Resources and resource templates (manifest `resources` / `resourceTemplates`):
 * `resources/list`, `resources/templates/list` and `resources/read` on a low-level `Server`.
 * A resource has static `text`, an embedded file (the compiler inlines it as `text` or as a
 * base64 `blob`) or a dynamic `handler`; a template always has a handler, which receives the
 * variables the SDK's RFC 6570 `UriTemplate.match` extracted.
 *
 * `resources/read` tries an exact URI match first, then the templates in the order given.
 * Unknown URI ⇒ JSON-RPC -32002 "Resource not found" with `data.uri` (the 2025-11-25 code);
 * a failing handler ⇒ -32603 naming the URI (the stack goes to stderr).
 *
 * This file is copied verbatim into every generated project.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import type { Variables } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { ErrorCode, ListResourceTemplatesRequestSchema, ListResourcesRequestSchema, McpError, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { log } from './log.js';
import { OPEN_GATE, errorMessage } from './primitives.js';
import type { PrimitiveGate, RequestExtra } from './primitives.js';

/** JSON-RPC error code for an unknown resource URI (MCP 2025-11-25). */
export const RESOURCE_NOT_FOUND = -32002;

/** What a resource handler returns: text, bytes, or explicit text/base64 blob with an optional MIME type. */
export type ResourceContent = string | Uint8Array | { readonly text?: string; readonly blob?: string; readonly mimeType?: string };

/** A fixed-URI resource. Give exactly one of `text`, `blob` (base64) and `handler`. */
export type ResourceDefinition = {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  readonly text?: string;
  /** Base64 content (an embedded binary file). */
  readonly blob?: string;
  readonly handler?: (uri: URL, extra: RequestExtra) => Promise<ResourceContent> | ResourceContent;
};

/** A family of resources named by an RFC 6570 URI template, read by a handler. */
export type ResourceTemplateDefinition = {
  readonly uriTemplate: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  readonly handler: (uri: URL, variables: Variables, extra: RequestExtra) => Promise<ResourceContent> | ResourceContent;
};

/** Options of `installResources`. */
export type InstallResourcesOptions = {
  /** Filters the lists and guards `resources/read` (e.g. the concern gate); default shows everything. */
  readonly gate?: PrimitiveGate;
};

/** One entry of a `resources/read` result. */
export type ResourceContents = ReadResourceResult['contents'][number];

/**
 * Turns what a handler (or a static definition) produced into one `contents` entry. Throws when
 * it holds neither text nor blob.
 */
export function toContents(uri: string, content: ResourceContent, mimeType?: string): ResourceContents {
  if (typeof content === 'string') return withMime({ uri, text: content }, mimeType);
  if (content instanceof Uint8Array) return withMime({ uri, blob: Buffer.from(content).toString('base64') }, mimeType);
  const mime = content.mimeType ?? mimeType;
  if (typeof content.text === 'string') return withMime({ uri, text: content.text }, mime);
  if (typeof content.blob === 'string') return withMime({ uri, blob: content.blob }, mime);
  throw new Error('the content has neither text nor blob');
}

function withMime<T extends ResourceContents>(entry: T, mimeType: string | undefined): T {
  return mimeType === undefined ? entry : { ...entry, mimeType };
}

/** The `resources/list` entry of a resource. */
export function resourceDescriptor(def: ResourceDefinition): Resource {
  const out: Resource = { uri: def.uri, name: def.name };
  if (def.title !== undefined) out.title = def.title;
  if (def.description !== undefined) out.description = def.description;
  if (def.mimeType !== undefined) out.mimeType = def.mimeType;
  return out;
}

/** The `resources/templates/list` entry of a template. */
export function templateDescriptor(def: ResourceTemplateDefinition): ResourceTemplate {
  const out: ResourceTemplate = { uriTemplate: def.uriTemplate, name: def.name };
  if (def.title !== undefined) out.title = def.title;
  if (def.description !== undefined) out.description = def.description;
  if (def.mimeType !== undefined) out.mimeType = def.mimeType;
  return out;
}

/** Parses a requested URI for a handler; an unparsable one is an invalid-params error. */
function parseUri(uri: string): URL {
  try {
    return new URL(uri);
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `Invalid resource URI: ${uri}`, { uri });
  }
}

/** Runs a handler, turning failures into -32603 errors that name the URI. */
async function run(uri: string, what: string, mimeType: string | undefined, produce: () => Promise<ResourceContent> | ResourceContent): Promise<ReadResourceResult> {
  try {
    return { contents: [toContents(uri, await produce(), mimeType)] };
  } catch (err) {
    if (err instanceof McpError) throw err;
    log('error', `reading ${what} failed`, { uri, error: err, stack: err instanceof Error ? err.stack : undefined });
    throw new McpError(ErrorCode.InternalError, `Reading resource ${uri} failed: ${errorMessage(err)}`, { uri });
  }
}

/**
 * Registers `resources/list`, `resources/templates/list` and `resources/read` on `server`, which
 * must declare the `resources` capability. Duplicate URIs or templates, and templates the SDK
 * cannot parse, throw here.
 */
export function installResources(
  server: Server,
  defs: { readonly resources?: readonly ResourceDefinition[]; readonly templates?: readonly ResourceTemplateDefinition[] },
  opts: InstallResourcesOptions = {},
): void {
  const gate = opts.gate ?? OPEN_GATE;
  const resources = defs.resources ?? [];
  const templates = defs.templates ?? [];
  const byUri = new Map<string, ResourceDefinition>();
  for (const r of resources) {
    if (byUri.has(r.uri)) throw new Error(`Duplicate resource URI: ${r.uri}`);
    byUri.set(r.uri, r);
  }
  const seen = new Set<string>();
  const matchers = templates.map((t) => {
    if (seen.has(t.uriTemplate)) throw new Error(`Duplicate resource template: ${t.uriTemplate}`);
    seen.add(t.uriTemplate);
    return { def: t, template: new UriTemplate(t.uriTemplate) };
  });

  server.setRequestHandler(ListResourcesRequestSchema, (_request, extra) => ({
    resources: resources.filter((r) => gate.visible('resources', r.uri, extra)).map((r) => gate.decorate('resources', r.uri, resourceDescriptor(r))),
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, (_request, extra) => ({
    resourceTemplates: templates
      .filter((t) => gate.visible('resourceTemplates', t.uriTemplate, extra))
      .map((t) => gate.decorate('resourceTemplates', t.uriTemplate, templateDescriptor(t))),
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const def = byUri.get(uri);
    if (def !== undefined) {
      gate.assertAllowed('resources', uri, extra);
      const { handler } = def;
      if (handler !== undefined) {
        const url = parseUri(uri);
        return run(uri, `resource ${uri}`, def.mimeType, () => handler(url, extra));
      }
      const content: ResourceContent = def.text !== undefined ? def.text : { blob: def.blob };
      return run(uri, `resource ${uri}`, def.mimeType, () => content);
    }
    for (const { def: t, template } of matchers) {
      const variables = template.match(uri);
      if (variables === null) continue;
      gate.assertAllowed('resourceTemplates', t.uriTemplate, extra);
      const url = parseUri(uri);
      return run(uri, `resource template ${t.uriTemplate}`, t.mimeType, () => t.handler(url, variables, extra));
    }
    throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
  });
}

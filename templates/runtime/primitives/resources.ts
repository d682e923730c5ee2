/**
 * Resources and resource templates (manifest `resources` / `resourceTemplates`):
 * `resources/list`, `resources/templates/list` and `resources/read` on a low-level `Server`.
 * A resource has static `text`, an embedded file (the compiler inlines it as `text` or as a
 * base64 `blob`) or a dynamic `handler`; a template always has a handler, which receives the
 * variables the SDK's RFC 6570 `UriTemplate.match` extracted.
 *
 * `resources/read` tries an exact URI match first, then the templates in the order given.
 * Unknown URI ⇒ the SDK's `ResourceNotFoundError`: JSON-RPC -32602 with `data: { uri }` in BOTH
 * eras. 2026-07-28 requires -32602; 2025-11-25 suggested -32002, but the v2 SDK maps any
 * handler-thrown -32002 to -32602 at its wire encoder on every revision (as the v1 SDK's own
 * servers always answered), so -32002 cannot be sent; clients recognise the miss by
 * `data.uri`. A failing handler ⇒ -32603 naming the URI (the stack goes to stderr).
 *
 * This file is copied verbatim into every generated project.
 */

import type { ReadResourceResult, Resource, ResourceTemplateType as ResourceTemplate, Server, ServerContext, Variables } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, UriTemplate } from '@modelcontextprotocol/server';
import { errorMessage } from '../core/error-result.js';
import { log } from '../core/log.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import { OPEN_GATE } from '../core/primitive-gate.js';

/** The variables a template match extracted (the SDK's type, re-exported for handler modules). */
export type { Variables };

/**
 * JSON-RPC error code a client sees for an unknown resource URI, in both eras (module comment):
 * -32602 with `data: { uri }`. (-32002, the 2025-11-25 suggestion, is what clients should also
 * accept from older servers.)
 */
export const RESOURCE_NOT_FOUND = ProtocolErrorCode.InvalidParams;

/** What a resource handler returns: text, bytes, or explicit text/base64 blob with an optional MIME type. */
export type ResourceContent = string | Uint8Array | { readonly text?: string; readonly blob?: string; readonly mimeType?: string };

/** A fixed-URI resource. Give exactly one of `text`, `blob` (base64) and `handler`. */
export type ResourceDefinition = {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** OAuth scopes an MCP access token must carry to see, read and subscribe to the resource (manifest `scopes`; oauth-scopes.ts). */
  readonly scopes?: readonly string[];
  readonly text?: string;
  /** Base64 content (an embedded binary file). */
  readonly blob?: string;
  readonly handler?: (uri: URL, ctx: ServerContext) => Promise<ResourceContent> | ResourceContent;
  /** With a handler: read it every this many ms while someone is subscribed, and notify them when its content changes (subscriptions.ts). */
  readonly refreshMs?: number;
};

/** A family of resources named by an RFC 6570 URI template, read by a handler. */
export type ResourceTemplateDefinition = {
  readonly uriTemplate: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** OAuth scopes an MCP access token must carry to see the template and read its resources (manifest `scopes`; oauth-scopes.ts). */
  readonly scopes?: readonly string[];
  /** What `completion/complete` offers for each variable: values, or a handler computing them (completion.ts). */
  readonly complete?: Readonly<
    Record<
      string,
      | readonly string[]
      | ((
          value: string,
          context: { readonly arguments: Readonly<Record<string, string>>; readonly ctx: ServerContext },
        ) => readonly string[] | Promise<readonly string[]>)
    >
  >;
  readonly handler: (uri: URL, variables: Variables, ctx: ServerContext) => Promise<ResourceContent> | ResourceContent;
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
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid resource URI: ${uri}`, { uri });
  }
}

/** Runs a handler, turning failures into -32603 errors that name the URI. */
async function run(
  uri: string,
  what: string,
  mimeType: string | undefined,
  produce: () => Promise<ResourceContent> | ResourceContent,
): Promise<ReadResourceResult> {
  try {
    return { contents: [toContents(uri, await produce(), mimeType)] };
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    log('error', `reading ${what} failed`, { uri, error: err, stack: err instanceof Error ? err.stack : undefined });
    throw new ProtocolError(ProtocolErrorCode.InternalError, `Reading resource ${uri} failed: ${errorMessage(err)}`, { uri });
  }
}

/**
 * Registers `resources/list`, `resources/templates/list` and `resources/read` on `server` (a v2
 * SDK `Server`, either era: the handlers keep no state), which must declare the `resources`
 * capability. Duplicate URIs or templates, and templates the SDK
 * cannot parse, throw here. Returns the reader `resources/read` uses (gate included), for the
 * prompts that embed a declared resource.
 */
export function installResources(
  server: Server,
  defs: { readonly resources?: readonly ResourceDefinition[]; readonly templates?: readonly ResourceTemplateDefinition[] },
  opts: InstallResourcesOptions = {},
): (uri: string, ctx: ServerContext) => Promise<ReadResourceResult> {
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

  server.setRequestHandler('resources/list', (_request, extra) => ({
    resources: resources.filter((r) => gate.visible('resources', r.uri, extra)).map((r) => gate.decorate('resources', r.uri, resourceDescriptor(r))),
  }));

  server.setRequestHandler('resources/templates/list', (_request, extra) => ({
    resourceTemplates: templates
      .filter((t) => gate.visible('resourceTemplates', t.uriTemplate, extra))
      .map((t) => gate.decorate('resourceTemplates', t.uriTemplate, templateDescriptor(t))),
  }));

  const read = async (uri: string, extra: ServerContext): Promise<ReadResourceResult> => {
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
    throw new ResourceNotFoundError(uri, `Resource not found: ${uri}`);
  };
  server.setRequestHandler('resources/read', (request, extra) => read(request.params.uri, extra));
  return read;
}

/**
 * Prompts (manifest `prompts`): `prompts/list` and `prompts/get` on a low-level
 * `Server`. A prompt is either a list of message templates (Handlebars over the prompt's
 * arguments) or a dynamic handler (for runtime-built prompts such as `with_context`).
 *
 * Rendering: Handlebars with `noEscape: true` (prompts are not HTML) and `strict: false`, so an
 * optional argument the client left out renders as empty text and `{{#if arg}}` works.
 * Required arguments are checked before rendering (missing ⇒ -32602 naming them), and the
 * compiler checks at build time that templates only reference declared arguments, so strict mode
 * would add nothing. Templates are compiled once, on a prompt's first use. Only declared
 * arguments reach a template. Prototype access stays disabled (Handlebars' default).
 *
 * Besides text, a message may carry an image or audio (embedded at build time, base64), an
 * embedded resource (its `uri` and `text` are templates too, or its content was embedded at
 * build time, or it names a declared resource, read through `readResource` — the gate that
 * guards `resources/read` included — when the prompt is got) or a resource link.
 *
 * This file is copied verbatim into every generated project.
 */

import type { GetPromptResult, InputRequiredResult, Prompt, PromptMessage, ReadResourceResult, Server, ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import Handlebars from 'handlebars';
import { errorMessage } from '../core/error-result.js';
import { log } from '../core/log.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import { OPEN_GATE } from '../core/primitive-gate.js';

/** One argument of a prompt. Values arrive as strings. */
export type PromptArgumentDefinition = {
  readonly name: string;
  readonly description?: string;
  readonly required?: boolean;
  /** What `completion/complete` offers for it: values, or a handler computing them (completion.ts). */
  readonly complete?:
    | readonly string[]
    | ((
        value: string,
        context: { readonly arguments: Readonly<Record<string, string>>; readonly ctx: ServerContext },
      ) => readonly string[] | Promise<readonly string[]>);
};

type Role = 'user' | 'assistant';

/** One text message of a template prompt: `text` is a Handlebars template over the arguments. */
export type PromptMessageTemplate = {
  readonly role: Role;
  readonly text: string;
};

/** An embedded resource of a prompt message: `uri` (and `text`) are templates; `read` names a declared resource read when the prompt is got. */
export type PromptResourceTemplate = { readonly uri: string; readonly mimeType?: string; readonly text?: string; readonly blob?: string; readonly read?: true };

/** One message of a template prompt: text, image, audio, embedded resource or resource link. */
export type PromptMessageDefinition =
  | PromptMessageTemplate
  | { readonly role: Role; readonly image: { readonly data: string; readonly mimeType: string } }
  | { readonly role: Role; readonly audio: { readonly data: string; readonly mimeType: string } }
  | { readonly role: Role; readonly resource: PromptResourceTemplate }
  | {
      readonly role: Role;
      readonly resourceLink: {
        readonly uri: string;
        readonly name: string;
        readonly title?: string;
        readonly description?: string;
        readonly mimeType?: string;
      };
    };

/** Reads a declared resource for a prompt (installResources' reader: the resources' gate applies). */
export type PromptResourceReader = (uri: string, ctx: ServerContext) => Promise<ReadResourceResult>;

/**
 * Builds the result of a dynamic prompt from its (checked) arguments. It may ask the client for
 * input instead (SEP-2322): return `inputRequired({ inputRequests })` from the SDK, and read the
 * answers of the retried request with `inputResponse(ctx.mcpReq.inputResponses, key)`; for a
 * legacy client the SDK sends the requests and runs the handler again with the answers.
 */
export type PromptHandler = (
  args: Record<string, string>,
  ctx: ServerContext,
) => Promise<GetPromptResult | InputRequiredResult> | GetPromptResult | InputRequiredResult;

/** A prompt: metadata plus either message templates or a handler. */
export type PromptDefinition = {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: readonly PromptArgumentDefinition[];
  /** OAuth scopes an MCP access token must carry to see and get the prompt (manifest `scopes`; oauth-scopes.ts). */
  readonly scopes?: readonly string[];
} & (
  | { readonly messages: readonly PromptMessageDefinition[]; readonly handler?: undefined }
  | { readonly handler: PromptHandler; readonly messages?: undefined }
);

/** A rendered text message. */
export type RenderedMessage = { role: Role; content: { type: 'text'; text: string } };

/** Options of `installPrompts`. */
export type InstallPromptsOptions = {
  /** Filters the list and guards `prompts/get` (e.g. the concern gate); default shows everything. */
  readonly gate?: PrimitiveGate;
  /** Reads the declared resources messages embed by URI (`resource.read`); without it such a message fails the prompt. */
  readonly readResource?: PromptResourceReader;
};

const handlebars = Handlebars.create();
const compiled = new Map<string, Handlebars.TemplateDelegate<Record<string, string>>>();

/** The compiled template of a source text, compiled on first use (templates come from the build, so the cache is bounded by it). */
function templateOf(source: string): Handlebars.TemplateDelegate<Record<string, string>> {
  let template = compiled.get(source);
  if (template === undefined) {
    template = handlebars.compile<Record<string, string>>(source, { noEscape: true, strict: false });
    compiled.set(source, template);
  }
  return template;
}

/** Names of the required arguments of `def` that `args` lacks. */
export function missingArguments(def: PromptDefinition, args: Readonly<Record<string, string>>): string[] {
  return (def.arguments ?? []).filter((a) => a.required === true && (!Object.hasOwn(args, a.name) || typeof args[a.name] !== 'string')).map((a) => a.name);
}

/** Only the declared arguments of `def`, taken from `args`. */
function declaredArguments(def: Pick<PromptDefinition, 'arguments'>, args: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of def.arguments ?? []) {
    const value = Object.hasOwn(args, a.name) ? args[a.name] : undefined;
    if (typeof value === 'string') out[a.name] = value;
  }
  return out;
}

/**
 * Renders the messages of a template prompt with `args` (pure; no argument check: see
 * `missingArguments`). Throws if a template cannot be compiled or rendered.
 */
export function renderPrompt(
  def: Pick<PromptDefinition, 'arguments'> & { readonly messages: readonly PromptMessageTemplate[] },
  args: Readonly<Record<string, string>>,
): RenderedMessage[] {
  const context = declaredArguments(def, args);
  return def.messages.map((m) => ({ role: m.role, content: { type: 'text', text: templateOf(m.text)(context) } }));
}

/**
 * Renders every kind of message of a template prompt (module comment). Throws when a template
 * fails, or a declared resource cannot be read (a `ProtocolError` from `read` passes through).
 */
export async function renderMessages(
  def: PromptDefinition & { readonly messages: readonly PromptMessageDefinition[] },
  args: Readonly<Record<string, string>>,
  ctx: ServerContext,
  read?: PromptResourceReader,
): Promise<PromptMessage[]> {
  const context = declaredArguments(def, args);
  const out: PromptMessage[] = [];
  for (const m of def.messages) {
    if ('text' in m) out.push({ role: m.role, content: { type: 'text', text: templateOf(m.text)(context) } });
    else if ('image' in m) out.push({ role: m.role, content: { type: 'image', data: m.image.data, mimeType: m.image.mimeType } });
    else if ('audio' in m) out.push({ role: m.role, content: { type: 'audio', data: m.audio.data, mimeType: m.audio.mimeType } });
    else if ('resourceLink' in m) out.push({ role: m.role, content: { type: 'resource_link', ...m.resourceLink } });
    else if (m.resource.read === true) {
      if (read === undefined) throw new Error(`no resource reader for ${m.resource.uri}`);
      for (const resource of (await read(m.resource.uri, ctx)).contents) out.push({ role: m.role, content: { type: 'resource', resource } });
    } else {
      const r = m.resource;
      const uri = templateOf(r.uri)(context);
      const mime = r.mimeType !== undefined ? { mimeType: r.mimeType } : {};
      const resource = r.text !== undefined ? { uri, ...mime, text: templateOf(r.text)(context) } : { uri, ...mime, blob: r.blob ?? '' };
      out.push({ role: m.role, content: { type: 'resource', resource } });
    }
  }
  return out;
}

/** The `prompts/list` entry of a prompt. */
export function promptDescriptor(def: PromptDefinition): Prompt {
  const out: Prompt = { name: def.name };
  if (def.title !== undefined) out.title = def.title;
  if (def.description !== undefined) out.description = def.description;
  if (def.arguments !== undefined && def.arguments.length > 0) {
    out.arguments = def.arguments.map((a) => {
      const arg: NonNullable<Prompt['arguments']>[number] = { name: a.name };
      if (a.description !== undefined) arg.description = a.description;
      if (a.required !== undefined) arg.required = a.required;
      return arg;
    });
  }
  return out;
}

/**
 * Registers `prompts/list` (filtered by the gate) and `prompts/get` on `server` (a v2 SDK
 * `Server`, either era: the handlers keep no state), which must declare the `prompts` capability. Unknown prompt or missing required argument ⇒ JSON-RPC
 * -32602; a template or handler failure ⇒ -32603 (logged). Duplicate names throw here.
 */
export function installPrompts(server: Server, prompts: readonly PromptDefinition[], opts: InstallPromptsOptions = {}): void {
  const gate = opts.gate ?? OPEN_GATE;
  const byName = new Map<string, PromptDefinition>();
  for (const p of prompts) {
    if (byName.has(p.name)) throw new Error(`Duplicate prompt name: ${p.name}`);
    byName.set(p.name, p);
  }
  const descriptors = new Map(prompts.map((p) => [p.name, promptDescriptor(p)]));

  server.setRequestHandler('prompts/list', (_request, extra) => ({
    prompts: prompts
      .filter((p) => gate.visible('prompts', p.name, extra))
      .map((p) => gate.decorate('prompts', p.name, descriptors.get(p.name) ?? promptDescriptor(p))),
  }));

  server.setRequestHandler('prompts/get', async (request, extra): Promise<GetPromptResult | InputRequiredResult> => {
    const { name } = request.params;
    const def = byName.get(name);
    if (def === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${name}`);
    gate.assertAllowed('prompts', name, extra);
    const args = request.params.arguments ?? {};
    const missing = missingArguments(def, args);
    if (missing.length > 0) {
      const list = missing.map((m) => JSON.stringify(m)).join(', ');
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${name}: missing required argument${missing.length === 1 ? '' : 's'} ${list}`, {
        missing,
      });
    }
    try {
      if (def.handler !== undefined) return await def.handler(declaredArguments(def, args), extra);
      const result: GetPromptResult = { messages: await renderMessages(def, args, extra, opts.readResource) };
      if (def.description !== undefined) result.description = def.description;
      return result;
    } catch (err) {
      if (err instanceof ProtocolError) throw err;
      log('error', `prompt ${name} failed`, { error: err, stack: err instanceof Error ? err.stack : undefined });
      throw new ProtocolError(ProtocolErrorCode.InternalError, `Prompt ${name} could not be rendered: ${errorMessage(err)}`);
    }
  });
}

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
 * This file is copied verbatim into every generated project.
 */
import Handlebars from 'handlebars';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { GetPromptResult, Prompt, Server, ServerContext } from '@modelcontextprotocol/server';
import { log } from './log.js';
import { OPEN_GATE, errorMessage } from './primitives.js';
import type { PrimitiveGate } from './primitives.js';

/** One argument of a prompt. Values arrive as strings. */
export type PromptArgumentDefinition = {
  readonly name: string;
  readonly description?: string;
  readonly required?: boolean;
};

/** One message of a template prompt: `text` is a Handlebars template over the arguments. */
export type PromptMessageTemplate = {
  readonly role: 'user' | 'assistant';
  readonly text: string;
};

/** Builds the result of a dynamic prompt from its (checked) arguments. */
export type PromptHandler = (args: Record<string, string>, ctx: ServerContext) => Promise<GetPromptResult> | GetPromptResult;

/** A prompt: metadata plus either message templates or a handler. */
export type PromptDefinition = {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: readonly PromptArgumentDefinition[];
} & ({ readonly messages: readonly PromptMessageTemplate[]; readonly handler?: undefined } | { readonly handler: PromptHandler; readonly messages?: undefined });

/** A rendered prompt message. */
export type RenderedMessage = { role: 'user' | 'assistant'; content: { type: 'text'; text: string } };

/** Options of `installPrompts`. */
export type InstallPromptsOptions = {
  /** Filters the list and guards `prompts/get` (e.g. the concern gate); default shows everything. */
  readonly gate?: PrimitiveGate;
};

const handlebars = Handlebars.create();
const compiled = new WeakMap<PromptMessageTemplate, Handlebars.TemplateDelegate<Record<string, string>>>();

/** The compiled template of a message, compiled on first use. */
function templateOf(message: PromptMessageTemplate): Handlebars.TemplateDelegate<Record<string, string>> {
  let template = compiled.get(message);
  if (template === undefined) {
    template = handlebars.compile<Record<string, string>>(message.text, { noEscape: true, strict: false });
    compiled.set(message, template);
  }
  return template;
}

/** Names of the required arguments of `def` that `args` lacks. */
export function missingArguments(def: PromptDefinition, args: Readonly<Record<string, string>>): string[] {
  return (def.arguments ?? []).filter((a) => a.required === true && (!Object.hasOwn(args, a.name) || typeof args[a.name] !== 'string')).map((a) => a.name);
}

/** Only the declared arguments of `def`, taken from `args`. */
function declaredArguments(def: PromptDefinition, args: Readonly<Record<string, string>>): Record<string, string> {
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
export function renderPrompt(def: PromptDefinition & { readonly messages: readonly PromptMessageTemplate[] }, args: Readonly<Record<string, string>>): RenderedMessage[] {
  const context = declaredArguments(def, args);
  return def.messages.map((m) => ({ role: m.role, content: { type: 'text', text: templateOf(m)(context) } }));
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
    prompts: prompts.filter((p) => gate.visible('prompts', p.name, extra)).map((p) => gate.decorate('prompts', p.name, descriptors.get(p.name) ?? promptDescriptor(p))),
  }));

  server.setRequestHandler('prompts/get', async (request, extra): Promise<GetPromptResult> => {
    const { name } = request.params;
    const def = byName.get(name);
    if (def === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${name}`);
    gate.assertAllowed('prompts', name, extra);
    const args = request.params.arguments ?? {};
    const missing = missingArguments(def, args);
    if (missing.length > 0) {
      const list = missing.map((m) => JSON.stringify(m)).join(', ');
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${name}: missing required argument${missing.length === 1 ? '' : 's'} ${list}`, { missing });
    }
    try {
      if (def.handler !== undefined) return await def.handler(declaredArguments(def, args), extra);
      const result: GetPromptResult = { messages: renderPrompt(def, args) };
      if (def.description !== undefined) result.description = def.description;
      return result;
    } catch (err) {
      if (err instanceof ProtocolError) throw err;
      log('error', `prompt ${name} failed`, { error: err, stack: err instanceof Error ? err.stack : undefined });
      throw new ProtocolError(ProtocolErrorCode.InternalError, `Prompt ${name} could not be rendered: ${errorMessage(err)}`);
    }
  });
}

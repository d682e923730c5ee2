/**
 * The prompts of the reflection gate (reflection.ts): one prompt definition per distinct gate
 * prompt (its arguments: the prompt-arg names of the gates that use it), read from the gates and
 * checked (a declared domain, one template per prompt); and, per call, a gate's prompt arguments
 * rendered from the tool's arguments (Handlebars; `{{json body}}` is canonical JSON), its key
 * (reflection-key.ts) and its prompt text.
 *
 * This file is copied verbatim into every generated project.
 */
import Handlebars from 'handlebars';
import { canonicalJson } from '../core/canonical-json.js';
import type { PromptDefinition, PromptMessageTemplate } from '../primitives/prompts.js';
import { renderPrompt } from '../primitives/prompts.js';
import type { GateDefinition, ReflectionScope } from './reflection-config.js';
import { gateKey } from './reflection-key.js';

/** A gate resolved for one call: its rendered prompt arguments and its key. */
export type Resolved = { gate: GateDefinition; promptArgs: Record<string, string>; hash: string };

const hbs = Handlebars.create();
// canonical (keys sorted), so the same value gives the same prompt argument, and key, in any key order
hbs.registerHelper('json', (value: unknown) => (value === undefined ? '' : canonicalJson(value)));

/** The gates' prompts, and each gate resolved for a call. */
export class GatePrompts {
  private readonly prompts = new Map<string, PromptDefinition & { readonly messages: readonly PromptMessageTemplate[] }>();
  private readonly argTemplates = new Map<string, Handlebars.TemplateDelegate<Record<string, unknown>>>();
  private readonly scope: ReflectionScope | undefined;

  /**
   * Reads the prompts of `gatesByTool`, adding each domain's prompts to `domainPrompts`; throws when a gate names a domain
   * `hasDomain` does not know or a prompt is declared with two templates. `scope`: the config's, for gates without their own.
   */
  constructor(
    gatesByTool: Readonly<Record<string, readonly GateDefinition[]>>,
    hasDomain: (domain: string) => boolean,
    domainPrompts: Map<string, Set<string>>,
    scope: ReflectionScope | undefined,
  ) {
    this.scope = scope;
    const argUse = new Map<string, { keys: string[]; gates: GateDefinition[] }>();
    for (const [tool, gates] of Object.entries(gatesByTool)) {
      for (const gate of gates) {
        if (!hasDomain(gate.domain)) throw new Error(`Reflection gate of tool ${tool}: domain ${JSON.stringify(gate.domain)} is not declared`);
        const prev = this.prompts.get(gate.prompt);
        if (prev !== undefined && prev.messages[0]?.text !== gate.template)
          throw new Error(`Reflection prompt ${gate.prompt} is used with two different templates`);
        const use = argUse.get(gate.prompt) ?? { keys: [], gates: [] };
        for (const k of Object.keys(gate.promptArgs ?? {})) if (!use.keys.includes(k)) use.keys.push(k);
        use.gates.push(gate);
        argUse.set(gate.prompt, use);
        const inDomain = domainPrompts.get(gate.domain) ?? new Set<string>();
        inDomain.add(gate.prompt);
        domainPrompts.set(gate.domain, inDomain);
        if (prev === undefined) {
          const description = gate.description ?? `Reflection prompt of domain "${gate.domain}": answer with a JSON justification.`;
          this.prompts.set(gate.prompt, { name: gate.prompt, description, messages: [{ role: 'user', text: gate.template }] });
        }
      }
    }
    for (const [name, use] of argUse) {
      const def = this.prompts.get(name);
      if (def === undefined) continue;
      const args = use.keys.map((k) => ({ name: k, required: use.gates.every((g) => Object.hasOwn(g.promptArgs ?? {}, k)) }));
      this.prompts.set(name, { ...def, arguments: args });
    }
  }

  definitions(): PromptDefinition[] {
    return [...this.prompts.values()];
  }

  /** Renders a gate's prompt arguments from the tool's arguments. */
  private renderArgs(gate: GateDefinition, toolArgs: Record<string, unknown>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, src] of Object.entries(gate.promptArgs ?? {})) {
      let template = this.argTemplates.get(src);
      if (template === undefined) {
        template = hbs.compile<Record<string, unknown>>(src, { noEscape: true, strict: false });
        this.argTemplates.set(src, template);
      }
      out[name] = template(toolArgs);
    }
    return out;
  }

  resolve(tool: string, gate: GateDefinition, toolArgs: Record<string, unknown>): Resolved {
    const promptArgs = this.renderArgs(gate, toolArgs);
    const scope = gate.scope ?? this.scope ?? 'domain';
    const hash = gateKey({ domain: gate.domain, templateText: gate.template, promptArgs, ...(scope === 'tool' ? { tool } : {}) });
    return { gate, promptArgs, hash };
  }

  /** The gate's prompt text rendered with its arguments (what `prompts/get` returns). */
  text(r: Resolved): string {
    const def = this.prompts.get(r.gate.prompt);
    return def === undefined
      ? r.gate.template
      : renderPrompt(def, r.promptArgs)
          .map((m) => m.content.text)
          .join('\n\n');
  }
}

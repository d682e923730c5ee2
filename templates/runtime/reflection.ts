/**
 * The reflection gate (manifest `reflection`): a gated tool runs only once a
 * justification exists for each of its gates.
 *
 * `check(tool, args, ctx)` walks the tool's gates in order. Each gate's key (reflection-key.ts)
 * is computed from its domain, its prompt template and its prompt arguments, which are
 * Handlebars templates over the tool's arguments (`{{petId}}`; `{{json body}}` renders a value as
 * canonical JSON, keys sorted). A stored justification that still validates satisfies the gate. On a miss:
 *  - mode `auto`/`sampling` and the client advertised `sampling`: the server asks the client's
 *    model (reflection-sampling.ts), persists the valid answer and goes on with the next gate;
 *  - otherwise (or when sampling failed, in `auto`): an `isError` hint
 *    `{prompt, prompt_args, hash, domain, remaining}` telling the host to render the prompt
 *    (`prompts/get`), have the model write the JSON, call `persist_justification`, and retry;
 *  - mode `sampling` never hints: without client sampling, or after two invalid answers, the
 *    call fails with an explanation (and `persist_justification` is not needed).
 * Hint hashes are remembered in memory; `persist` accepts only those, for the domain they were
 * issued for. Share one `ReflectionGate` between all sessions of a process.
 *
 * This file is copied verbatim into every generated project.
 */
import Handlebars from 'handlebars';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { log } from './log.js';
import { errorMessage } from './primitives.js';
import { renderPrompt } from './prompts.js';
import type { PromptDefinition, PromptMessageTemplate } from './prompts.js';
import { PERSIST_TOOL_NAME, persistToolFor } from './reflection-config.js';
import type { ToolEntry } from './surface.js';
import type { GateContext, GateDefinition, GateHint, GateOutcome, ReflectionConfig, ReflectionMode } from './reflection-config.js';
import { canonicalJson, gateKey, isGateKey } from './reflection-key.js';
import { DEFAULT_JUSTIFICATION_SCHEMA, justificationChecker, sampleJustification } from './reflection-sampling.js';
import type { JustificationCheck } from './reflection-sampling.js';
import { JustificationStore, StoreError, jsonByteLength } from './reflection-store.js';
import { settingsVariables } from './settings.js';
import type { JsonSchema } from './types.js';

export { PERSIST_TOOL, PERSIST_TOOL_NAME, persistToolFor } from './reflection-config.js';
export type { GateContext, GateDefinition, GateHint, GateOutcome, ReflectionConfig, ReflectionMode, ReflectionScope } from './reflection-config.js';
export { DEFAULT_JUSTIFICATION_SCHEMA } from './reflection-sampling.js';
export { JustificationStore } from './reflection-store.js';
export type { JustificationRecord } from './reflection-store.js';

/**
 * `config` with `storeDir` taken from `<envPrefix>_REFLECTION_DIR` when that variable is set and
 * not empty (relative paths are relative to the working directory, as in the manifest).
 */
export function reflectionConfigFromEnv(config: ReflectionConfig, envPrefix: string, env: NodeJS.ProcessEnv = process.env): ReflectionConfig {
  const dir = env[settingsVariables(envPrefix).reflectionDir];
  return dir !== undefined && dir !== '' ? { ...config, storeDir: dir } : config;
}

/** Most hint hashes remembered; the oldest are forgotten first. */
const MAX_ISSUED = 10_000;

type Issued = { domain: string; tool: string; prompt: string; promptArgs: Record<string, string> };
type Resolved = { gate: GateDefinition; promptArgs: Record<string, string>; hash: string };

function failure(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

const hbs = Handlebars.create();
// canonical (keys sorted), so the same value gives the same prompt argument, and key, in any key order
hbs.registerHelper('json', (value: unknown) => (value === undefined ? '' : canonicalJson(value)));

/** Enforces gates for tool calls and serves their prompts and `persist_justification`. */
export class ReflectionGate {
  readonly mode: ReflectionMode;
  readonly store: JustificationStore;
  /** The justification schema in force. */
  readonly schema: JsonSchema;
  /** Whether the host flow exists (`mode` is not `sampling`): list `persistTool` and route its calls to `persist`. */
  readonly exposesPersistTool: boolean;
  /** The `persist_justification` tool to list, with the declared domains and the justification schema. */
  readonly persistTool: ToolEntry;
  private readonly config: ReflectionConfig;
  private readonly validateJustification: JustificationCheck;
  private readonly prompts = new Map<string, PromptDefinition & { readonly messages: readonly PromptMessageTemplate[] }>();
  private readonly argTemplates = new Map<string, Handlebars.TemplateDelegate<Record<string, unknown>>>();
  private readonly issued = new Map<string, Issued>();
  private readonly noStructured: ReadonlySet<string>;

  /** Throws when a gate names an undeclared domain or a prompt is declared with two templates. */
  constructor(config: ReflectionConfig) {
    this.config = config;
    this.mode = config.mode ?? 'auto';
    this.schema = config.justificationSchema ?? DEFAULT_JUSTIFICATION_SCHEMA;
    this.store = new JustificationStore(config.storeDir, config.domains, config.store);
    this.validateJustification = justificationChecker(this.schema);
    this.exposesPersistTool = this.mode !== 'sampling';
    this.noStructured = new Set(config.toolsWithOutputSchema ?? []);
    this.persistTool = persistToolFor(this.schema, config.domains);
    const argUse = new Map<string, { keys: string[]; gates: GateDefinition[] }>();
    for (const [tool, gates] of Object.entries(config.gates)) {
      for (const gate of gates) {
        if (!this.store.hasDomain(gate.domain)) throw new Error(`Reflection gate of tool ${tool}: domain ${JSON.stringify(gate.domain)} is not declared`);
        const prev = this.prompts.get(gate.prompt);
        if (prev !== undefined && prev.messages[0]?.text !== gate.template) throw new Error(`Reflection prompt ${gate.prompt} is used with two different templates`);
        const use = argUse.get(gate.prompt) ?? { keys: [], gates: [] };
        for (const k of Object.keys(gate.promptArgs ?? {})) if (!use.keys.includes(k)) use.keys.push(k);
        use.gates.push(gate);
        argUse.set(gate.prompt, use);
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

  /** Names of the gated tools. */
  gatedTools(): string[] {
    return Object.keys(this.config.gates).filter((t) => this.gatesOf(t).length > 0);
  }

  /** Whether `tool` has at least one gate. */
  isGated(tool: string): boolean {
    return this.gatesOf(tool).length > 0;
  }

  /** The gates of `tool` (own entries only: a tool named `constructor` has none). */
  private gatesOf(tool: string): readonly GateDefinition[] {
    return Object.hasOwn(this.config.gates, tool) ? (this.config.gates[tool] ?? []) : [];
  }

  /** One prompt definition per distinct gate prompt, for `installPrompts` (arguments = the prompt-arg names). */
  promptsFor(): PromptDefinition[] {
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

  private resolve(tool: string, gate: GateDefinition, toolArgs: Record<string, unknown>): Resolved {
    const promptArgs = this.renderArgs(gate, toolArgs);
    const scope = gate.scope ?? this.config.scope ?? 'domain';
    const hash = gateKey({ domain: gate.domain, templateText: gate.template, promptArgs, ...(scope === 'tool' ? { tool } : {}) });
    return { gate, promptArgs, hash };
  }

  /** Whether a stored justification that still validates exists for `r`. */
  private async satisfied(r: Resolved): Promise<boolean> {
    try {
      const record = await this.store.get(r.gate.domain, r.hash);
      if (record === undefined) return false;
      const problems = this.validateJustification(record.justification);
      if (problems.length > 0) log('warn', `reflection: stored justification ${r.gate.domain}/${r.hash} no longer validates; asking again`, { problems });
      return problems.length === 0;
    } catch (err) {
      log('warn', `reflection: cannot read justification ${r.gate.domain}/${r.hash}`, err);
      return false;
    }
  }

  /** The gate's prompt text rendered with its arguments (what `prompts/get` returns). */
  private promptText(r: Resolved): string {
    const def = this.prompts.get(r.gate.prompt);
    return def === undefined ? r.gate.template : renderPrompt(def, r.promptArgs).map((m) => m.content.text).join('\n\n');
  }

  /**
   * Decides whether tool `tool` may run with `toolArgs` (see the module comment). Never throws
   * for gate misses or store problems; a cancelled call rethrows the abort.
   */
  async check(tool: string, toolArgs: unknown, ctx: GateContext): Promise<GateOutcome> {
    const gates = this.gatesOf(tool);
    if (gates.length === 0) return { ok: true };
    const args = typeof toolArgs === 'object' && toolArgs !== null && !Array.isArray(toolArgs) ? (toolArgs as Record<string, unknown>) : {};
    let resolved: Resolved[];
    try {
      resolved = gates.map((g) => this.resolve(tool, g, args));
    } catch (err) {
      log('error', `reflection: cannot render the prompt arguments of ${tool}`, err);
      return { ok: false, result: failure(`Tool ${tool}: cannot compute its reflection gate: ${errorMessage(err)}`) };
    }
    const sampling = ctx.server.getClientCapabilities()?.sampling !== undefined;
    for (let i = 0; i < resolved.length; i++) {
      const r = resolved[i] as Resolved;
      if (await this.satisfied(r)) continue;
      let problems: readonly string[] = [];
      if (this.mode !== 'host' && sampling) {
        const outcome = await this.viaSampling(tool, r, ctx);
        if (outcome === true) continue;
        problems = outcome;
      }
      if (this.mode === 'sampling') {
        const why = sampling
          ? `no valid justification could be obtained from the client's model:\n${problems.map((p) => `- ${p}`).join('\n')}\nCalling the tool again asks again.`
          : 'the client does not support MCP sampling, which this server requires for its reflection gates (reflection mode "sampling").';
        return { ok: false, result: failure(`Tool ${tool} needs a justification (domain "${r.gate.domain}"), but ${why}`) };
      }
      let remaining = 1;
      for (const later of resolved.slice(i + 1)) if (!(await this.satisfied(later))) remaining++;
      return { ok: false, result: this.hint(tool, r, remaining) };
    }
    return { ok: true };
  }

  /** `true` once a sampled justification is stored; else the problems (after logging). */
  private async viaSampling(tool: string, r: Resolved, ctx: GateContext): Promise<true | readonly string[]> {
    try {
      const outcome = await sampleJustification(ctx.server, {
        promptText: this.promptText(r),
        schema: this.schema,
        check: this.validateJustification,
        signal: ctx.signal,
        ...(ctx.requestId !== undefined ? { relatedRequestId: ctx.requestId } : {}),
        ...(this.config.sampling?.maxTokens !== undefined ? { maxTokens: this.config.sampling.maxTokens } : {}),
        ...(this.config.sampling?.timeoutMs !== undefined ? { timeoutMs: this.config.sampling.timeoutMs } : {}),
      });
      if (!outcome.ok) {
        log('info', `reflection: sampled justification for ${tool} (${r.gate.domain}) invalid twice`, { problems: outcome.problems });
        return outcome.problems;
      }
      await this.store.put(r.gate.domain, r.hash, { tool, prompt: r.gate.prompt, promptArgs: r.promptArgs, justification: outcome.justification, source: 'sampling', createdAt: new Date().toISOString() });
      log('info', `reflection: justification for ${tool} (${r.gate.domain}) obtained by sampling`, { hash: r.hash });
      return true;
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      log('warn', `reflection: sampling for ${tool} (${r.gate.domain}) failed`, err);
      return [`sampling failed: ${errorMessage(err)}`];
    }
  }

  private hint(tool: string, r: Resolved, remaining: number): CallToolResult {
    if (this.issued.size >= MAX_ISSUED) this.issued.delete(this.issued.keys().next().value as string);
    this.issued.delete(r.hash);
    this.issued.set(r.hash, { domain: r.gate.domain, tool, prompt: r.gate.prompt, promptArgs: r.promptArgs });
    const hint: GateHint = { prompt: r.gate.prompt, prompt_args: r.promptArgs, hash: r.hash, domain: r.gate.domain, remaining };
    const text = [
      `Tool ${tool} needs a justification before it runs (reflection gate, domain "${r.gate.domain}"; ${remaining} gate${remaining === 1 ? '' : 's'} left including this one).`,
      `1. Get the prompt: prompts/get with name ${JSON.stringify(r.gate.prompt)} and arguments ${JSON.stringify(r.promptArgs)}.`,
      `2. Have the model answer it with only a JSON object matching this JSON Schema: ${JSON.stringify(this.schema)}`,
      `3. Call the tool ${PERSIST_TOOL_NAME} with {"hash": ${JSON.stringify(r.hash)}, "domain": ${JSON.stringify(r.gate.domain)}, "justification": <that JSON object>}.`,
      `Then call ${tool} again with the same arguments.`,
      `The prompt reads:\n${this.promptText(r)}`,
    ].join('\n');
    const result: CallToolResult = { isError: true, content: [{ type: 'text', text }, { type: 'text', text: JSON.stringify(hint) }] };
    if (!this.noStructured.has(tool)) result.structuredContent = hint;
    return result;
  }

  /** Implements the `persist_justification` tool (module comment); never throws. */
  async persist(input: unknown): Promise<CallToolResult> {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return failure(`Invalid ${PERSIST_TOOL_NAME} call:\n- arguments: must be object`);
    const { hash, domain, justification, ...rest } = input as Record<string, unknown>;
    const problems: string[] = Object.keys(rest).map((k) => `${k}: is not an accepted argument`);
    const issued = isGateKey(hash) ? this.issued.get(hash) : undefined;
    if (hash === undefined) problems.push('hash: is required');
    else if (!isGateKey(hash)) problems.push('hash: must be the 64 lower-case hex digits of the `hash` in the gate hint');
    else if (issued === undefined) problems.push('hash: was not issued by this server (call the gated tool first and use the `hash` from its hint)');
    if (domain === undefined) problems.push('domain: is required');
    else if (!this.store.hasDomain(domain)) problems.push(`domain: must be one of the declared reflection domains (${this.config.domains.map((d) => JSON.stringify(d)).join(', ')})`);
    else if (issued !== undefined && issued.domain !== domain) problems.push(`domain: must be ${JSON.stringify(issued.domain)}, the domain of the hint that issued this hash`);
    if (justification === undefined) problems.push('justification: is required');
    else {
      const size = jsonByteLength(justification);
      if (size > this.store.maxJustificationBytes) problems.push(`justification: is ${size} bytes of JSON; the limit is ${this.store.maxJustificationBytes} bytes`);
      else problems.push(...this.validateJustification(justification));
    }
    if (problems.length > 0 || issued === undefined) return failure(`Invalid ${PERSIST_TOOL_NAME} call:\n${problems.map((p) => `- ${p}`).join('\n')}`);
    try {
      await this.store.put(issued.domain, hash as string, { tool: issued.tool, prompt: issued.prompt, promptArgs: issued.promptArgs, justification, source: 'host', createdAt: new Date().toISOString() });
    } catch (err) {
      if (!(err instanceof StoreError)) log('error', `reflection: cannot store justification ${issued.domain}/${String(hash)}`, err);
      return failure(`Cannot store the justification: ${errorMessage(err)}`);
    }
    log('info', `reflection: justification for ${issued.tool} (${issued.domain}) stored by the host`, { hash });
    return { content: [{ type: 'text', text: `Justification stored (domain "${issued.domain}", hash ${String(hash)}). Now call ${issued.tool} again with the same arguments.` }] };
  }
}

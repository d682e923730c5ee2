/**
 * The reflection gate (manifest `reflection`): a gated tool runs only once a
 * justification exists for each of its gates.
 *
 * `check(tool, args, call)` walks the tool's gates in order. Each gate's key (reflection-key.ts)
 * is computed from its domain, its prompt template and its prompt arguments, which are
 * Handlebars templates over the tool's arguments (`{{petId}}`; `{{json body}}` renders a value as
 * canonical JSON, keys sorted). A stored justification that still validates satisfies the gate. On a miss:
 *  - mode `auto`/`sampling` and the client advertised `sampling` (legacy: its `initialize`
 *    capabilities; modern: the request's `_meta` envelope): the gate asks the client's model
 *    (reflection-sampling.ts builds the request, reflection-ask-model.ts sends it) — modern: an input-required result carrying an
 *    embedded `sampling/createMessage`, and the client retries with `inputResponses`; legacy: a
 *    real sampling request sent from the handler (see below); the gate judges the reply, persists a valid
 *    answer and goes on with the next gate. An invalid answer is asked again once, quoting its
 *    problems. What happened in earlier rounds (gates satisfied, the pending request, its deadline)
 *    lives in `call.state`, which the pipeline seals into `requestState`: a retry carries only the
 *    latest round's responses, and may reach another instance. Work before an input round is
 *    idempotent (store reads; the write of a valid sample).
 *  - otherwise (or after two invalid answers or a late answer, in `auto`): an `isError` hint
 *    `{prompt, prompt_args, hash, domain, remaining}` telling the host to render the prompt
 *    (`prompts/get`), have the model write the JSON, call `persist_justification`, and retry;
 *  - mode `sampling` never hints: without client sampling, or after two invalid answers, the
 *    call fails with an explanation (and `persist_justification` is not needed).
 *  - mode `elicit` (the config's or the gate's own `mode`) asks the user first, through a form
 *    made of the justification schema (reflection-elicit.ts): accept ⇒ stored with
 *    `source: "user"`; decline or cancel ⇒ the call is refused; a client without elicitation, a
 *    schema no form can hold, a failed request or two invalid answers ⇒ as in `auto`.
 * Legacy era (2025 clients): the gate sends `sampling/createMessage` itself, inside the handler
 * run (`askModelInCall`), each request bounded by `sampling.timeoutMs` (the SDK's 60 s default
 * otherwise); a refusal, an error or a timeout gives up like two invalid answers do (the hint in
 * `auto`). Going through the SDK's input-required shim instead would fail the whole call on a
 * refusal and bound the wait only by the shim's 10-minute round timeout.
 *
 * Modern era (2026-07-28): the request travels in an input-required result and the client answers
 * when it retries. Each request's deadline is recorded in `call.state`; a reply arriving after it
 * is refused like an invalid one. How long the client waits is the client's business.
 *
 * The gates' prompts, their arguments and keys are reflection-prompts.ts. The host flow — hints and `persist_justification` — is reflection-hints.ts. Hint hashes are signed (state.ts `signHint`: `<64 hex key>.<expiry>.<mac>`, bound to the
 * domain, valid `hintTtlMs`, default 24 h) with the state key, so `persist` accepts a hint issued
 * by any instance that shares the key, with no memory of it. The record stored by a host persist
 * holds the tool, prompt and prompt arguments when this process issued the hint (a best-effort
 * cache); for a hint from another instance they are unknown: `tool` is left out, `prompt` is the
 * domain's gate prompt when the domain has exactly one (else ""), and `promptArgs` is `{}`. Readers
 * only rely on `hash`, `domain` and `justification`. Share one `ReflectionGate` between all
 * sessions of a process.
 *
 * This file is copied verbatim into every generated project.
 */

import type { CallToolResult } from '@modelcontextprotocol/server';
import { CLIENT_CAPABILITIES_META_KEY } from '@modelcontextprotocol/server';
import { errorMessage, errorResult } from '../core/error-result.js';
import { isRecord } from '../core/json-shapes.js';
import { log } from '../core/log.js';
import type { ToolEntry } from '../core/surface.js';
import type { JsonSchema } from '../core/types.js';
import { redact } from '../policy/redact.js';
import type { PromptDefinition } from '../primitives/prompts.js';
import { parsePositiveInteger, settingsVariables } from '../process/settings.js';
import { SharedStateError } from '../shared/shared-state.js';
import { DEFAULT_HINT_TTL_MS } from '../shared/state.js';
import { clientCapabilities, covers } from '../tools/handler-input.js';
import type { ModelQuestion } from './reflection-ask-model.js';
import { askModelInCall, modelRound } from './reflection-ask-model.js';
import type { GateCall, GateDefinition, GateOutcome, ReflectionConfig, ReflectionGateConfig, ReflectionMode } from './reflection-config.js';
import { persistToolFor, retryDirectly } from './reflection-config.js';
import type { JustificationForm, UserStep } from './reflection-elicit.js';
import { askUserInCall, askUserRound, justificationForm, justificationMessage } from './reflection-elicit.js';
import { HostFlow } from './reflection-hints.js';
import type { Resolved } from './reflection-prompts.js';
import { GatePrompts } from './reflection-prompts.js';
import type { JustificationCheck } from './reflection-sampling.js';
import { DEFAULT_JUSTIFICATION_SCHEMA, justificationChecker } from './reflection-sampling.js';
import type { Justifications } from './reflection-store.js';
import { JustificationStore } from './reflection-store.js';

export type {
  GateCall,
  GateDefinition,
  GateHint,
  GateOutcome,
  ReflectionConfig,
  ReflectionGateConfig,
  ReflectionMode,
  ReflectionScope,
} from './reflection-config.js';
export { HINT_HASH_PROPERTY, PERSIST_TOOL, PERSIST_TOOL_NAME, persistToolFor, retryDirectly } from './reflection-config.js';
export { DEFAULT_JUSTIFICATION_SCHEMA } from './reflection-sampling.js';
export type { JustificationRecord } from './reflection-store.js';
export { JustificationStore } from './reflection-store.js';

/** Name of the environment variable overriding `hintTtlMs`. */
export function hintTtlVariable(envPrefix: string): string {
  return `${envPrefix}_HINT_TTL_MS`;
}

/**
 * `config` plus the state key, with `storeDir` taken from `<envPrefix>_REFLECTION_DIR` and
 * `hintTtlMs` from `<envPrefix>_HINT_TTL_MS` when those variables are set and not empty (relative
 * paths are relative to the working directory, as in the manifest). Throws when
 * `<envPrefix>_HINT_TTL_MS` is not a positive integer.
 */
export function reflectionConfigFromEnv(
  config: ReflectionConfig,
  envPrefix: string,
  stateKey: Buffer,
  env: NodeJS.ProcessEnv = process.env,
): ReflectionGateConfig {
  const out: { -readonly [K in keyof ReflectionGateConfig]: ReflectionGateConfig[K] } = { ...config, stateKey };
  const dir = env[settingsVariables(envPrefix).reflectionDir];
  if (dir !== undefined && dir !== '') out.storeDir = dir;
  const ttlName = hintTtlVariable(envPrefix);
  const ttl = env[ttlName];
  if (ttl !== undefined && ttl.trim() !== '') out.hintTtlMs = parsePositiveInteger(ttlName, ttl.trim(), 'milliseconds');
  return out;
}

/** What the gate keeps in `call.state.reflection` across the input rounds of one call. */
type RoundMemory = {
  /** Keys of the gates satisfied in earlier rounds of this call. */
  done: string[];
  /** The sampling request (or, `via: 'user'`, the form) in flight: the gate key, which attempt (1 or 2), its deadline (unix ms) if any. */
  pending?: { hash: string; attempt: number; deadline?: number; via?: 'user' };
};

/** Key of `call.state` the gate uses. */
const STATE_KEY = 'reflection';

function memoryOf(state: Record<string, unknown>): RoundMemory {
  const raw = state[STATE_KEY] as Partial<RoundMemory> | undefined;
  const done = Array.isArray(raw?.done) ? raw.done.filter((h): h is string => typeof h === 'string') : [];
  const p = raw?.pending;
  const memory: RoundMemory = { done };
  if (isRecord(p) && typeof p.hash === 'string' && (p.attempt === 1 || p.attempt === 2)) {
    memory.pending = {
      hash: p.hash,
      attempt: p.attempt,
      ...(typeof p.deadline === 'number' ? { deadline: p.deadline } : {}),
      ...(p.via === 'user' ? { via: 'user' as const } : {}),
    };
  }
  state[STATE_KEY] = memory;
  return memory;
}

/** Whether the client of `call` advertised `sampling` (legacy: at initialize; modern: in the request envelope). */
function clientSamples(call: GateCall): boolean {
  if (call.era === 'modern') {
    const caps = (call.ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
    if (isRecord(caps)) return caps.sampling !== undefined;
  }
  return call.server.getClientCapabilities()?.sampling !== undefined;
}

/** Enforces gates for tool calls and serves their prompts and `persist_justification`. */
export class ReflectionGate {
  readonly mode: ReflectionMode;
  readonly store: Justifications;
  /** The justification schema in force. */
  readonly schema: JsonSchema;
  /** Whether the host flow exists (`mode` is not `sampling`): list `persistTool` and route its calls to `persist`. */
  readonly exposesPersistTool: boolean;
  /** The `persist_justification` tool to list, with the declared domains and the justification schema. */
  readonly persistTool: ToolEntry;
  /** Lifetime of a hint, in ms. */
  readonly hintTtlMs: number;
  private readonly config: ReflectionGateConfig;
  private readonly key: Buffer;
  private readonly validateJustification: JustificationCheck;
  /** The hints and `persist_justification` (reflection-hints.ts). */
  private readonly host: HostFlow;
  private readonly domainPrompts = new Map<string, Set<string>>();
  /** The gates' prompts (reflection-prompts.ts). */
  private readonly gatePrompts: GatePrompts;
  private readonly noStructured: ReadonlySet<string>;
  /** The justification schema as an elicitation form (mode `elicit`); `undefined` when no form can hold it. */
  private readonly form: JustificationForm | undefined;

  /** Throws when a gate names an undeclared domain, a prompt is declared with two templates, or the state key is missing. */
  constructor(config: ReflectionGateConfig) {
    if (!Buffer.isBuffer(config.stateKey) || config.stateKey.length === 0)
      throw new Error('ReflectionGate: the config needs the state key (stateKey, from state.ts stateKey())');
    this.config = config;
    this.key = config.stateKey;
    this.mode = config.mode ?? 'auto';
    this.hintTtlMs = config.hintTtlMs ?? DEFAULT_HINT_TTL_MS;
    this.schema = config.justificationSchema ?? DEFAULT_JUSTIFICATION_SCHEMA;
    // the file store, unless the instances share one (main.ts: <PREFIX>_REDIS_URL)
    this.store = config.makeStore?.(config.domains, config.store ?? {}) ?? new JustificationStore(config.storeDir, config.domains, config.store);
    // temp files a crash left mid-write are removed once they are surely no other writer's
    void this.store.removeStaleTemps?.().catch((err: unknown) => log('warn', 'reflection: cannot remove stale temp files of the justification store', err));
    this.validateJustification = justificationChecker(this.schema);
    // the host flow exists when some gate may fall back to it
    this.exposesPersistTool = [this.mode, ...Object.values(config.gates).flatMap((gs) => gs.map((g) => g.mode ?? this.mode))].some((m) => m !== 'sampling');
    this.form = justificationForm(this.schema);
    this.noStructured = new Set(config.toolsWithOutputSchema ?? []);
    this.persistTool = persistToolFor(this.schema, config.domains);
    this.host = new HostFlow({
      key: this.key,
      hintTtlMs: this.hintTtlMs,
      store: this.store,
      domains: config.domains,
      schema: this.schema,
      validateJustification: this.validateJustification,
      noStructured: this.noStructured,
      // filled in below, as the gates are read
      domainPrompts: this.domainPrompts,
      redacted: (value) => this.redacted(value),
    });
    this.gatePrompts = new GatePrompts(config.gates, (domain) => this.store.hasDomain(domain), this.domainPrompts, config.scope);
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
    return this.gatePrompts.definitions();
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
      // a shared store that cannot answer fails the call closed, naming the cause (check)
      if (err instanceof SharedStateError) throw err;
      log('warn', `reflection: cannot read justification ${r.gate.domain}/${r.hash}`, err);
      return false;
    }
  }

  /**
   * Decides whether tool `tool` may run with `toolArgs` (see the module comment); called on every
   * input round of the call with the same `call.state`. Never throws for gate misses or store
   * problems; a cancelled call rethrows the abort.
   */
  async check(tool: string, toolArgs: unknown, call: GateCall): Promise<GateOutcome> {
    const gates = this.gatesOf(tool);
    if (gates.length === 0) return { ok: true };
    const args = isRecord(toolArgs) ? toolArgs : {};
    let resolved: Resolved[];
    try {
      resolved = gates.map((g) => this.gatePrompts.resolve(tool, g, args));
    } catch (err) {
      log('error', `reflection: cannot render the prompt arguments of ${tool}`, err);
      return { ok: false, result: errorResult(`Tool ${tool}: cannot compute its reflection gate: ${errorMessage(err)}`) };
    }
    try {
      return await this.checkResolved(tool, resolved, call);
    } catch (err) {
      if (!(err instanceof SharedStateError)) throw err;
      log('warn', `reflection: cannot check the gate of ${tool}: ${err.message}`);
      return {
        ok: false,
        result: errorResult(`Tool ${tool} needs a justification, which cannot be checked now: ${err.message}. The call was not run; retry shortly.`),
      };
    }
  }

  /** `check` once the gates' keys are known. */
  private async checkResolved(tool: string, resolved: readonly Resolved[], call: GateCall): Promise<GateOutcome> {
    const memory = memoryOf(call.state);
    const sampling = clientSamples(call);
    const met = async (r: Resolved): Promise<boolean> => memory.done.includes(r.hash) || (await this.satisfied(r));
    for (let i = 0; i < resolved.length; i++) {
      const r = resolved[i] as Resolved;
      if (await met(r)) continue;
      let problems: readonly string[] = [];
      const own = r.gate.mode ?? this.mode;
      if (own === 'elicit') {
        // the user answers a form; without elicitation (or a form for the schema), or when that gave nothing usable, as in auto
        const step = await this.userStep(tool, r, call, memory);
        if (step?.kind === 'done') {
          memory.done.push(r.hash);
          continue;
        }
        if (step?.kind === 'ask') return { ok: false, result: step.result };
        if (step?.kind === 'refused') {
          const what = step.action === 'decline' ? 'declined to give' : 'dismissed the request for';
          return {
            ok: false,
            result: errorResult(
              `Tool ${tool} was not run: the user ${what} a justification (reflection gate, domain "${r.gate.domain}"). Calling the tool again asks again.`,
            ),
          };
        }
      }
      const mode = own === 'elicit' ? 'auto' : own;
      if (mode !== 'host' && sampling) {
        const q = this.question(tool, r);
        const step = call.era === 'legacy' ? await askModelInCall(q, call) : await modelRound(q, call, memory);
        if (step.kind === 'done') {
          memory.done.push(r.hash);
          continue;
        }
        if (step.kind === 'ask') return { ok: false, result: step.result };
        problems = step.problems;
      }
      if (mode === 'sampling') {
        const why = sampling
          ? `no valid justification could be obtained from the client's model:\n${problems.map((p) => `- ${p}`).join('\n')}\nCalling the tool again asks again.`
          : 'the client does not support MCP sampling, which this server requires for its reflection gates (reflection mode "sampling").';
        return { ok: false, result: errorResult(`Tool ${tool} needs a justification (domain "${r.gate.domain}"), but ${why}`) };
      }
      let remaining = 1;
      for (const later of resolved.slice(i + 1)) if (!(await met(later))) remaining++;
      return { ok: false, result: this.host.hint(tool, r, remaining, call.retry ?? retryDirectly(tool), this.gatePrompts.text(r)) };
    }
    return { ok: true };
  }

  /**
   * Mode `elicit`: asks the user for `r`'s justification through a form (reflection-elicit.ts) —
   * a real request in the legacy era, an input round in 2026-07-28 — and stores a valid answer
   * with `source: "user"`. `undefined` when the user cannot be asked: the client did not declare
   * elicitation, no form can hold the schema, or an earlier round of this call fell back to sampling.
   */
  private async userStep(tool: string, r: Resolved, call: GateCall, memory: RoundMemory): Promise<UserStep | undefined> {
    if (this.form === undefined || !covers(clientCapabilities(call), 'elicitation')) return undefined;
    if (memory.pending !== undefined && memory.pending.hash === r.hash && memory.pending.via !== 'user') return undefined;
    const message = (problems?: readonly string[]): string => justificationMessage(tool, r.gate.domain, this.gatePrompts.text(r), problems);
    const step =
      call.era === 'legacy'
        ? await askUserInCall(call, this.form, message, this.validateJustification)
        : askUserRound(call, memory, r.hash, this.form, message, this.validateJustification);
    if (step.kind === 'done') await this.keep(tool, r, step.justification, 'user');
    if (step.kind === 'failed') log('info', `reflection: no justification from the user for ${tool} (${r.gate.domain})`, { problems: step.problems });
    return step;
  }

  /** Gate `r` of `tool` as a question to the client's model (reflection-ask-model.ts). */
  private question(tool: string, r: Resolved): ModelQuestion {
    return {
      tool,
      domain: r.gate.domain,
      hash: r.hash,
      promptText: this.gatePrompts.text(r),
      schema: this.schema,
      validate: this.validateJustification,
      ...(this.config.sampling !== undefined ? { sampling: this.config.sampling } : {}),
      keep: (justification) => this.keep(tool, r, justification),
    };
  }

  /** Stores a valid sampled justification; a store failure is logged, and the answer still counts for this call. */
  private async keep(tool: string, r: Resolved, justification: Record<string, unknown>, source: 'sampling' | 'user' = 'sampling'): Promise<void> {
    try {
      await this.store.put(r.gate.domain, r.hash, {
        tool,
        prompt: r.gate.prompt,
        promptArgs: this.redacted(r.promptArgs) as Record<string, string>,
        justification: this.redacted(justification),
        source,
        createdAt: new Date().toISOString(),
      });
      log('info', `reflection: justification for ${tool} (${r.gate.domain}) obtained ${source === 'user' ? 'from the user' : 'by sampling'}`, { hash: r.hash });
    } catch (err) {
      // the call goes on (the answer is valid and remembered for this call); the next call asks again
      log('warn', `reflection: cannot store the sampled justification ${r.gate.domain}/${r.hash}`, err);
    }
  }

  /** `value` with the configured fields and every secret `[redacted]`, as the audit trail records it. */
  private redacted(value: unknown): unknown {
    const r = this.config.redact;
    return r === undefined ? value : redact(value, r.fields, r.secrets());
  }

  /** Implements the `persist_justification` tool (reflection-hints.ts); never throws. */
  persist(input: unknown): Promise<CallToolResult> {
    return this.host.persist(input);
  }
}

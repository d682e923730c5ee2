/**
 * The reflection gate's host flow (reflection.ts): the hint a call gets when no justification
 * exists and the client cannot be asked — instructions plus a signed hash (state.ts `signHint`:
 * `<64 hex key>.<expiry>.<mac>`, bound to the domain, valid `hintTtlMs`) — and the
 * `persist_justification` tool that checks such a hash and stores the host's justification. The
 * signature lets any instance sharing the state key accept a hint another issued, with no memory of
 * it; the tool, prompt and prompt arguments of a hint are remembered best-effort (this process's
 * cache, or the shared store's `rememberHint`) for a richer record.
 *
 * This file is copied verbatim into every generated project.
 */

import type { CallToolResult } from '@modelcontextprotocol/server';
import { errorMessage, errorResult } from '../core/error-result.js';
import { isRecord } from '../core/json-shapes.js';
import { log } from '../core/log.js';
import type { JsonSchema } from '../core/types.js';
import { SharedStateError } from '../shared/shared-state.js';
import { signHint, verifyHint } from '../shared/state.js';
import type { GateHint } from './reflection-config.js';
import { PERSIST_TOOL_NAME } from './reflection-config.js';
import type { JustificationCheck } from './reflection-sampling.js';
import type { Justifications } from './reflection-store.js';
import { jsonByteLength, StoreError } from './reflection-store.js';

/** Most hint metadata entries remembered (a best-effort cache for richer records; the oldest go first). */
const MAX_ISSUED = 10_000;

type Issued = { tool: string; prompt: string; promptArgs: Record<string, string> };

/** A gate resolved for a call: its domain and prompt, the prompt arguments and the gate key. */
export type HintedGate = {
  readonly gate: { readonly domain: string; readonly prompt: string };
  readonly promptArgs: Record<string, string>;
  readonly hash: string;
};

/** What the host flow needs of the gate. */
export type HostFlowOptions = {
  /** The state key hints are signed with. */
  readonly key: Buffer;
  readonly hintTtlMs: number;
  readonly store: Justifications;
  readonly domains: readonly string[];
  /** The justification schema in force (named in the instructions). */
  readonly schema: JsonSchema;
  readonly validateJustification: JustificationCheck;
  /** Tools that publish an output schema: their hint is not structured content. */
  readonly noStructured: ReadonlySet<string>;
  /** The gate prompts of each domain (a persist of another instance's hint names the domain's only prompt). */
  readonly domainPrompts: ReadonlyMap<string, ReadonlySet<string>>;
  /** A value as the audit trail records it (configured fields and secrets redacted). */
  readonly redacted: (value: unknown) => unknown;
};

/** The hints a gate issues and the `persist_justification` tool that takes them back. */
export class HostFlow {
  private readonly issued = new Map<string, Issued>();

  constructor(private readonly o: HostFlowOptions) {}

  /**
   * The host flow's instructions for gate `r` of `tool` (`remaining` gates left, this one included),
   * ending with `retry` (how the caller runs the call again); `promptText` is the gate's prompt rendered.
   */
  hint(tool: string, r: HintedGate, remaining: number, retry: string, promptText: string): CallToolResult {
    const signed = signHint(this.o.key, r.hash, r.gate.domain, this.o.hintTtlMs);
    const cacheKey = `${r.gate.domain}/${r.hash}`;
    if (this.issued.size >= MAX_ISSUED) this.issued.delete(this.issued.keys().next().value as string);
    this.issued.delete(cacheKey);
    this.issued.set(cacheKey, { tool, prompt: r.gate.prompt, promptArgs: r.promptArgs });
    // for a persist through another instance (a shared store); a failure only loses that
    void this.o.store
      .rememberHint?.(
        r.gate.domain,
        r.hash,
        { tool, prompt: r.gate.prompt, promptArgs: this.o.redacted(r.promptArgs) as Record<string, string> },
        this.o.hintTtlMs,
      )
      .catch(() => undefined);
    const hint: GateHint = { prompt: r.gate.prompt, prompt_args: r.promptArgs, hash: signed, domain: r.gate.domain, remaining };
    const text = [
      `Tool ${tool} needs a justification before it runs (reflection gate, domain "${r.gate.domain}"; ${remaining} gate${remaining === 1 ? '' : 's'} left including this one).`,
      `1. Get the prompt: prompts/get with name ${JSON.stringify(r.gate.prompt)} and arguments ${JSON.stringify(r.promptArgs)}.`,
      `2. Have the model answer it with only a JSON object matching this JSON Schema: ${JSON.stringify(this.o.schema)}`,
      `3. Call the tool ${PERSIST_TOOL_NAME} with {"hash": ${JSON.stringify(signed)}, "domain": ${JSON.stringify(r.gate.domain)}, "justification": <that JSON object>}.`,
      retry,
      `The prompt reads:\n${promptText}`,
    ].join('\n');
    const result: CallToolResult = {
      isError: true,
      content: [
        { type: 'text', text },
        { type: 'text', text: JSON.stringify(hint) },
      ],
    };
    if (!this.o.noStructured.has(tool)) result.structuredContent = hint;
    return result;
  }

  /** The declared domain whose signature `token` carries, if any (for the domain-mismatch message). */
  private domainOf(token: string): string | undefined {
    return this.o.domains.find((d) => {
      const v = verifyHint(this.o.key, token, d);
      return v.ok || v.reason === 'expired';
    });
  }

  /** Implements the `persist_justification` tool (module comment of reflection.ts); never throws. */
  async persist(input: unknown): Promise<CallToolResult> {
    if (!isRecord(input)) return errorResult(`Invalid ${PERSIST_TOOL_NAME} call:\n- arguments: must be object`);
    const { hash, domain, justification, ...rest } = input;
    const problems: string[] = Object.keys(rest).map((k) => `${k}: is not an accepted argument`);
    let hex: string | undefined;
    const domainOk = this.o.store.hasDomain(domain);
    if (hash === undefined) problems.push('hash: is required');
    else {
      // the first half of the signature does not depend on the domain: malformed / another key are told apart first
      const v = verifyHint(this.o.key, hash, domainOk ? domain : '');
      if (!v.ok && v.reason === 'malformed')
        problems.push('hash: must be the `hash` of a gate hint exactly as given (64 lower-case hex digits, a dot, an expiry, a dot and a signature)');
      else if (!v.ok && v.reason === 'bad-signature') {
        problems.push(
          'hash: was not issued by this server nor by one sharing its state key (signed under another key, or altered); call the gated tool again and use the `hash` from its hint',
        );
      } else if (domainOk) {
        if (v.ok) hex = v.hex;
        else if (v.reason === 'domain-mismatch') {
          const issuedFor = this.domainOf(hash as string);
          problems.push(`domain: must be ${issuedFor !== undefined ? JSON.stringify(issuedFor) : 'the domain'}, the domain of the hint that issued this hash`);
        } else if (v.reason === 'expired') {
          problems.push(
            `hash: this hint expired${v.expiresAt !== undefined ? ` at ${new Date(v.expiresAt).toISOString()}` : ''}; call the gated tool again with the same arguments for a fresh hint`,
          );
        }
      }
    }
    if (domain === undefined) problems.push('domain: is required');
    else if (!domainOk) problems.push(`domain: must be one of the declared reflection domains (${this.o.domains.map((d) => JSON.stringify(d)).join(', ')})`);
    if (justification === undefined) problems.push('justification: is required');
    else {
      const size = jsonByteLength(justification);
      if (size > this.o.store.maxJustificationBytes)
        problems.push(`justification: is ${size} bytes of JSON; the limit is ${this.o.store.maxJustificationBytes} bytes`);
      else problems.push(...this.o.validateJustification(justification));
    }
    if (problems.length > 0 || hex === undefined || !domainOk)
      return errorResult(`Invalid ${PERSIST_TOOL_NAME} call:\n${problems.map((p) => `- ${p}`).join('\n')}`);
    const known = this.issued.get(`${domain}/${hex}`) ?? (await this.o.store.recallHint?.(domain, hex).catch(() => undefined));
    const prompts = this.o.domainPrompts.get(domain);
    const onlyPrompt = prompts !== undefined && prompts.size === 1 ? ([...prompts][0] as string) : '';
    const meta = known ?? { prompt: onlyPrompt, promptArgs: {} };
    try {
      await this.o.store.put(domain, hex, {
        ...meta,
        promptArgs: this.o.redacted(meta.promptArgs) as Record<string, string>,
        justification: this.o.redacted(justification),
        source: 'host',
        createdAt: new Date().toISOString(),
      });
    } catch (err) {
      if (err instanceof StoreError) return errorResult(`Cannot store the justification: ${errorMessage(err)}`);
      if (err instanceof SharedStateError) {
        log('warn', `reflection: cannot store justification ${domain}/${hex}: ${err.message}`);
        return errorResult(`Cannot store the justification: ${err.message}; it was not stored, call ${PERSIST_TOOL_NAME} again shortly`);
      }
      // the server's paths stay in its log: the client learns only what kind of failure it was
      log('error', `reflection: cannot store justification ${domain}/${hex}`, err);
      const code = (err as { code?: unknown } | null)?.code;
      return errorResult(
        `Cannot store the justification: the server could not write it${typeof code === 'string' && /^E[A-Z]+$/.test(code) ? ` (${code})` : ''}; try again later`,
      );
    }
    const toolName = known?.tool;
    log('info', `reflection: justification for ${toolName ?? 'a gated tool'} (${domain}) stored by the host`, { hash: hex });
    return {
      content: [
        {
          type: 'text',
          text: `Justification stored (domain "${domain}", hash ${hex}). Now call ${toolName ?? 'the gated tool'} again with the same arguments.`,
        },
      ],
    };
  }
}

/**
 * What a handler asks of the client while it runs: `ctx.elicit` (a form the user fills in),
 * `ctx.elicitUrl` (an out-of-band page the user visits), `ctx.sample` (a completion from the
 * client's model) and `ctx.roots` (the client's roots) — one API over both protocol eras.
 *
 * Legacy era (≤ 2025-11-25): each is a real server→client request (`elicitation/create`,
 * `sampling/createMessage`, `roots/list`) sent inside the handler run, related to the tool call's
 * request (so it travels on the call's own response stream over HTTP), cancelled with the call.
 *
 * 2026-07-28: there is no server→client request. A question the client has not answered yet
 * ends the run with an input-required result carrying it (`inputRequests`, keyed by the
 * question's `key`); the client asks its user or model, then retries the call with the answer
 * (`inputResponses`) and the sealed `requestState`, and the handler runs again from the top. This
 * time the question finds its answer and returns it. Answers of earlier rounds are kept in the
 * call's round state (rounds.ts: signed, bound to the call), so a later round — possibly on
 * another instance — still has them. So in this era a handler must be written to run again:
 * what it does before its last question runs once per round — except its `ctx.api` calls, whose
 * outcomes are replayed from the round state instead of being made again (api-replay.ts).
 * Questions asked together (`Promise.all([ctx.elicit(…), ctx.sample(…)])`) go out in one round.
 * The pipeline's own steps (audit, limits, the reflection gate) run once per logical call.
 *
 * Keys: a question's `key` names it in `inputRequests`/`inputResponses`; by default
 * `elicit-1`, `elicit-2`, `sample-1`, `roots-1`… in the order the run asks them (a handler that
 * asks different questions in different runs should name them).
 *
 * Capabilities: a question the client did not declare the capability for (legacy: at
 * `initialize`; 2026-07-28: the request's `_meta` client capabilities) throws
 * `MissingRequiredClientCapabilityError` (-32021, `data.requiredCapabilities`), which fails the
 * call with that JSON-RPC error (HTTP 400 on a 2026-07-28 request) unless the handler catches it;
 * `ctx.canAsk(kind)` tells beforehand. An answer that does not fit (an accepted form whose
 * content does not match its schema; a sampling request the client refused) throws
 * `InputRequestFailed`.
 *
 * This file is copied verbatim into every generated project.
 */
import { randomUUID } from 'node:crypto';
import type {
  ClientCapabilities,
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  InputRequest,
  InputRequiredResult,
  Root,
  Server,
  ServerContext,
} from '@modelcontextprotocol/server';
import { CLIENT_CAPABILITIES_META_KEY, inputRequired, inputResponse, MissingRequiredClientCapabilityError } from '@modelcontextprotocol/server';
import { isRecord } from '../core/json-shapes.js';
import type { ElicitForm } from '../validation/elicit-check.js';
import { checkElicitAnswer } from '../validation/elicit-check.js';

export type { ElicitForm } from '../validation/elicit-check.js';

/** What the user did with a form: accepted it (with its content), declined, or dismissed it. */
export type ElicitAnswer<T = Record<string, unknown>> =
  | { readonly action: 'accept'; readonly content: T }
  | { readonly action: 'decline' }
  | { readonly action: 'cancel' };
/** What the user did with an out-of-band (URL) request. */
export type ElicitUrlAnswer = { readonly action: 'accept' | 'decline' | 'cancel' };
/** The model's answer to `ctx.sample`. */
export type SampleAnswer = CreateMessageResult | CreateMessageResultWithTools;
/** A kind of question, for `ctx.canAsk`. */
export type InputKind = 'elicitation' | 'elicitation.url' | 'sampling' | 'roots';
/** Options of one question: its key (see the module comment), and (legacy era) how long to wait for the answer: default 10 minutes for a user's (a form, a URL), the SDK's 60 s for the model's and the roots. */
export type InputOptions = { readonly key?: string; readonly timeoutMs?: number };

/** The questions a handler may ask (`ctx.elicit`, `ctx.elicitUrl`, `ctx.sample`, `ctx.roots`, `ctx.canAsk`). */
export type HandlerInput = {
  /** Asks the user to fill in a form (`schema`: a flat object of strings, numbers, booleans and enums); the accepted content is checked against it. */
  elicit<T = Record<string, unknown>>(message: string, schema: ElicitForm, options?: InputOptions): Promise<ElicitAnswer<T>>;
  /** Asks the user to visit `url` (an out-of-band flow: a sign-in, a payment); resolves with what they did about it. */
  elicitUrl(message: string, url: string, options?: InputOptions): Promise<ElicitUrlAnswer>;
  /** Asks the client's model for a completion (`sampling/createMessage` params). */
  sample(request: CreateMessageRequestParams, options?: InputOptions): Promise<SampleAnswer>;
  /** The client's roots (`roots/list`). */
  roots(options?: InputOptions): Promise<Root[]>;
  /** Whether the client declared what a question of `kind` needs (else asking throws -32021). */
  canAsk(kind: InputKind): boolean;
};

/** The client refused or failed a question, or answered it with something that does not fit; the message says which. */
export class InputRequestFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputRequestFailed';
  }
}

/** Thrown by a question not answered yet (2026-07-28): the run ends, and its questions go to the client. Not an error a handler should catch. */
export class InputPending extends Error {
  constructor(readonly key: string) {
    super(`input ${key} is asked of the client: the call continues when it answers (this is not an error; do not catch it)`);
    this.name = 'InputPending';
  }
}

/** What a tool call offers the questions of its handler. */
export type InputCall = {
  readonly era: 'legacy' | 'modern';
  readonly server: Server;
  readonly ctx: ServerContext;
  /** The call's round state (sealed into requestState between rounds); answers are kept under `input`. */
  readonly state: Record<string, unknown>;
  readonly signal: AbortSignal;
};

/** The questions of one handler run, and (2026-07-28) those it left unanswered. */
export type InputSession = {
  readonly input: HandlerInput;
  /** The input-required result for the questions this run asked and the client has not answered yet; `undefined` when none. */
  pending(): InputRequiredResult | undefined;
};

/** The capabilities the client of `call` declared: the request's envelope (2026-07-28), else its `initialize`. */
export function clientCapabilities(call: Pick<InputCall, 'era' | 'server' | 'ctx'>): ClientCapabilities | undefined {
  if (call.era === 'modern') {
    const caps = (call.ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
    if (typeof caps === 'object' && caps !== null) return caps as ClientCapabilities;
  }
  return call.server.getClientCapabilities();
}

/** Whether `caps` covers a question of `kind` (a form needs `elicitation.form` or a bare `elicitation: {}`). */
export function covers(caps: ClientCapabilities | undefined, kind: InputKind): boolean {
  if (kind === 'sampling') return caps?.sampling !== undefined;
  if (kind === 'roots') return caps?.roots !== undefined;
  const elicitation = caps?.elicitation as { form?: unknown; url?: unknown } | undefined;
  if (elicitation === undefined) return false;
  if (kind === 'elicitation.url') return elicitation.url !== undefined;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

const REQUIRED: Readonly<Record<InputKind, ClientCapabilities>> = {
  elicitation: { elicitation: {} },
  'elicitation.url': { elicitation: { url: {} } },
  sampling: { sampling: {} },
  roots: { roots: {} },
};

function missing(kind: InputKind): MissingRequiredClientCapabilityError {
  const what = kind === 'elicitation' ? 'elicitation (forms)' : kind === 'elicitation.url' ? 'URL elicitation' : kind === 'sampling' ? 'sampling' : 'roots';
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: REQUIRED[kind] },
    `This tool asks the client for ${what}, which the client did not declare in its capabilities`,
  );
}

/** An accepted answer's content checked against its form (throws `InputRequestFailed` naming each problem). */
function checkedContent(form: ElicitForm, content: unknown): Record<string, unknown> {
  const problems = checkElicitAnswer(form, content ?? {});
  if (problems.length > 0) throw new InputRequestFailed(`The answer to the form does not match it:\n${problems.map((p) => `- ${p}`).join('\n')}`);
  return (content ?? {}) as Record<string, unknown>;
}

/** How long a legacy client's user may take over a form or a URL before the question fails (a person, not a model). */
export const USER_ANSWER_TIMEOUT_MS = 10 * 60 * 1000;

/** Key of the call's round state the answers are kept under. */
const STATE_KEY = 'input';

/** The questions of one run of a handler during `call` (see the module comment). */
export function inputSession(call: InputCall): InputSession {
  const counters = new Map<string, number>();
  const keyOf = (prefix: string, options?: InputOptions): string => {
    if (options?.key !== undefined) return options.key;
    const n = (counters.get(prefix) ?? 0) + 1;
    counters.set(prefix, n);
    return `${prefix}-${n}`;
  };
  const caps = clientCapabilities(call);
  const need = (kind: InputKind): void => {
    if (!covers(caps, kind)) throw missing(kind);
  };
  const asked: Record<string, InputRequest> = {};
  const kept = call.state[STATE_KEY];
  const answers: Record<string, unknown> = isRecord(kept) ? { ...kept } : {};

  /** 2026-07-28: the answer to `key` of the kind expected (this round's, or kept from an earlier one), or the question goes out. */
  const modern = <T>(
    key: string,
    expected: 'elicit' | 'sampling' | 'roots',
    request: () => InputRequest,
    read: (view: ReturnType<typeof inputResponse>) => T,
  ): Promise<T> => {
    for (const source of [answers, call.ctx.mcpReq.inputResponses as Record<string, unknown> | undefined]) {
      if (source === undefined || !Object.hasOwn(source, key)) continue;
      const view = inputResponse(source, key);
      if (view.kind !== expected) continue;
      try {
        const value = read(view);
        answers[key] = source[key];
        call.state[STATE_KEY] = answers;
        return Promise.resolve(value);
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    asked[key] = request();
    const pending = Promise.reject(new InputPending(key));
    // asked beside others and not awaited yet: not an unhandled rejection
    pending.catch(() => undefined);
    return pending;
  };

  /** Legacy era: a real request related to the call's, with its signal and timeout. */
  const legacyOptions = (options?: InputOptions, user = false) => {
    const timeout = options?.timeoutMs ?? (user ? USER_ANSWER_TIMEOUT_MS : undefined);
    return { relatedRequestId: call.ctx.mcpReq.id, signal: call.signal, ...(timeout !== undefined ? { timeout } : {}) };
  };
  const refused = (what: string, err: unknown): never => {
    if (call.signal.aborted) throw call.signal.reason ?? err;
    throw new InputRequestFailed(`The client refused or failed the ${what} request: ${err instanceof Error ? err.message : String(err)}`);
  };

  const input: HandlerInput = {
    canAsk: (kind) => covers(caps, kind),
    async elicit<T = Record<string, unknown>>(message: string, schema: ElicitForm, options?: InputOptions): Promise<ElicitAnswer<T>> {
      need('elicitation');
      const key = keyOf('elicit', options);
      const form = { type: 'object' as const, ...schema } as ElicitForm;
      const params = { message, requestedSchema: form as never };
      if (call.era === 'modern') {
        return modern(
          key,
          'elicit',
          () => inputRequired.elicit(params),
          (view) => {
            const v = view as { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };
            return (v.action === 'accept' ? { action: 'accept', content: checkedContent(form, v.content) as T } : { action: v.action }) as ElicitAnswer<T>;
          },
        );
      }
      let result: { action: 'accept' | 'decline' | 'cancel'; content?: unknown };
      try {
        result = (await call.server.elicitInput(params, legacyOptions(options, true))) as typeof result;
      } catch (err) {
        return refused('elicitation', err);
      }
      return (
        result.action === 'accept' ? { action: 'accept', content: checkedContent(form, result.content) as T } : { action: result.action }
      ) as ElicitAnswer<T>;
    },
    async elicitUrl(message, url, options) {
      need('elicitation.url');
      const key = keyOf('elicit', options);
      if (call.era === 'modern')
        return modern(
          key,
          'elicit',
          () => inputRequired.elicitUrl({ message, url }),
          (view) => ({ action: (view as { action: ElicitUrlAnswer['action'] }).action }),
        );
      try {
        const result = await call.server.elicitInput({ mode: 'url', message, url, elicitationId: randomUUID() }, legacyOptions(options, true));
        return { action: result.action };
      } catch (err) {
        return refused('URL elicitation', err);
      }
    },
    async sample(request, options) {
      need('sampling');
      const key = keyOf('sample', options);
      if (call.era === 'modern')
        return modern(
          key,
          'sampling',
          () => inputRequired.createMessage(request),
          (view) => (view as { result: SampleAnswer }).result,
        );
      try {
        return await call.server.createMessage(request, legacyOptions(options));
      } catch (err) {
        return refused('sampling', err);
      }
    },
    async roots(options) {
      need('roots');
      const key = keyOf('roots', options);
      if (call.era === 'modern')
        return modern(
          key,
          'roots',
          () => inputRequired.listRoots(),
          (view) => (view as { roots: Root[] }).roots,
        );
      try {
        return (await call.server.listRoots(undefined, legacyOptions(options))).roots;
      } catch (err) {
        return refused('roots', err);
      }
    },
  };
  return {
    input,
    pending: () => (Object.keys(asked).length === 0 ? undefined : inputRequired({ inputRequests: { ...asked } })),
  };
}

/**
 * The reflection gate's human mode (`mode: elicit`): the justification is asked of the user, as a
 * form (`elicitation/create`), instead of the model. The form is the justification schema made
 * into what an elicitation form may hold — a flat object of strings, numbers, booleans and
 * enums: a property that is a list of free strings (the default schema's `alternatives`) becomes
 * one text field whose entries are separated by `;` or new lines, and is split back into a list
 * before the justification is checked against its schema. A schema with properties no form can
 * hold (objects, lists of numbers…) has no form: the gate then behaves as in `auto`.
 *
 * This file is copied verbatim into every generated project.
 */

import type { InputRequiredResult } from '@modelcontextprotocol/server';
import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { isRecord } from '../core/json-shapes.js';
import type { JsonSchema } from '../core/types.js';
import type { ElicitForm } from '../validation/elicit-check.js';
import type { GateCall } from './reflection-config.js';

/** A justification schema as a form, and the way back from the form's answer to a justification. */
export type JustificationForm = { readonly form: ElicitForm; toJustification(content: Record<string, unknown>): Record<string, unknown> };

/** Keywords a primitive field of a form keeps from the schema. */
const KEPT = ['type', 'title', 'description', 'minLength', 'maxLength', 'format', 'minimum', 'maximum', 'enum', 'oneOf', 'default'] as const;
const FORMATS = new Set(['email', 'uri', 'date', 'date-time']);

/** Splits a text field back into a list: `;` or new lines, entries trimmed, empty ones dropped. */
export function splitList(text: string): string[] {
  return text
    .split(/\r?\n|;/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** The form of `schema`, or `undefined` when some property cannot be a form field. */
export function justificationForm(schema: JsonSchema): JustificationForm | undefined {
  const properties = (schema as { properties?: unknown }).properties;
  if (!isRecord(properties)) return undefined;
  const fields: Record<string, Record<string, unknown>> = {};
  const lists = new Set<string>();
  for (const [name, raw] of Object.entries(properties)) {
    if (!isRecord(raw)) return undefined;
    const type = raw.type;
    if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') {
      const field: Record<string, unknown> = {};
      for (const k of KEPT) if (raw[k] !== undefined && !(k === 'format' && !FORMATS.has(String(raw[k])))) field[k] = raw[k];
      fields[name] = field;
    } else if (type === 'array' && isRecord(raw.items) && raw.items.type === 'string') {
      if (Array.isArray(raw.items.enum) || Array.isArray(raw.items.anyOf)) {
        fields[name] = {
          type: 'array',
          items: raw.items,
          ...(raw.title !== undefined ? { title: raw.title } : {}),
          ...(raw.description !== undefined ? { description: raw.description } : {}),
        };
      } else {
        lists.add(name);
        const about = typeof raw.description === 'string' ? `${raw.description} ` : '';
        fields[name] = { type: 'string', ...(raw.title !== undefined ? { title: raw.title } : {}), description: `${about}(separate entries with ";")` };
      }
    } else return undefined;
  }
  const required = Array.isArray((schema as { required?: unknown }).required)
    ? ((schema as { required: unknown[] }).required.filter((r) => typeof r === 'string' && !lists.has(r)) as string[])
    : [];
  const form: ElicitForm = { type: 'object', properties: fields, ...(required.length > 0 ? { required } : {}) };
  return {
    form,
    toJustification: (content) => {
      const out: Record<string, unknown> = { ...content };
      for (const name of lists) out[name] = typeof content[name] === 'string' ? splitList(content[name]) : [];
      return out;
    },
  };
}

/** The message of the form: who asks, for what, and the gate's prompt. */
export function justificationMessage(tool: string, domain: string, promptText: string, problems?: readonly string[]): string {
  const again = problems !== undefined && problems.length > 0 ? `\n\nThe previous answer was not accepted:\n${problems.map((p) => `- ${p}`).join('\n')}` : '';
  return `Before ${tool} runs, it needs your justification (reflection gate, domain "${domain}").\n\n${promptText}${again}`;
}

/** What asking the user gave: a valid justification, a round to ask (2026-07-28), a refusal (decline or cancel), or nothing usable (then the gate goes on as in `auto`). */
export type UserStep =
  | { readonly kind: 'done'; readonly justification: Record<string, unknown> }
  | { readonly kind: 'ask'; readonly result: InputRequiredResult }
  | { readonly kind: 'refused'; readonly action: 'decline' | 'cancel' }
  | { readonly kind: 'failed'; readonly problems: readonly string[] };

/** The gate's round memory as this module sees it: the request in flight (`via: 'user'` when it is a form). */
export type UserMemory = { pending?: { hash: string; attempt: number; deadline?: number; via?: 'user' } };

/** How long a user may take over the form in the legacy era (the request is open that long). */
export const USER_TIMEOUT_MS = 10 * 60 * 1000;

/** The input key of a form (unique per gate and attempt within the call, apart from the sampling requests'). */
export const userInputKey = (hash: string, attempt: number): string => `reflection-${hash.slice(0, 16)}-user-${attempt}`;

/** An answer's justification and its problems (`[]`: valid). */
function judge(form: JustificationForm, content: unknown, check: (j: unknown) => string[]): { justification: Record<string, unknown>; problems: string[] } {
  const justification = form.toJustification(isRecord(content) ? content : {});
  return { justification, problems: check(justification) };
}

/**
 * Legacy era: asks the user with real `elicitation/create` requests inside the call (attempt 1,
 * then 2 quoting the problems of an invalid answer). A refused or failed request gives up.
 */
export async function askUserInCall(
  call: Pick<GateCall, 'server' | 'ctx' | 'signal'>,
  form: JustificationForm,
  message: (problems?: readonly string[]) => string,
  check: (j: unknown) => string[],
): Promise<Exclude<UserStep, { kind: 'ask' }>> {
  let problems: readonly string[] | undefined;
  for (const attempt of [1, 2] as const) {
    if (call.signal.aborted) throw call.signal.reason ?? new Error('The tool call was cancelled');
    let answer: { action: 'accept' | 'decline' | 'cancel'; content?: unknown };
    try {
      answer = await call.server.elicitInput(
        { message: message(problems), requestedSchema: form.form as never },
        { relatedRequestId: call.ctx.mcpReq.id, signal: call.signal, timeout: USER_TIMEOUT_MS },
      );
    } catch (err) {
      if (call.signal.aborted) throw call.signal.reason ?? err;
      return { kind: 'failed', problems: [`elicitation: the client refused or failed the request: ${err instanceof Error ? err.message : String(err)}`] };
    }
    if (answer.action !== 'accept') return { kind: 'refused', action: answer.action };
    const verdict = judge(form, answer.content, check);
    if (verdict.problems.length === 0) return { kind: 'done', justification: verdict.justification };
    if (attempt === 2) return { kind: 'failed', problems: verdict.problems };
    problems = verdict.problems;
  }
  return { kind: 'failed', problems: [] }; // not reached
}

/** 2026-07-28: one round of asking the user for gate `hash`: judge the answer to the pending form, or ask. */
export function askUserRound(
  call: Pick<GateCall, 'ctx'>,
  memory: UserMemory,
  hash: string,
  form: JustificationForm,
  message: (problems?: readonly string[]) => string,
  check: (j: unknown) => string[],
): UserStep {
  const ask = (attempt: 1 | 2, problems?: readonly string[]): UserStep => {
    memory.pending = { hash, attempt, via: 'user' };
    return {
      kind: 'ask',
      result: inputRequired({
        inputRequests: { [userInputKey(hash, attempt)]: inputRequired.elicit({ message: message(problems), requestedSchema: form.form as never }) },
      }),
    };
  };
  const pending = memory.pending;
  if (pending === undefined || pending.hash !== hash || pending.via !== 'user') return ask(1);
  delete memory.pending;
  const view = inputResponse(call.ctx.mcpReq.inputResponses, userInputKey(hash, pending.attempt));
  if (view.kind !== 'elicit') return { kind: 'failed', problems: ["elicitation: the client retried the call without the user's answer"] };
  if (view.action !== 'accept') return { kind: 'refused', action: view.action };
  const verdict = judge(form, view.content, check);
  if (verdict.problems.length === 0) return { kind: 'done', justification: verdict.justification };
  return pending.attempt === 1 ? ask(2, verdict.problems) : { kind: 'failed', problems: verdict.problems };
}

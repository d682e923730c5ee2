// Handlers of the conformance fixtures that ask the client for input while they run (manifest
// `extraTools`): `ctx.elicit`, `ctx.sample` and `ctx.roots` (runtime/tools/handler-input.ts). Yours to
// edit: mcpgen never overwrites it.
//
// Legacy clients (0.1.16: tools-call-sampling, tools-call-elicitation, elicitation-sep1034-defaults,
// elicitation-sep1330-enums) get real `sampling/createMessage` / `elicitation/create` requests;
// 2026-07-28 clients (0.2.0-alpha.12: input-required-result-*, server-stateless) get an
// InputRequiredResult, answer it, and call again: the handler runs again from the top, and each
// question finds its answer under its key (the keys are the ones the suite expects).

import type { ExtraToolContext } from '../runtime/handlers.js';

type Text = { content: { type: 'text'; text: string }[] };
const text = (t: string): Text => ({ content: [{ type: 'text', text: t }] });
const NAME_FORM = { type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] };

/** The text of a sampling answer (one block or several). */
function sampled(result: { content: unknown }): string {
  const blocks = (Array.isArray(result.content) ? result.content : [result.content]) as { type?: string; text?: string }[];
  return blocks.map((b) => (b.type === 'text' ? (b.text ?? '') : `[${b.type ?? 'content'}]`)).join('');
}

/** test_sampling (tools-call-sampling): asks the client's model the prompt it was given. */
export async function sampling(args: { prompt: string }, ctx: ExtraToolContext): Promise<Text> {
  const answer = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: args.prompt } }], maxTokens: 100 });
  return text(`LLM response: ${sampled(answer)}`);
}

/** test_elicitation (tools-call-elicitation): asks the user for a username and an email. */
export async function elicitation(args: { message: string }, ctx: ExtraToolContext): Promise<Text> {
  const answer = await ctx.elicit(args.message, {
    properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
    required: ['username', 'email'],
  });
  return text(`User response: ${JSON.stringify(answer)}`);
}

/** test_elicitation_sep1034_defaults: a form whose every field has a default (SEP-1034). */
export async function elicitationDefaults(_args: unknown, ctx: ExtraToolContext): Promise<Text> {
  const answer = await ctx.elicit('Please review and update the form fields with defaults', {
    properties: {
      name: { type: 'string', description: 'User name', default: 'John Doe' },
      age: { type: 'integer', description: 'User age', default: 30 },
      score: { type: 'number', description: 'User score', default: 95.5 },
      status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
      verified: { type: 'boolean', description: 'Verification status', default: true },
    },
  });
  return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.action === 'accept' ? answer.content : {})}`);
}

/** test_elicitation_sep1330_enums: the five kinds of enum field (SEP-1330). */
export async function elicitationEnums(_args: unknown, ctx: ExtraToolContext): Promise<Text> {
  const answer = await ctx.elicit('Please select options from the enum fields', {
    properties: {
      untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
      titledSingle: {
        type: 'string',
        description: 'Select one option with titles',
        oneOf: [
          { const: 'value1', title: 'First Option' },
          { const: 'value2', title: 'Second Option' },
          { const: 'value3', title: 'Third Option' },
        ],
      },
      legacyEnum: { type: 'string', description: 'Select one option (legacy)', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
      untitledMulti: { type: 'array', description: 'Select multiple options', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
      titledMulti: {
        type: 'array',
        description: 'Select multiple options with titles',
        minItems: 1,
        maxItems: 3,
        items: {
          anyOf: [
            { const: 'value1', title: 'First Choice' },
            { const: 'value2', title: 'Second Choice' },
            { const: 'value3', title: 'Third Choice' },
          ],
        },
      },
    },
  } as never);
  return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.action === 'accept' ? answer.content : {})}`);
}

/** test_missing_capability (server-stateless): needs the client's model; a client without `sampling` gets -32021. */
export async function missingCapability(_args: unknown, ctx: ExtraToolContext): Promise<Text> {
  const answer = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }], maxTokens: 20 });
  return text(`Sampled: ${sampled(answer)}`);
}

/** test_input_required_result_elicitation (and the tampered-state fixture): asks the user's name under `user_name`. */
export async function askName(_args: unknown, ctx: ExtraToolContext): Promise<Text> {
  const answer = await ctx.elicit<{ name: string }>('What is your name?', NAME_FORM, { key: 'user_name' });
  return text(answer.action === 'accept' ? `Hello, ${answer.content.name}!` : `No name given (${answer.action}).`);
}

/** test_input_required_result_sampling: asks the model under `capital_question`. */
export async function askCapital(_args: unknown, ctx: ExtraToolContext): Promise<Text> {
  const answer = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }], maxTokens: 100 }, { key: 'capital_question' });
  return text(sampled(answer));
}

/** test_input_required_result_list_roots: the client's roots under `client_roots`. */
export async function listRoots(_args: unknown, ctx: ExtraToolContext): Promise<Text> {
  const roots = await ctx.roots({ key: 'client_roots' });
  return text(`Roots: ${roots.map((r) => r.uri).join(', ') || '(none)'}`);
}

/** test_input_required_result_request_state: a confirmation under `confirm` (the server always seals a requestState). */
export async function confirm(_args: unknown, ctx: ExtraToolContext): Promise<Text> {
  const answer = await ctx.elicit<{ ok: boolean }>('Please confirm', { properties: { ok: { type: 'boolean' } }, required: ['ok'] }, { key: 'confirm' });
  return text(answer.action === 'accept' && answer.content.ok ? 'Confirmed.' : 'Not confirmed.');
}

/** test_input_required_result_multiple_inputs: three questions in one round. */
export async function multipleInputs(_args: unknown, ctx: ExtraToolContext): Promise<Text> {
  const [name, greeting, roots] = await Promise.all([
    ctx.elicit<{ name: string }>('What is your name?', NAME_FORM, { key: 'user_name' }),
    ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 }, { key: 'greeting' }),
    ctx.roots({ key: 'client_roots' }),
  ]);
  const who = name.action === 'accept' ? name.content.name : 'stranger';
  return text(`${sampled(greeting)} ${who} (${roots.length} roots)`);
}

/** test_input_required_result_multi_round: two questions, one round each. */
export async function multiRound(_args: unknown, ctx: ExtraToolContext): Promise<Text> {
  const name = await ctx.elicit<{ name: string }>('Step 1: What is your name?', NAME_FORM, { key: 'step1' });
  const color = await ctx.elicit<{ color: string }>('Step 2: What is your favorite color?', { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] }, { key: 'step2' });
  const who = name.action === 'accept' ? name.content.name : 'someone';
  return text(`${who} likes ${color.action === 'accept' ? color.content.color : 'no colour in particular'}.`);
}

/** test_input_required_result_capabilities: asks only what the client declared it can answer. */
export async function capabilities(_args: unknown, ctx: ExtraToolContext): Promise<Text> {
  const asks: Promise<unknown>[] = [];
  if (ctx.canAsk('elicitation')) asks.push(ctx.elicit('What is your name?', NAME_FORM, { key: 'user_name' }));
  if (ctx.canAsk('sampling')) asks.push(ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 }, { key: 'greeting' }));
  if (ctx.canAsk('roots')) asks.push(ctx.roots({ key: 'client_roots' }));
  await Promise.all(asks);
  return text(`Asked ${asks.length} question(s).`);
}

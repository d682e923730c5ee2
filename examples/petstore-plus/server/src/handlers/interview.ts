// Handler of the `adoption_interview` tool (manifest `extraTools`). Yours to edit: mcpgen never
// overwrites it.
//
// It asks while it runs: the user fills in a form (`ctx.elicit`), then the client's model is asked
// for a name (`ctx.sample`) — only when the client can sample (`ctx.canAsk`), else a name from the
// list. A legacy client gets real `elicitation/create` and `sampling/createMessage` requests; a
// 2026-07-28 client gets input rounds, and this function runs again from the top with the
// answers, so it asks before doing anything that must not repeat. A client that cannot elicit
// makes the call fail with -32021 (the form is what the tool is about).
import type { ExtraToolContext } from '../runtime/handlers.js';

const FALLBACK: Record<string, string> = { dog: 'Biscuit', cat: 'Miso', rabbit: 'Clover', other: 'Pixel' };

export async function adoptionInterview(_args: Record<string, never>, ctx: ExtraToolContext): Promise<string> {
  const form = await ctx.elicit<{ species: string; budget?: number; firstPet?: boolean }>('Tell us about the pet you would like to adopt.', {
    type: 'object',
    properties: {
      species: { type: 'string', title: 'Kind of pet', enum: ['dog', 'cat', 'rabbit', 'other'] },
      budget: { type: 'number', title: 'Budget (USD)', minimum: 0 },
      firstPet: { type: 'boolean', title: 'Is this your first pet?', default: false },
    },
    required: ['species'],
  });
  if (form.action !== 'accept') return `No interview: the form was ${form.action === 'decline' ? 'declined' : 'dismissed'}.`;
  const { species, budget, firstPet } = form.content;
  let name = FALLBACK[species] ?? 'Pixel';
  if (ctx.canAsk('sampling')) {
    const reply = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: `Suggest one name for a ${species}. Answer with the name only.` } }],
      maxTokens: 10,
    });
    const content = Array.isArray(reply.content) ? reply.content[0] : reply.content;
    if (content?.type === 'text' && content.text.trim() !== '') name = content.text.trim().split(/\s+/)[0]!;
  }
  const money = budget === undefined ? 'no budget given' : `a budget of ${budget} USD`;
  return `A ${species} named ${name}, with ${money}${firstPet ? ' — a first pet: ask the staff for the starter guide' : ''}.`;
}

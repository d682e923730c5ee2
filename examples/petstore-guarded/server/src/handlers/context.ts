// Preprocessors of the petstore-guarded example (see ../../../mcpgen.yaml). This file is ours:
// mcpgen wrote it once as a stub and never touches it again.
import type { PreprocessorContext } from '../runtime/handlers.js';

const RULES: ReadonlyArray<{ words: RegExp; rule: string }> = [
  { words: /\b(adopt|adoption|buy)\w*/i, rule: 'Adoptions: adopters must be 18 or older; every pet goes home vaccinated and microchipped.' },
  { words: /\b(delete|remove|erase)\w*/i, rule: 'Removals: a pet is deleted only when its record was a mistake; a pet that left the store is marked sold instead.' },
  { words: /\b(update|change|rename|edit)\w*/i, rule: 'Changes: a pet keeps its id; status moves available -> pending -> sold, never back.' },
];

/** Preprocessor `house_rules`: the store rules that apply to what the message is about. */
export async function houseRules(request: { input: string }, _ctx: PreprocessorContext): Promise<string | undefined> {
  const rules = RULES.filter((r) => r.words.test(request.input)).map((r) => r.rule);
  return rules.length > 0 ? rules.join('\n') : undefined;
}

type Pet = { id: number; name: string; status?: string; tag?: string };

/**
 * Preprocessor `pet_lookup`: the store's record of every pet named in the message, read from
 * the API the server talks to (`PETSTORE_GUARDED_BASE_URL`). Cut off at its timeout through
 * `ctx.signal`.
 */
export async function petLookup(request: { input: string }, ctx: PreprocessorContext): Promise<Pet[] | undefined> {
  const base = process.env.PETSTORE_GUARDED_BASE_URL;
  if (!base) {
    ctx.log('warn', 'PETSTORE_GUARDED_BASE_URL is not set; no pets looked up');
    return undefined;
  }
  const res = await fetch(`${base.replace(/\/+$/, '')}/pets?limit=100`, { signal: ctx.signal });
  if (!res.ok) throw new Error(`GET /pets answered ${res.status}`);
  const { items } = (await res.json()) as { items: Pet[] };
  const words = new Set(request.input.toLowerCase().match(/[a-z]+/g) ?? []);
  const named = items.filter((p) => words.has(p.name.toLowerCase()));
  return named.length > 0 ? named : undefined;
}

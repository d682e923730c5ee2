// Handler of the `pet_name_ideas` tool (manifest `extraTools`). Yours to edit: mcpgen never
// overwrites it.
import type { PetNameIdeasArgs, PetNameIdeasResult } from '../extra-tools.gen.js';

const NAMES: Record<string, string[]> = {
  dog: ['Biscuit', 'Pepper', 'Scout', 'Maple', 'Ziggy'],
  cat: ['Miso', 'Luna', 'Pixel', 'Tofu', 'Olive'],
  rabbit: ['Clover', 'Hazel', 'Bun', 'Thumper', 'Juniper'],
};

/** A few names for a pet of `species`; the tool has no output schema, so plain text is returned. */
export async function petNameIdeas(args: PetNameIdeasArgs): Promise<PetNameIdeasResult> {
  const names = NAMES[args.species.toLowerCase()];
  if (names === undefined) throw new Error(`no name ideas for a ${args.species} (try dog, cat or rabbit)`);
  return names.slice(0, args.count ?? 3).join('\n');
}

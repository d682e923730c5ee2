// Handler of the `petstore://species/{species}/care` resource template (manifest
// `resourceTemplates`). Yours to edit: mcpgen never overwrites it.
import type { Variables } from '@modelcontextprotocol/server';
import type { RequestExtra, ResourceContent } from '../runtime/handlers.js';

const SHEETS: Record<string, string> = {
  dog: '# Dog care\n\n- Two walks a day.\n- Fresh water at all times.\n- Yearly vaccinations.\n',
  cat: '# Cat care\n\n- A clean litter box.\n- Scratching post.\n- Yearly vaccinations.\n',
  rabbit: '# Rabbit care\n\n- Unlimited hay.\n- Room to hop every day.\n- Check teeth monthly.\n',
};

/** The care sheet of the species in the URI; an unknown species fails the read. */
export async function careSheet(_uri: URL, variables: Variables, _extra: RequestExtra): Promise<ResourceContent> {
  const species = String(variables.species ?? '').toLowerCase();
  const sheet = SHEETS[species];
  if (sheet === undefined) throw new Error(`no care sheet for "${species}" (try dog, cat or rabbit)`);
  return sheet;
}

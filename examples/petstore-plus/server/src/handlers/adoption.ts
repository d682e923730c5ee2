// Handler of the `adoption_fee` tool (manifest `extraTools`). mcpgen wrote this file once as a
// stub and never changes it; the types come from the generated ../extra-tools.gen.ts, so a
// signature that no longer matches the manifest's schemas fails `npm run build`.
import type { AdoptionFeeArgs, AdoptionFeeResult } from '../extra-tools.gen.js';
import type { ExtraToolContext } from '../runtime/handlers.js';

const BASE_FEE: Record<AdoptionFeeArgs['species'], number> = { dog: 150, cat: 90, rabbit: 40, other: 60 };

/** The fee for a pet: half price from eight years on. */
export async function adoptionFee(args: AdoptionFeeArgs, ctx: ExtraToolContext): Promise<AdoptionFeeResult> {
  const senior = args.ageYears >= 8;
  ctx.log('debug', `fee for a ${args.ageYears}-year-old ${args.species}`);
  return {
    fee: senior ? BASE_FEE[args.species] / 2 : BASE_FEE[args.species],
    currency: 'USD',
    covers: ['vaccinations', 'microchip', 'neutering', ...(senior ? ['senior health check'] : [])],
  };
}

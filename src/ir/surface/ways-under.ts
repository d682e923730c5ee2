/**
 * The cheapest ways to take bytes off a tool list that is over its budget, worked out from the
 * measured sizes: what the verdict (judge.ts) suggests for the whole list and for each preset.
 */
import type { IrSurface } from '../types.js';

/** One listed tool's measured sizes. */
type ToolSize = IrSurface['tools'][number];

/** `,"outputSchema":` — what a listed entry loses besides the schema itself when it is dropped. */
const OUTPUT_KEY_BYTES = Buffer.byteLength(',"outputSchema":');

const names = (tools: readonly ToolSize[]): string =>
  tools.length <= 6
    ? tools.map((t) => t.name).join(', ')
    : `${tools
        .slice(0, 6)
        .map((t) => t.name)
        .join(', ')} and ${tools.length - 6} more`;

/** The fewest tools (largest saving first) whose `saving`s add up to `excess`, or undefined. */
function fewest(tools: readonly ToolSize[], saving: (t: ToolSize) => number, excess: number): { tools: ToolSize[]; saved: number } | undefined {
  const sorted = [...tools].filter((t) => saving(t) > 0).sort((a, b) => saving(b) - saving(a) || (a.name < b.name ? -1 : 1));
  let saved = 0;
  const picked: ToolSize[] = [];
  for (const t of sorted) {
    if (saved >= excess) break;
    picked.push(t);
    saved += saving(t);
  }
  return saved >= excess ? { tools: picked, saved } : undefined;
}

/**
 * The cheapest ways to take `excess` bytes off a list made of `tools`, fewest tools touched first:
 * output schemas dropped (`outputSchemas: none`), tools excluded or mapped out of the preset,
 * input schemas cut.
 */
export function waysUnder(tools: readonly ToolSize[], excess: number, preset?: string): string[] {
  const ways: Array<[number, string]> = [];
  const out = fewest(tools, (t) => (t.outputBytes > 0 ? t.outputBytes + OUTPUT_KEY_BYTES : 0), excess);
  if (out) ways.push([out.tools.length, `\`outputSchemas: none\` on ${out.tools.length} tool(s) (${names(out.tools)}): saves ${out.saved} bytes`]);
  const gone = fewest(tools, (t) => t.bytes + 1, excess);
  if (gone) {
    const how = preset === undefined ? '`exclude`' : `\`exclude\` (or map out of preset ${JSON.stringify(preset)} in \`concernMappings\`)`;
    ways.push([gone.tools.length, `${how} ${gone.tools.length} tool(s) (${names(gone.tools)}): saves ${gone.saved} bytes`]);
  }
  const input = tools.reduce((n, t) => n + t.inputBytes, 0);
  const total = tools.reduce((n, t) => n + t.bytes, 0);
  if (input > excess && input * 2 > total) ways.push([tools.length + 1, `a lower \`inputSchemaMaxBytes\` (input schemas are ${input} of ${total} bytes)`]);
  const desc = tools.reduce((n, t) => n + t.descriptionBytes, 0);
  if (desc > excess) ways.push([tools.length + 2, `a lower \`maxDescriptionLength\` or shorter \`description\` overrides (descriptions are ${desc} bytes)`]);
  ways.sort((a, b) => a[0] - b[0]);
  return ways.map((w) => w[1]);
}

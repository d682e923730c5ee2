/**
 * Per-preset budgets (`budget.presets`): the surface a client that selected a concern preset
 * lists, checked against that preset's limits. Over a limit is a located error naming the
 * preset's largest tools and the cheapest ways to get under, worked out from the measured sizes
 * (fewest tools to change first).
 */
import { type Diagnostics, escapePointerToken, type Location } from '../../core/diagnostics.js';
import { largestTools, presetToolSizes } from './surface.js';
import { waysUnder } from './ways-under.js';
import type { IrPresetSurface, IrServer, IrSurface } from '../types.js';

/** Limits of one preset. */
export type PresetLimits = { maxListBytes?: number; maxTools?: number; maxTokens?: number };

const bullets = (lines: readonly string[]): string => lines.map((l) => `\n  - ${l}`).join('');

/** The surface of `preset` restricted to the tools it lists, for {@link largestTools}. */
function presetTools(ir: IrServer, p: IrPresetSurface): IrSurface {
  const s = ir.surface!;
  return { ...s, tools: presetToolSizes(s, p), listBytes: p.listBytes };
}

/**
 * Checks every preset's list bytes and tool count against `budget.presets` (tokens: {@link
 * checkPresetTokens}); a budget naming a preset the manifest does not declare is an error.
 */
export function checkPresetBudgets(ir: IrServer, budgets: Readonly<Record<string, PresetLimits>>, opts: { locate: (pointer: string, o?: { key?: boolean }) => Location; diagnostics: Diagnostics }): void {
  const s = ir.surface;
  if (!s) return;
  const declared = Object.keys(ir.concerns?.presets ?? {});
  for (const [name, limits] of Object.entries(budgets)) {
    const at = (key: string) => opts.locate(`/budget/presets/${escapePointerToken(name)}/${key}`);
    const p = s.presets.find((x) => x.name === name);
    if (!p) {
      opts.diagnostics.error(
        'MCPGEN_UNKNOWN_PRESET',
        `budget.presets names preset ${JSON.stringify(name)}, which concernPresets does not declare`,
        declared.length > 0 ? `use one of ${declared.map((d) => JSON.stringify(d)).join(', ')}` : 'declare it under `concernPresets`, or remove this budget',
        opts.locate(`/budget/presets/${escapePointerToken(name)}`, { key: true }),
      );
      continue;
    }
    const mine = presetTools(ir, p);
    if (p.catalogue) {
      // search mode: the preset lists the search tools only; the catalogue is read one tool at a time
      for (const [key, value, limit] of [['maxListBytes', p.listBytes, limits.maxListBytes], ['maxTools', p.tools.length, limits.maxTools]] as const) {
        if (limit === undefined || value <= limit) continue;
        opts.diagnostics.error(
          'MCPGEN_OVER_BUDGET',
          `preset ${JSON.stringify(name)} (search mode): tools/list is ${key === 'maxListBytes' ? `${value} bytes` : `${value} tools`}, over budget.presets.${name}.${key} ${limit}`,
          `raise budget.presets.${name}.${key}: a preset in search mode lists only ${p.tools.join(', ')}`,
          at(key),
        );
      }
      continue;
    }
    if (limits.maxListBytes !== undefined && p.listBytes > limits.maxListBytes) {
      opts.diagnostics.error(
        'MCPGEN_OVER_BUDGET',
        `preset ${JSON.stringify(name)}: tools/list is ${p.listBytes} bytes, over budget.presets.${name}.maxListBytes ${limits.maxListBytes}; the largest tools:${bullets(largestTools(mine))}\n  cheapest ways to get under (${p.listBytes - limits.maxListBytes} bytes):${bullets(waysUnder(mine.tools, p.listBytes - limits.maxListBytes, name)).replace(/\n {2}/g, '\n    ')}`,
        'trim the preset (`exclude`, `outputSchemas: none`, `concernMappings`) or raise its budget',
        at('maxListBytes'),
      );
    }
    if (limits.maxTools !== undefined && p.tools.length > limits.maxTools) {
      opts.diagnostics.error(
        'MCPGEN_OVER_BUDGET',
        `preset ${JSON.stringify(name)} lists ${p.tools.length} tools, over budget.presets.${name}.maxTools ${limits.maxTools}`,
        `map ${p.tools.length - limits.maxTools} of its tools out of the preset in \`concernMappings\`, or \`exclude\` them`,
        at('maxTools'),
      );
    }
  }
}

/** Checks every preset's token count (counted by `countTokens`) against `budget.presets`. */
export function checkPresetTokens(ir: IrServer, budgets: Readonly<Record<string, PresetLimits>>, opts: { locate: (pointer: string) => Location; diagnostics: Diagnostics }): void {
  for (const p of ir.surface?.presets ?? []) {
    const max = Object.hasOwn(budgets, p.name) ? budgets[p.name]?.maxTokens : undefined;
    if (max === undefined || !p.tokens || p.tokens.total <= max) continue;
    opts.diagnostics.error(
      'MCPGEN_OVER_BUDGET',
      `preset ${JSON.stringify(p.name)}: tools/list is ${p.tokens.total} tokens, over budget.presets.${p.name}.maxTokens ${max}; the largest tools:${bullets(p.tokens.largest.map((t) => `${t.name} ${t.tokens} tokens`))}`,
      'trim the preset (`exclude`, `outputSchemas: none`, `concernMappings`, shorter descriptions) or raise its budget',
      opts.locate(`/budget/presets/${escapePointerToken(p.name)}/maxTokens`),
    );
  }
}

/** Whether any budget asks for tokens (so every build counts them). */
export function wantsTokens(budget: { maxTokens?: number; presets?: Readonly<Record<string, PresetLimits>> }): boolean {
  return budget.maxTokens !== undefined || Object.values(budget.presets ?? {}).some((p) => p.maxTokens !== undefined);
}


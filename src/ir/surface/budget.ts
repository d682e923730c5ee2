/**
 * The verdicts on the measured surface (surface.ts measures, this module judges): the manifest's
 * `budget` (bytes and tool count of the whole list), and per-preset budgets (`budget.presets`):
 * the surface a client that selected a concern preset lists, checked against that preset's limits. Over a limit is a located error naming the
 * preset's largest tools and the cheapest ways to get under, worked out from the measured sizes
 * (fewest tools to change first).
 */
import { type Diagnostics, escapePointerToken, type Location } from '../../core/diagnostics.js';
import type { IrPresetSurface, IrServer, IrSurface } from '../types.js';
import { largestTools, presetToolSizes, SOFT_LIST_SHARE } from './surface.js';
import { waysUnder } from './ways-under.js';

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
export function checkPresetBudgets(
  ir: IrServer,
  budgets: Readonly<Record<string, PresetLimits>>,
  opts: { locate: (pointer: string, o?: { key?: boolean }) => Location; diagnostics: Diagnostics },
): void {
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
      for (const [key, value, limit] of [
        ['maxListBytes', p.listBytes, limits.maxListBytes],
        ['maxTools', p.tools.length, limits.maxTools],
      ] as const) {
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
export function checkPresetTokens(
  ir: IrServer,
  budgets: Readonly<Record<string, PresetLimits>>,
  opts: { locate: (pointer: string) => Location; diagnostics: Diagnostics },
): void {
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

/** Checks the surface against `budget` (bytes and tool count; tokens are counted by the CLI when asked). */
export function checkBudget(
  ir: IrServer,
  budget: { maxListBytes: number; maxTools?: number },
  opts: { locate: (pointer: string) => Location; diagnostics: Diagnostics },
): void {
  const s = ir.surface;
  if (!s) return;
  const list = (lines: string[]) => lines.map((l) => `\n  - ${l}`).join('');
  // in search mode a client lists three tools; the catalogue is read one tool at a time
  if (s.search) {
    if (s.search.listBytes > budget.maxListBytes) {
      opts.diagnostics.error(
        'MCPGEN_OVER_BUDGET',
        `tools/list (search mode) is ${s.search.listBytes} bytes, over budget.maxListBytes ${budget.maxListBytes}`,
        'raise `budget.maxListBytes`: search mode lists only its own tools',
        opts.locate('/budget/maxListBytes'),
      );
    }
  } else if (s.listBytes > budget.maxListBytes) {
    opts.diagnostics.error(
      'MCPGEN_OVER_BUDGET',
      `tools/list is ${s.listBytes} bytes, over budget.maxListBytes ${budget.maxListBytes}; the largest tools:${list(largestTools(s))}\n  cheapest ways to get under (${s.listBytes - budget.maxListBytes} bytes):${list(waysUnder(s.tools, s.listBytes - budget.maxListBytes)).replace(/\n {2}/g, '\n    ')}`,
      'trim the surface (`exclude` operations, `outputSchemas: none`, lower `inputSchemaMaxBytes`) or raise `budget.maxListBytes` if every client you serve reads more',
      opts.locate('/budget/maxListBytes'),
    );
  } else if (s.listBytes > budget.maxListBytes * SOFT_LIST_SHARE) {
    opts.diagnostics.warn(
      'MCPGEN_LARGE_SURFACE',
      `tools/list is ${s.listBytes} bytes, over a quarter of budget.maxListBytes ${budget.maxListBytes}: many clients truncate or refuse lists this large`,
      'trim the surface with `exclude`, concerns or `outputSchemas: none`; the build summary lists the largest tools with --report',
      opts.locate('/budget/maxListBytes'),
    );
  }
  if (budget.maxTools !== undefined && s.tools.length > budget.maxTools) {
    opts.diagnostics.error(
      'MCPGEN_OVER_BUDGET',
      `the server publishes ${s.tools.length} tools, over budget.maxTools ${budget.maxTools}`,
      'narrow `include` or add `exclude` selectors',
      opts.locate('/budget/maxTools'),
    );
  }
}

/**
 * The size verdict on the measured surface (fit.ts fits, measure.ts measures, this module judges):
 * every size diagnostic of the build comes from {@link judgeSurface} — the whole list's bytes and
 * tool count against `budget`, each preset's against `budget.presets`, and the o200k tokens of both
 * once counted. Over a limit is a located error naming the largest tools and, for bytes, the
 * cheapest ways to get under (ways-under.ts); a list over a quarter of `maxListBytes` is a warning.
 */
import { type Diagnostic, escapePointerToken, type Location } from '../../core/diagnostics.js';
import type { IrSurface } from '../types.js';
import { presetToolSizes } from './measure.js';
import { waysUnder } from './ways-under.js';

/** Limits of one preset. */
export type PresetLimits = { maxListBytes?: number; maxTools?: number; maxTokens?: number };

/** The manifest's `budget` (`maxListBytes` defaulted). */
export type SurfaceBudget = { maxListBytes: number; maxTools?: number; maxTokens?: number; presets?: Readonly<Record<string, PresetLimits>> };

/**
 * What a verdict judges: `bytes` — the list bytes and tool counts measured with the IR; `tokens` —
 * the o200k tokens, which the build counts only when it is otherwise clean (loading the
 * tokenizer and counting costs a quarter of a second and more), so they are judged after it.
 */
export type Measure = 'bytes' | 'tokens';

/** Above this share of `budget.maxListBytes` the build warns. */
export const SOFT_LIST_SHARE = 0.25;

/** Inputs of {@link judgeSurface}. */
export type JudgeInput = {
  surface: IrSurface;
  budget: SurfaceBudget;
  /** Which measurement to judge; `tokens` needs the surface's (and its presets') `tokens`. */
  measure: Measure;
  /** The presets `concernPresets` declares: a `budget.presets` entry naming another is an error. */
  declaredPresets: readonly string[];
  /** Locates a pointer in the manifest (`key: true` for the key of a mapping entry). */
  locate: (pointer: string, o?: { key?: boolean }) => Location;
};

/** Every size diagnostic of `measure` on `surface` against `budget`, in a fixed order: the whole list, then each preset. */
export function judgeSurface(input: JudgeInput): Diagnostic[] {
  return input.measure === 'bytes' ? [...judgeListBytes(input), ...judgePresetBytes(input)] : [...judgeListTokens(input), ...judgePresetTokens(input)];
}

/** Whether any budget asks for tokens (so every build counts them). */
export function wantsTokens(budget: { maxTokens?: number; presets?: Readonly<Record<string, PresetLimits>> }): boolean {
  return budget.maxTokens !== undefined || Object.values(budget.presets ?? {}).some((p) => p.maxTokens !== undefined);
}

/** The largest tools, one line each, with what would shrink each most. */
export function largestTools(surface: IrSurface, count = 10): string[] {
  return [...surface.tools]
    .sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : 1))
    .slice(0, count)
    .map((t) => `${t.name} ${t.bytes} bytes (input ${t.inputBytes}, output ${t.outputBytes}, description ${t.descriptionBytes}): ${advice(t)}`);
}

/** What would shrink a tool most, for the budget error. */
function advice(t: IrSurface['tools'][number]): string {
  const parts: Array<[number, string]> = [
    [t.outputBytes, '`outputSchemas: none` (or a lower `outputSchemaMaxBytes`)'],
    [t.inputBytes, 'a lower `inputSchemaMaxBytes`'],
    [t.descriptionBytes, 'a shorter `description` override'],
  ];
  parts.sort((a, b) => b[0] - a[0]);
  return `exclude it, or ${parts[0]![1]}`;
}

const bullets = (lines: readonly string[]): string => lines.map((l) => `\n  - ${l}`).join('');

const overBudget = (message: string, help: string, location: Location): Diagnostic => ({
  code: 'MCPGEN_OVER_BUDGET',
  severity: 'error',
  message,
  help,
  location,
});

/** The whole list's bytes (in search mode, the search tools') and tool count. */
function judgeListBytes({ surface: s, budget, locate }: JudgeInput): Diagnostic[] {
  const out: Diagnostic[] = [];
  // in search mode a client lists three tools; the catalogue is read one tool at a time
  if (s.search) {
    if (s.search.listBytes > budget.maxListBytes) {
      out.push(
        overBudget(
          `tools/list (search mode) is ${s.search.listBytes} bytes, over budget.maxListBytes ${budget.maxListBytes}`,
          'raise `budget.maxListBytes`: search mode lists only its own tools',
          locate('/budget/maxListBytes'),
        ),
      );
    }
  } else if (s.listBytes > budget.maxListBytes) {
    out.push(
      overBudget(
        `tools/list is ${s.listBytes} bytes, over budget.maxListBytes ${budget.maxListBytes}; the largest tools:${bullets(largestTools(s))}\n  cheapest ways to get under (${s.listBytes - budget.maxListBytes} bytes):${bullets(waysUnder(s.tools, s.listBytes - budget.maxListBytes)).replace(/\n {2}/g, '\n    ')}`,
        'trim the surface (`exclude` operations, `outputSchemas: none`, lower `inputSchemaMaxBytes`) or raise `budget.maxListBytes` if every client you serve reads more',
        locate('/budget/maxListBytes'),
      ),
    );
  } else if (s.listBytes > budget.maxListBytes * SOFT_LIST_SHARE) {
    out.push({
      code: 'MCPGEN_LARGE_SURFACE',
      severity: 'warning',
      message: `tools/list is ${s.listBytes} bytes, over a quarter of budget.maxListBytes ${budget.maxListBytes}: many clients truncate or refuse lists this large`,
      help: 'trim the surface with `exclude`, concerns or `outputSchemas: none`; the build summary lists the largest tools with --report',
      location: locate('/budget/maxListBytes'),
    });
  }
  if (budget.maxTools !== undefined && s.tools.length > budget.maxTools) {
    out.push(
      overBudget(
        `the server publishes ${s.tools.length} tools, over budget.maxTools ${budget.maxTools}`,
        'narrow `include` or add `exclude` selectors',
        locate('/budget/maxTools'),
      ),
    );
  }
  return out;
}

/** Each `budget.presets` entry's list bytes and tool count, in the budget's order; an entry naming an undeclared preset is an error. */
function judgePresetBytes({ surface: s, budget, declaredPresets: declared, locate }: JudgeInput): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const [name, limits] of Object.entries(budget.presets ?? {})) {
    const at = (key: string) => locate(`/budget/presets/${escapePointerToken(name)}/${key}`);
    const p = s.presets.find((x) => x.name === name);
    if (!p) {
      out.push({
        code: 'MCPGEN_UNKNOWN_PRESET',
        severity: 'error',
        message: `budget.presets names preset ${JSON.stringify(name)}, which concernPresets does not declare`,
        help:
          declared.length > 0 ? `use one of ${declared.map((d) => JSON.stringify(d)).join(', ')}` : 'declare it under `concernPresets`, or remove this budget',
        location: locate(`/budget/presets/${escapePointerToken(name)}`, { key: true }),
      });
      continue;
    }
    if (p.catalogue) {
      // search mode: the preset lists the search tools only; the catalogue is read one tool at a time
      for (const [key, value, limit] of [
        ['maxListBytes', p.listBytes, limits.maxListBytes],
        ['maxTools', p.tools.length, limits.maxTools],
      ] as const) {
        if (limit === undefined || value <= limit) continue;
        out.push(
          overBudget(
            `preset ${JSON.stringify(name)} (search mode): tools/list is ${key === 'maxListBytes' ? `${value} bytes` : `${value} tools`}, over budget.presets.${name}.${key} ${limit}`,
            `raise budget.presets.${name}.${key}: a preset in search mode lists only ${p.tools.join(', ')}`,
            at(key),
          ),
        );
      }
      continue;
    }
    // the surface of the preset: the tools it lists
    const mine: IrSurface = { ...s, tools: presetToolSizes(s, p), listBytes: p.listBytes };
    if (limits.maxListBytes !== undefined && p.listBytes > limits.maxListBytes) {
      out.push(
        overBudget(
          `preset ${JSON.stringify(name)}: tools/list is ${p.listBytes} bytes, over budget.presets.${name}.maxListBytes ${limits.maxListBytes}; the largest tools:${bullets(largestTools(mine))}\n  cheapest ways to get under (${p.listBytes - limits.maxListBytes} bytes):${bullets(waysUnder(mine.tools, p.listBytes - limits.maxListBytes, name)).replace(/\n {2}/g, '\n    ')}`,
          'trim the preset (`exclude`, `outputSchemas: none`, `concernMappings`) or raise its budget',
          at('maxListBytes'),
        ),
      );
    }
    if (limits.maxTools !== undefined && p.tools.length > limits.maxTools) {
      out.push(
        overBudget(
          `preset ${JSON.stringify(name)} lists ${p.tools.length} tools, over budget.presets.${name}.maxTools ${limits.maxTools}`,
          `map ${p.tools.length - limits.maxTools} of its tools out of the preset in \`concernMappings\`, or \`exclude\` them`,
          at('maxTools'),
        ),
      );
    }
  }
  return out;
}

/** The whole list's tokens against `budget.maxTokens`. */
function judgeListTokens({ surface: s, budget, locate }: JudgeInput): Diagnostic[] {
  const max = budget.maxTokens;
  if (max === undefined || !s.tokens || s.tokens.total <= max) return [];
  const top = s.tokens.largest.map((t) => `\n  - ${t.name} ${t.tokens} tokens`).join('');
  return [
    overBudget(
      `tools/list is ${s.tokens.total} tokens, over budget.maxTokens ${max}; the largest tools:${top}`,
      'trim the surface (`exclude` operations, `outputSchemas: none`, lower `inputSchemaMaxBytes`, shorter descriptions) or raise `budget.maxTokens`',
      locate('/budget/maxTokens'),
    ),
  ];
}

/** Each preset's tokens against its `budget.presets` entry, in `concernPresets` order. */
function judgePresetTokens({ surface: s, budget, locate }: JudgeInput): Diagnostic[] {
  const budgets = budget.presets ?? {};
  const out: Diagnostic[] = [];
  for (const p of s.presets) {
    const max = Object.hasOwn(budgets, p.name) ? budgets[p.name]?.maxTokens : undefined;
    if (max === undefined || !p.tokens || p.tokens.total <= max) continue;
    out.push(
      overBudget(
        `preset ${JSON.stringify(p.name)}: tools/list is ${p.tokens.total} tokens, over budget.presets.${p.name}.maxTokens ${max}; the largest tools:${bullets(p.tokens.largest.map((t) => `${t.name} ${t.tokens} tokens`))}`,
        'trim the preset (`exclude`, `outputSchemas: none`, `concernMappings`, shorter descriptions) or raise its budget',
        locate(`/budget/presets/${escapePointerToken(p.name)}/maxTokens`),
      ),
    );
  }
  return out;
}

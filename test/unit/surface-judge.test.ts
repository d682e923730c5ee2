/**
 * The size verdict as a pure function (src/ir/surface/judge.ts): a measured surface built here,
 * no spec parsed. Each measurement is judged on its own — the bytes and tool counts with the IR,
 * the o200k tokens once counted — and every size diagnostic comes from this one function, in a
 * fixed order: the whole list, then each preset.
 */
import { describe, expect, it } from 'vitest';
import type { Location } from '../../src/core/diagnostics.js';
import { judgeSurface, type SurfaceBudget } from '../../src/ir/surface/judge.js';
import type { IrSurface } from '../../src/ir/types.js';

const tool = (name: string, bytes: number) => ({ name, bytes, inputBytes: bytes / 2, outputBytes: bytes / 4, descriptionBytes: bytes / 8 });
const TOOLS = [tool('a', 400), tool('b', 200), tool('c', 100)];
const tokens = (total: number) => ({ total, largest: [{ name: 'a', tokens: total / 2 }] });

/** Three tools, 703 bytes, 300 tokens; preset `small` lists `b` and `c`. */
const SURFACE: IrSurface = {
  tools: TOOLS,
  listBytes: 703,
  withOutputSchema: 3,
  describedResults: 3,
  outputSchemasDropped: [],
  inputSchemasCut: [],
  tokens: tokens(300),
  presets: [{ name: 'small', tools: ['b', 'c'], listBytes: 303, prompts: 0, resources: 0, resourceTemplates: 0, tokens: tokens(100) }],
};
const locate = (pointer: string, o?: { key?: boolean }): Location => ({ file: 'mcpgen.yaml', pointer: o?.key ? `${pointer}#key` : pointer, line: 1, col: 1 });
const judge = (budget: SurfaceBudget, measure: 'bytes' | 'tokens', surface: IrSurface = SURFACE) =>
  judgeSurface({ surface, budget, measure, declaredPresets: ['small'], locate }).map((d) => [d.severity, d.code, d.location.pointer]);

describe('judgeSurface', () => {
  const OVER: SurfaceBudget = {
    maxListBytes: 500,
    maxTools: 2,
    maxTokens: 200,
    presets: { small: { maxListBytes: 300, maxTools: 1, maxTokens: 50 }, nosuch: { maxTools: 1 } },
  };

  it('judges the bytes and tool counts only, whole list first, then the presets in the budget order', () => {
    expect(judge(OVER, 'bytes')).toEqual([
      ['error', 'MCPGEN_OVER_BUDGET', '/budget/maxListBytes'],
      ['error', 'MCPGEN_OVER_BUDGET', '/budget/maxTools'],
      ['error', 'MCPGEN_OVER_BUDGET', '/budget/presets/small/maxListBytes'],
      ['error', 'MCPGEN_OVER_BUDGET', '/budget/presets/small/maxTools'],
      ['error', 'MCPGEN_UNKNOWN_PRESET', '/budget/presets/nosuch#key'],
    ]);
  });

  it('judges the tokens only, whole list first, then the presets', () => {
    expect(judge(OVER, 'tokens')).toEqual([
      ['error', 'MCPGEN_OVER_BUDGET', '/budget/maxTokens'],
      ['error', 'MCPGEN_OVER_BUDGET', '/budget/presets/small/maxTokens'],
    ]);
    const [whole] = judgeSurface({ surface: SURFACE, budget: OVER, measure: 'tokens', declaredPresets: ['small'], locate });
    expect(whole!.message).toBe('tools/list is 300 tokens, over budget.maxTokens 200; the largest tools:\n  - a 150 tokens');
  });

  it('finds nothing to say of tokens not counted, and warns of a list over a quarter of its byte budget', () => {
    const { tokens: _t, ...uncounted } = SURFACE;
    expect(judge(OVER, 'tokens', { ...uncounted, presets: SURFACE.presets.map(({ tokens: _p, ...p }) => p) })).toEqual([]);
    expect(judge({ maxListBytes: 2000 }, 'bytes')).toEqual([['warning', 'MCPGEN_LARGE_SURFACE', '/budget/maxListBytes']]);
    expect(judge({ maxListBytes: 4000, maxTools: 3, maxTokens: 300, presets: { small: { maxTokens: 100 } } }, 'bytes')).toEqual([]);
    expect(judge({ maxListBytes: 4000, maxTools: 3, maxTokens: 300, presets: { small: { maxTokens: 100 } } }, 'tokens')).toEqual([]);
  });

  it('judges search mode by what tools/list lists there, not by the catalogue', () => {
    const search: IrSurface = { ...SURFACE, search: { tools: ['search_tools', 'describe_tool', 'call_tool'], listBytes: 600 } };
    // the catalogue (703 bytes) is over 650, and over a quarter of it: neither counts in search mode
    expect(judge({ maxListBytes: 650 }, 'bytes', search)).toEqual([]);
    expect(judge({ maxListBytes: 500 }, 'bytes', search)).toEqual([['error', 'MCPGEN_OVER_BUDGET', '/budget/maxListBytes']]);
  });
});

/**
 * How clients find the tools (manifest `discovery`), per concern preset: the mode when no preset
 * is selected (`discovery`, or `discovery.mode`) and the presets whose mode differs
 * (`discovery.presets`). A preset's mode decides what `tools/list` lists for a client that selected
 * it: its filtered catalogue (`list`), the search front tools (`search`), or code mode's (`code`:
 * search_tools, describe_tool, execute). The IR keeps the
 * default in `discovery` and only the presets that differ from it in `presetDiscovery`.
 */
import { type Diagnostics, escapePointerToken, type Location } from '../../core/diagnostics.js';
import type { ResolvedManifest } from '../../manifest/load.js';
import type { IrServer } from '../types.js';

/** A discovery mode. */
export type DiscoveryMode = 'list' | 'search' | 'code';

/**
 * Resolves `discovery` against the declared presets: a preset name `concernPresets` does not
 * declare is a located `MCPGEN_UNKNOWN_PRESET`; presets given the default's mode are dropped.
 */
export function resolveDiscovery(
  manifest: Partial<Pick<ResolvedManifest, 'discovery' | 'discoveryPresets'>>,
  presets: readonly string[],
  opts: { locate: (pointer: string, o?: { key?: boolean }) => Location; diagnostics: Diagnostics },
): Pick<IrServer, 'discovery' | 'presetDiscovery'> {
  const mode: DiscoveryMode = manifest.discovery === 'search' || manifest.discovery === 'code' ? manifest.discovery : 'list';
  const out: Pick<IrServer, 'discovery' | 'presetDiscovery'> = mode !== 'list' ? { discovery: mode } : {};
  const differ: Record<string, DiscoveryMode> = {};
  for (const [name, m] of Object.entries(manifest.discoveryPresets ?? {})) {
    if (!presets.includes(name)) {
      opts.diagnostics.error(
        'MCPGEN_UNKNOWN_PRESET',
        `discovery.presets names preset ${JSON.stringify(name)}, which concernPresets does not declare`,
        presets.length > 0
          ? `use one of ${presets.map((d) => JSON.stringify(d)).join(', ')}`
          : 'declare it under `concernPresets`, or set `discovery.mode` for the whole server',
        opts.locate(`/discovery/presets/${escapePointerToken(name)}`, { key: true }),
      );
      continue;
    }
    if (m !== mode) Object.defineProperty(differ, name, { value: m, enumerable: true, writable: true, configurable: true });
  }
  if (Object.keys(differ).length > 0) out.presetDiscovery = differ;
  return out;
}

/** The mode of `preset` (undefined: a client that selected none). */
export function discoveryOf(ir: Pick<IrServer, 'discovery' | 'presetDiscovery'>, preset?: string): DiscoveryMode {
  if (preset !== undefined && ir.presetDiscovery && Object.hasOwn(ir.presetDiscovery, preset)) return ir.presetDiscovery[preset]!;
  return ir.discovery ?? 'list';
}

/** Whether the server needs search mode's runtime, index and `stemmer`: the default or any preset is `search` or `code` (code mode searches with the same index). */
export function usesSearch(ir: Pick<IrServer, 'discovery' | 'presetDiscovery'>): boolean {
  return ir.discovery !== undefined || Object.values(ir.presetDiscovery ?? {}).some((m) => m !== 'list');
}

/** Whether the server needs code mode's runtime (sandbox, `quickjs-emscripten`, `sucrase`) and signatures: the default or any preset is `code`. */
export function usesCode(ir: Pick<IrServer, 'discovery' | 'presetDiscovery'>): boolean {
  return ir.discovery === 'code' || Object.values(ir.presetDiscovery ?? {}).includes('code');
}

/**
 * Concern filtering → IR: declarations, mappings and presets, each checked against
 * the declarations and the primitives the server really has (tools by final name, operation
 * tools included), with did-you-mean hints.
 */
import { type Diagnostics, escapePointerToken, type Location } from '../../core/diagnostics.js';
import { suggest } from '../../core/suggest.js';
import type { ConcernKind, ResolvedManifest } from '../../manifest/load.js';
import { type ExcludedReferences, entryLabel } from '../tools/excluded.js';
import type { IrConcerns } from '../types.js';

/** Inputs of {@link buildConcerns}. */
export type ConcernsInput = {
  manifest: Pick<ResolvedManifest, 'concerns' | 'concernMappings' | 'concernPresets' | 'exposeInMeta' | 'enforce'>;
  /** Ids of every primitive the server has, per kind. */
  known: Record<ConcernKind, readonly string[]>;
  /** Reflection gate prompts ⇒ their gated tool: they exist but follow their tool, so they may not be mapped. */
  gatePrompts?: ReadonlyMap<string, string>;
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
  /** Collects tool mappings that name operations include/exclude leave out (not errors). */
  excluded?: ExcludedReferences;
};

const KIND_LABEL: Record<ConcernKind, string> = { tools: 'tool', prompts: 'prompt', resources: 'resource', resourceTemplates: 'resource template' };
const KINDS: readonly ConcernKind[] = ['tools', 'prompts', 'resources', 'resourceTemplates'];

/** Builds the concern IR; `undefined` when the manifest uses no concerns. Problems go to `diagnostics`. */
export function buildConcerns(input: ConcernsInput): IrConcerns | undefined {
  const { manifest: m, diagnostics, locateManifest } = input;
  const declared = m.concerns ?? [];
  if (declared.length === 0 && m.concernMappings === undefined && m.concernPresets === undefined) return undefined;

  const byName = new Map<string, { values: string[] }>();
  declared.forEach((c, i) => {
    if (byName.has(c.name)) {
      diagnostics.error(
        'MCPGEN_DUPLICATE_PRIMITIVE',
        `concern ${JSON.stringify(c.name)} is declared twice`,
        'merge the two declarations',
        locateManifest(`/concerns/${i}/name`),
      );
      return;
    }
    byName.set(c.name, { values: c.values });
    if (c.default !== undefined && !c.values.includes(c.default)) {
      diagnostics.error(
        'MCPGEN_UNKNOWN_CONCERN_VALUE',
        `default ${JSON.stringify(c.default)} of concern ${JSON.stringify(c.name)} is not one of its values`,
        hint(c.default, c.values),
        locateManifest(`/concerns/${i}/default`),
      );
    }
  });

  /** Checks `concern: value(s)` at `base`; returns whether the entry is usable. */
  const checkEntry = (concern: string, value: string | string[], base: string): boolean => {
    const decl = byName.get(concern);
    const at = `${base}/${escapePointerToken(concern)}`;
    if (decl === undefined) {
      const names = [...byName.keys()];
      const near = suggest(concern, names);
      const help = near ? `did you mean "${near}"?` : names.length > 0 ? `declared concerns: ${names.join(', ')}` : 'declare it under `concerns`';
      diagnostics.error('MCPGEN_UNKNOWN_CONCERN', `concern ${JSON.stringify(concern)} is not declared`, help, locateManifest(at, { key: true }));
      return false;
    }
    let ok = true;
    const values = Array.isArray(value) ? value : [value];
    values.forEach((v, k) => {
      if (decl.values.includes(v)) return;
      ok = false;
      diagnostics.error(
        'MCPGEN_UNKNOWN_CONCERN_VALUE',
        `${JSON.stringify(v)} is not a value of concern ${JSON.stringify(concern)}`,
        hint(v, decl.values),
        locateManifest(Array.isArray(value) ? `${at}/${k}` : at),
      );
    });
    return ok;
  };

  const mappings: IrConcerns['mappings'] = {};
  for (const kind of KINDS) {
    const table = m.concernMappings?.[kind];
    if (table === undefined) continue;
    const known = input.known[kind];
    const out: Record<string, Record<string, string | string[]>> = {};
    for (const [id, mapping] of Object.entries(table)) {
      const at = `/concernMappings/${kind}/${escapePointerToken(id)}`;
      if (!known.includes(id)) {
        if (kind === 'tools' && input.excluded?.toolNames.has(id)) {
          input.excluded.add(at, entryLabel(`concernMappings.${kind}`, id));
          continue;
        }
        const gated = kind === 'prompts' ? input.gatePrompts?.get(id) : undefined;
        if (gated !== undefined) {
          diagnostics.error(
            'MCPGEN_UNKNOWN_PRIMITIVE',
            `prompt ${JSON.stringify(id)} is a reflection gate prompt, which follows its tool and cannot be mapped to concerns`,
            `map the gated tool instead: concernMappings.tools.${gated}`,
            locateManifest(at, { key: true }),
          );
          continue;
        }
        // a near name may be one the user left out: say so rather than hide it
        const left = kind === 'tools' ? [...(input.excluded?.toolNames ?? [])] : [];
        const near = suggest(id, [...known, ...left]);
        const help = near
          ? `did you mean "${near}"?${known.includes(near) ? '' : ' (include/exclude leave it out)'}`
          : known.length > 0
            ? `map one of the server's ${KIND_LABEL[kind]}s`
            : `the server has no ${KIND_LABEL[kind]}s`;
        diagnostics.error('MCPGEN_UNKNOWN_PRIMITIVE', `${KIND_LABEL[kind]} ${JSON.stringify(id)} does not exist`, help, locateManifest(at, { key: true }));
        continue;
      }
      const entry: Record<string, string | string[]> = {};
      for (const [concern, value] of Object.entries(mapping)) if (checkEntry(concern, value, at)) entry[concern] = value;
      out[id] = entry;
    }
    mappings[kind] = out;
  }

  const presets: IrConcerns['presets'] = {};
  for (const [name, prefs] of Object.entries(m.concernPresets ?? {})) {
    const at = `/concernPresets/${escapePointerToken(name)}`;
    const entry: Record<string, string> = {};
    for (const [concern, value] of Object.entries(prefs)) if (checkEntry(concern, value, at)) entry[concern] = value;
    presets[name] = entry;
  }

  const declarations = declared
    .filter((c, i) => declared.findIndex((d) => d.name === c.name) === i)
    .map((c) => ({
      name: c.name,
      ...(c.description !== undefined ? { description: c.description } : {}),
      values: [...c.values],
      ...(c.default !== undefined ? { default: c.default } : {}),
    }));
  return { declarations, mappings, presets, exposeInMeta: m.exposeInMeta, enforce: m.enforce };
}

function hint(value: string, values: readonly string[]): string {
  const near = suggest(value, values);
  return near ? `did you mean "${near}"?` : `allowed values: ${values.join(', ')}`;
}

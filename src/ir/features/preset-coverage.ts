/**
 * Tools no concern preset can leave out. A primitive that maps no concern matches every value
 * (templates/runtime/concerns/concerns.ts), so a tool added without a mapping is listed by every preset,
 * `read-only` included, whatever it does. That is right for a tool meant for everyone and wrong
 * for a forgotten one, and only the manifest's author can tell which: the build warns, and a tool
 * meant for every preset says so by mapping a concern to all of its values.
 */
import type { Diagnostics, Location } from '../../core/diagnostics.js';
import type { IrConcerns } from '../types.js';

const SHOWN = 10;

/**
 * Warns once (MCPGEN_UNMAPPED_TOOL) about the tools of `tools` that map no concern, when some
 * preset filters on a concern.
 */
export function checkPresetCoverage(opts: {
  concerns: IrConcerns | undefined;
  tools: readonly string[];
  locateManifest: (pointer: string, o?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
}): void {
  const c = opts.concerns;
  if (!c) return;
  const filtering = Object.entries(c.presets).filter(([, prefs]) => Object.keys(prefs).length > 0);
  if (filtering.length === 0) return;
  const mapped = c.mappings.tools ?? {};
  const unmapped = opts.tools.filter((t) => !Object.hasOwn(mapped, t) || Object.keys(mapped[t]!).length === 0);
  if (unmapped.length === 0) return;
  const [preset, prefs] = filtering[0]!;
  const concern = Object.keys(prefs)[0]!;
  const values = c.declarations.find((d) => d.name === concern)?.values ?? [prefs[concern]!];
  const names = unmapped.slice(0, SHOWN).join(', ') + (unmapped.length > SHOWN ? ` and ${unmapped.length - SHOWN} more` : '');
  const presets = filtering.map(([name]) => JSON.stringify(name)).join(', ');
  const them = unmapped.length === 1 ? 'it' : 'them';
  opts.diagnostics.warn(
    'MCPGEN_UNMAPPED_TOOL',
    `${unmapped.length === 1 ? '1 tool maps' : `${unmapped.length} tools map`} no concern, so every preset lists ${them} (${presets}), whatever ${unmapped.length === 1 ? 'it does' : 'they do'}: ${names}`,
    `map ${unmapped.length === 1 ? 'it' : 'each'} under \`concernMappings.tools\`, e.g. \`${unmapped[0]}: { ${concern}: ${prefs[concern]} }\` to keep ${them} in preset ${JSON.stringify(preset)} or another value to leave ${them} out; a tool meant for every preset maps a concern to all its values (\`${concern}: [${values.join(', ')}]\`)`,
    opts.locateManifest(c.mappings.tools !== undefined ? '/concernMappings/tools' : '/concernPresets', { key: true }),
  );
}

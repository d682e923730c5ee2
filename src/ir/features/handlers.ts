/**
 * `handler: <file>#<export>` values of the manifest (extra tools, resources, resource templates,
 * preprocessors) → IR handler references, with one import alias per handler file.
 */
import type { Diagnostics, Location } from '../../core/diagnostics.js';
import { identifier } from '../../core/identifiers.js';
import type { ResolvedManifest } from '../../manifest/load.js';
import type { HandlerRef } from '../../manifest/types.gen.js';
import type { IrHandlerRef } from '../types.js';

/** Inputs of {@link handlerResolver}. */
export type HandlerResolverInput = {
  manifest: Pick<ResolvedManifest, 'extraTools' | 'resources' | 'resourceTemplates' | 'preprocessors'>;
  locateManifest: (pointer: string) => Location;
  diagnostics: Diagnostics;
};

/** Turns one `handler` value (at `pointer` in the manifest) into a reference; reports bad ones. */
export type HandlerResolver = { ref: (value: HandlerRef, pointer: string) => IrHandlerRef };

/** Generated paths (relative to `src/`) a handler may not live at. */
export function generatedPath(file: string): boolean {
  return file === 'server.ts' || file.endsWith('.gen.ts') || file.endsWith('.d.ts') || file.startsWith('runtime/');
}

/**
 * Parses `handler` values and gives each handler file one import alias (`$handlers_pets`).
 * Tool-derived identifiers never contain `$`, so the aliases cannot clash with them; aliases are
 * assigned in file-name order, so they do not depend on the order of the manifest.
 */
export function handlerResolver(input: HandlerResolverInput): HandlerResolver {
  const m = input.manifest;
  const files = new Set<string>();
  const split = (value: string) => {
    const hash = value.lastIndexOf('#');
    return { file: value.slice(0, hash).replace(/^\.\//, ''), exportName: value.slice(hash + 1) };
  };
  for (const v of [...(m.extraTools ?? []), ...(m.resources ?? []), ...(m.resourceTemplates ?? []), ...(m.preprocessors ?? [])].map((e) => e.handler)) {
    if (typeof v === 'string') files.add(split(v).file);
  }
  const aliases = new Map<string, string>();
  const used = new Set<string>();
  for (const f of [...files].sort()) {
    const base = '$' + identifier(f.replace(/\.ts$/, '')).replace(/^_(?=\d)/, '');
    let alias = base;
    for (let n = 2; used.has(alias); n++) alias = `${base}${n}`;
    used.add(alias);
    aliases.set(f, alias);
  }
  const file = input.locateManifest('').file;
  return {
    ref(value, pointer) {
      const { file: f, exportName } = split(value);
      if (generatedPath(f)) {
        input.diagnostics.error(
          'MCPGEN_HANDLER_INVALID',
          `handler file src/${f} is a file mcpgen generates`,
          'put handlers in a folder of their own, e.g. `handlers/tools.ts#myTool`',
          input.locateManifest(pointer),
        );
      } else if (identifier(exportName) !== exportName) {
        input.diagnostics.error(
          'MCPGEN_HANDLER_INVALID',
          `handler name "${exportName}" is a reserved word`,
          'name the exported function differently',
          input.locateManifest(pointer),
        );
      }
      return { file: f, exportName, moduleAlias: aliases.get(f)!, importPath: `./${f.replace(/\.ts$/, '.js')}`, origin: { file, pointer } };
    },
  };
}

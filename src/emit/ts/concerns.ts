/**
 * Emits `src/concerns.gen.ts`: concern declarations, mappings, presets and options, as data
 * in the shape `installConcerns` takes.
 */
import type { IrServer } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { tsLiteral } from '../safe.js';

/** Renders `src/concerns.gen.ts`; only called when the IR has concerns. */
export function emitConcernsFile(ir: IrServer): string {
  const c = ir.concerns!;
  const data: Record<string, unknown> = { declarations: c.declarations, mappings: c.mappings, exposeInMeta: c.exposeInMeta, enforce: c.enforce };
  if (Object.keys(c.presets).length > 0) data.presets = c.presets;
  return (
    TS_HEADER +
    "\nimport type { InstallConcernsOptions } from './runtime/concerns/concern-protocol.js';\n\n" +
    '/** Concern filtering of this server (manifest `concerns`, `concernMappings`, `concernPresets`, `exposeInMeta`, `enforce`). */\n' +
    `export const concerns: Omit<InstallConcernsOptions, 'era'> = ${tsLiteral(data, 2)};\n`
  );
}

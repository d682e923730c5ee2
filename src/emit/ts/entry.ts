/**
 * Emits the server entry (`src/server.ts`) and its settings (`src/config.gen.ts`).
 */
import type { IrServer } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { tsLiteral } from '../safe.js';

/** Renders `src/config.gen.ts`: the static server settings, as data. */
export function emitConfigFile(ir: IrServer): string {
  const config: Record<string, unknown> = { name: ir.name, version: ir.version };
  if (ir.description !== undefined) config.instructions = ir.description;
  if (ir.baseUrl !== undefined) config.baseUrl = ir.baseUrl;
  config.envPrefix = ir.envPrefix;
  config.timeoutMs = ir.timeoutMs;
  config.maxResponseBytes = ir.maxResponseBytes;
  return (
    TS_HEADER +
    "\nimport type { ServerConfig } from './runtime/types.js';\n\n" +
    '/** Settings from the manifest; `<envPrefix>_*` environment variables override them at run time. */\n' +
    `export const config: ServerConfig = ${tsLiteral(config, 2)};\n`
  );
}

/** Renders `src/server.ts`, the stdio entry point (`bin` of the generated package). */
export function emitServerEntry(): string {
  return (
    '#!/usr/bin/env node\n' +
    TS_HEADER +
    "\nimport { config } from './config.gen.js';\n" +
    "import { runStdio } from './runtime/server.js';\n" +
    "import { tools } from './tools.gen.js';\n\n" +
    'await runStdio(config, tools);\n'
  );
}

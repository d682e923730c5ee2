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
  if (ir.uploads) config.uploads = ir.uploads;
  if (ir.securitySchemes.length > 0) {
    // variable NAMES only: secret values exist in the server's environment, never in its source
    config.securitySchemes = ir.securitySchemes.map((s) => {
      switch (s.kind) {
        case 'apiKey':
          return { kind: s.kind, name: s.name, in: s.in, paramName: s.paramName, env: { apiKey: s.env.apiKey } };
        case 'bearer':
          return { kind: s.kind, name: s.name, env: { token: s.env.token } };
        case 'basic':
          return { kind: s.kind, name: s.name, env: { username: s.env.username, password: s.env.password } };
        case 'oauth2ClientCredentials': {
          const o: Record<string, unknown> = { kind: s.kind, name: s.name, tokenUrl: s.tokenUrl };
          if (s.scopes.length > 0) o.scopes = s.scopes;
          o.env = { clientId: s.env.clientId, clientSecret: s.env.clientSecret };
          return o;
        }
      }
    });
  }
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

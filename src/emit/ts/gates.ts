/**
 * Emits the preprocessors and the reflection gate of a manifest:
 * - `src/preprocessors.gen.ts`: the preprocessors as `PreprocessorDefinition`s whose `handler`
 *   is the user's function, so a handler with the wrong signature fails `tsc` there;
 * - `src/reflection.gen.ts`: the reflection gate settings as data (`ReflectionConfig`).
 */
import type { IrPreprocessor, IrServer } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { tsLiteral } from '../safe.js';
import { arrayExpr, member, objectExpr } from './literal.js';
import { handlerImports } from './primitives.js';

/** Renders `src/preprocessors.gen.ts`; only called when the IR has preprocessors. */
export function emitPreprocessorsFile(ir: IrServer): string {
  return (
    TS_HEADER +
    "\nimport type { PreprocessorDefinition } from './runtime/preprocessors/preprocessors.js';\n" +
    handlerImports(ir.preprocessors.map((p) => p.handler)) +
    '\n/** The preprocessors of this server, in manifest order (they run in `after` order). Each handler gets `{ input }` and a context (`signal`, `log`). */\n' +
    `export const preprocessors: readonly PreprocessorDefinition[] = ${arrayExpr(ir.preprocessors.map(preprocessorExpr))};\n`
  );
}

function preprocessorExpr(p: IrPreprocessor): string {
  const fields: Array<[string, string]> = [['name', tsLiteral(p.name)]];
  if (p.description !== undefined || p.title !== undefined) fields.push(['description', tsLiteral(p.description ?? p.title)]);
  if (p.after.length > 0) fields.push(['after', tsLiteral(p.after)]);
  if (p.timeoutMs !== undefined) fields.push(['timeoutMs', tsLiteral(p.timeoutMs)]);
  if (p.onError !== undefined) fields.push(['onError', tsLiteral(p.onError)]);
  fields.push(['handler', member(p.handler.moduleAlias, p.handler.exportName)]);
  return objectExpr(fields);
}

/** Renders `src/reflection.gen.ts`; only called when the IR has a reflection gate. */
export function emitReflectionFile(ir: IrServer): string {
  const r = ir.reflection!;
  const gates = Object.fromEntries(
    Object.entries(r.gates).map(([tool, list]) => [
      tool,
      list.map((g) => {
        const o: Record<string, unknown> = { domain: g.domain, prompt: g.prompt, template: g.template };
        if (Object.keys(g.promptArgs).length > 0) o.promptArgs = g.promptArgs;
        if (g.scope !== undefined) o.scope = g.scope;
        if (g.mode !== undefined) o.mode = g.mode;
        if (g.description !== undefined) o.description = g.description;
        return o;
      }),
    ]),
  );
  const data: Record<string, unknown> = { storeDir: r.storeDir, mode: r.mode, scope: r.scope, domains: r.domains };
  if (r.justificationSchema !== undefined) data.justificationSchema = r.justificationSchema;
  data.gates = gates;
  if (r.toolsWithOutputSchema.length > 0) data.toolsWithOutputSchema = r.toolsWithOutputSchema;
  if (r.sampling !== undefined) data.sampling = r.sampling;
  if (r.maxJustificationBytes !== undefined) data.store = { maxJustificationBytes: r.maxJustificationBytes };
  return (
    TS_HEADER +
    "\nimport type { ReflectionConfig } from './runtime/reflection/reflection.js';\n\n" +
    '/** The reflection gate of this server (manifest `reflection`); `<envPrefix>_REFLECTION_DIR` overrides `storeDir` at run time. */\n' +
    `export const reflection: ReflectionConfig = ${tsLiteral(data, 2)};\n`
  );
}

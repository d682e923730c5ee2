/**
 * The operations extra tools call through `ctx.api` (manifest `extraTools[].uses`): each named
 * operationId must exist in the spec; the ones include/exclude leave out of the tool list are
 * still modelled (named, typed, with their security and argument rules) as API operations, so a
 * composite tool can hide the raw operations it orchestrates. Only what some tool `uses` is kept:
 * the generated project does not grow with the operations nobody calls.
 */
import type { Diagnostics, Location } from '../../core/diagnostics.js';
import { suggest } from '../../core/suggest.js';
import type { RawOperation } from '../../openapi/operations.js';
import type { IrExtraTool, IrOperationTool } from '../types.js';

/** The operations named in `uses`, by extra tool, and those among them that are not tools. */
export type UsedOperations = {
  /** Per extra tool (manifest order), the operationIds of its `uses` that exist. */
  readonly byTool: ReadonlyArray<readonly string[]>;
  /** Operations some tool uses that include/exclude leave out, in spec order. */
  readonly only: readonly RawOperation[];
};

/** Checks every `uses` entry (an unknown operationId is MCPGEN_UNKNOWN_OPERATION, with a did-you-mean). */
export function usedOperations(input: {
  extras: ReadonlyArray<{ uses?: string[] | undefined }>;
  ops: readonly RawOperation[];
  selected: readonly RawOperation[];
  locateManifest: (pointer: string) => Location;
  diagnostics: Diagnostics;
}): UsedOperations {
  const ids = new Set(input.ops.flatMap((o) => (o.operationId !== undefined ? [o.operationId] : [])));
  const used = new Set<string>();
  const byTool = input.extras.map((t, i) =>
    (t.uses ?? []).filter((id, j) => {
      if (ids.has(id)) {
        used.add(id);
        return true;
      }
      const near = suggest(id, ids);
      input.diagnostics.error(
        'MCPGEN_UNKNOWN_OPERATION',
        `extraTools[${i}].uses names operationId "${id}", which the spec does not have`,
        near ? `did you mean "${near}"?` : 'name operations by their operationId in the OpenAPI document',
        input.locateManifest(`/extraTools/${i}/uses/${j}`),
      );
      return false;
    }),
  );
  const listed = new Set(input.selected);
  const only = input.ops.filter((o) => o.operationId !== undefined && used.has(o.operationId) && !listed.has(o));
  return { byTool, only };
}

/**
 * Gives each extra tool with `uses` the operations it calls (from the tools and the API-only
 * operations) and the names of its `<Tool>Api` and `<Tool>Context` types, derived from its
 * `<Tool>Args` (identifiers decided in ir/tools/names.ts end in Args, Tool or Result: no clash).
 */
export function attachUses(extraTools: IrExtraTool[], byTool: ReadonlyArray<readonly string[]>, operations: readonly IrOperationTool[]): void {
  const byId = new Map(operations.flatMap((t) => (t.operationId !== undefined ? [[t.operationId, t] as const] : [])));
  extraTools.forEach((t, i) => {
    const ids = byTool[i] ?? [];
    if (ids.length === 0) return;
    const base = t.argsTypeName.replace(/Args$/, '');
    t.uses = ids.flatMap((id) => {
      const op = byId.get(id);
      return op
        ? [
            {
              operationId: id,
              tool: op.name,
              constName: op.constName,
              argsTypeName: op.argsTypeName,
              ...(op.outputSchema ? { resultTypeName: op.resultTypeName } : {}),
            },
          ]
        : [];
    });
    t.apiTypeName = `${base}Api`;
    t.contextTypeName = `${base}Context`;
  });
}

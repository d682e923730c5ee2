/**
 * The manifest's operation keys matched to the spec's operations: operationIds that are not unique
 * (each use an error), and each `overrides` key (an operationId or `METHOD /path`) resolved to its
 * operation, an unknown or second key for one operation being an error.
 */
import { type Diagnostics, escapePointerToken, type Location } from '../../core/diagnostics.js';
import { suggest } from '../../core/suggest.js';
import type { ResolvedManifest } from '../../manifest/load.js';
import type { Override } from '../../manifest/types.gen.js';
import type { LoadedSpec } from '../../openapi/load.js';
import type { RawOperation } from '../../openapi/operations.js';

/** What of the build's input the matching reads (a `BuildInput` of build.ts is one). */
type MatchInput = {
  manifest: Pick<ResolvedManifest, 'overrides'>;
  spec: LoadedSpec;
  diagnostics: Diagnostics;
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
};

/** Reports each operationId used by more than one operation. */
export function checkDuplicateOperationIds(ops: readonly RawOperation[], input: MatchInput): void {
  const byId = new Map<string, RawOperation[]>();
  for (const op of ops) if (op.operationId) byId.set(op.operationId, [...(byId.get(op.operationId) ?? []), op]);
  for (const [id, list] of byId) {
    if (list.length < 2) continue;
    for (const op of list) {
      const others = list.filter((o) => o !== op).map((o) => `${o.httpMethod} ${o.path}`);
      input.diagnostics.error(
        'MCPGEN_DUPLICATE_OPERATION_ID',
        `operationId "${id}" of ${op.httpMethod} ${op.path} is also used by ${others.join(', ')}`,
        'operationIds must be unique: rename one in the OpenAPI document',
        input.spec.source.locate(op.pointer + '/operationId'),
      );
    }
  }
}

/** Each `overrides` key matched to its operation, in key order; unknown keys and a second key for one operation are reported. */
export function resolveOverrides(ops: readonly RawOperation[], input: MatchInput): Map<RawOperation, { key: string; override: Override }> {
  const out = new Map<RawOperation, { key: string; override: Override }>();
  const overrides = input.manifest.overrides ?? {};
  for (const key of Object.keys(overrides).sort()) {
    const m = /^([A-Za-z]+)\s+(\/.*)$/.exec(key);
    const op = m ? ops.find((o) => o.method === m[1]!.toLowerCase() && o.path === m[2]) : ops.find((o) => o.operationId === key);
    if (!op) {
      const near = suggest(
        key,
        ops.flatMap((o) => (o.operationId ? [o.operationId] : [`${o.httpMethod} ${o.path}`])),
      );
      input.diagnostics.error(
        'MCPGEN_UNKNOWN_OPERATION',
        `override "${key}" matches no operation`,
        near ? `did you mean "${near}"?` : 'key overrides by operationId or by `METHOD /path`',
        input.locateManifest(`/overrides/${escapePointerToken(key)}`, { key: true }),
      );
      continue;
    }
    if (out.has(op)) {
      input.diagnostics.error(
        'MCPGEN_DUPLICATE_TOOL_NAME',
        `overrides "${out.get(op)!.key}" and "${key}" both target ${op.httpMethod} ${op.path}`,
        'merge them into one override',
        input.locateManifest(`/overrides/${escapePointerToken(key)}`, { key: true }),
      );
      continue;
    }
    out.set(op, { key, override: overrides[key]! });
  }
  return out;
}

/**
 * Long-running operations: an operation whose spec answers `202 Accepted` with a status URL
 * (`Location`, `Operation-Location` or `Azure-AsyncOperation`), or carries
 * `x-ms-long-running-operation: true` (AutoRest's mark, often with no header declared), becomes a
 * task tool: the generated server polls the status URL until the operation ends
 * (templates/runtime/operation/tasks-poll.ts) and lets clients run the call as an MCP task.
 *
 * Cancellation reaches the API only where the spec offers it: a `DELETE` declared on a path
 * template whose `GET` answers `202` — a status monitor, the resource that *is* the running
 * operation. Deleting anything else (a `DELETE /pets/{id}` that happens to match a status URL)
 * would destroy data, so no other `DELETE` is ever sent; without one, cancelling stops polling.
 */

import { isObject } from '../../core/json.js';
import type { RawOperation } from '../../openapi/operations.js';
import type { IrLongRunning, IrServer } from '../types.js';

const STATUS_HEADERS = new Set(['location', 'operation-location', 'azure-asyncoperation']);

/** Whether `op` is long-running: the AutoRest mark, or a `202` response declaring a status-URL header. */
export function isLongRunning(op: RawOperation, deref: (node: unknown) => unknown): boolean {
  if (op.node['x-ms-long-running-operation'] === true) return true;
  const responses = isObject(op.node.responses) ? op.node.responses : {};
  const accepted = deref(responses['202']);
  if (!isObject(accepted) || !isObject(accepted.headers)) return false;
  return Object.keys(accepted.headers).some((h) => STATUS_HEADERS.has(h.toLowerCase()));
}

/** The path templates of `ops` that are status monitors with a `DELETE`: their `GET` answers `202`. */
export function cancelPaths(ops: readonly RawOperation[], deref: (node: unknown) => unknown): string[] {
  const out = new Set<string>();
  for (const del of ops) {
    if (del.httpMethod !== 'DELETE') continue;
    const get = ops.find((o) => o.path === del.path && o.httpMethod === 'GET');
    const responses = get && isObject(get.node.responses) ? get.node.responses : undefined;
    if (responses && deref(responses['202']) !== undefined) out.add(del.path);
  }
  return [...out].sort();
}

/** The IR's `longRunning` of `op`, or undefined when it is not long-running. */
export function longRunning(op: RawOperation, ops: readonly RawOperation[], deref: (node: unknown) => unknown): IrLongRunning | undefined {
  if (!isLongRunning(op, deref)) return undefined;
  const paths = cancelPaths(ops, deref);
  return paths.length > 0 ? { cancelPaths: paths } : {};
}

/** Whether some tool of `ir` runs as an MCP task (a long-running operation, an extra tool's `task`): its bounds are settings. */
export function usesTasks(ir: Pick<IrServer, 'tools' | 'extraTools'>): boolean {
  return ir.tools.some((t) => t.longRunning !== undefined) || ir.extraTools.some((t) => t.task !== undefined);
}

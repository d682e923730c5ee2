/**
 * Emits `src/policy.gen.ts`: the resolved policy (audit settings, access rules as exact primitive
 * sets, limits per resolved tool names) in the shape of templates/runtime/policy-types.ts.
 */
import type { IrServer } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { tsLiteral } from '../safe.js';

/** Renders `src/policy.gen.ts`; only called when the IR has a policy. */
export function emitPolicyFile(ir: IrServer): string {
  return (
    TS_HEADER +
    "\nimport type { PolicyConfig } from './runtime/policy/policy-types.js';\n\n" +
    '/** The policy of this server (manifest `policy`): audit trail, access rules resolved to the primitives they match, limits per tool. */\n' +
    `export const policy: PolicyConfig = ${tsLiteral(ir.policy!, 2)};\n`
  );
}

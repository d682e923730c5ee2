/**
 * Emits `src/code-signatures.gen.ts` for code mode (manifest `discovery: code`): tool name ⇒ the
 * compact TypeScript signature of its operation (ir/features/code-signatures.ts), which `search_tools` and
 * `describe_tool` give the model. Built here, from the same schemas as the typed `ctx.api`.
 */
import { codeSignatures } from '../../ir/features/code-signatures.js';
import type { IrServer } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { tsLiteral } from '../safe.js';

/** Renders `src/code-signatures.gen.ts`. */
export function emitCodeSignaturesFile(ir: IrServer): string {
  return `${TS_HEADER}\n/** Each operation's signature as code calls it (\`api.<name>(args): Promise<result>\`), by tool name. */\nexport const codeSignatures: Readonly<Record<string, string>> = ${tsLiteral(codeSignatures(ir), 2)};\n`;
}

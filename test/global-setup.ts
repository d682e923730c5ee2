/**
 * Builds dist/ once before the tests (tsc, then the CLI bundle that bin/mcpgen.js loads), so CLI
 * tests always run the current sources through bin/mcpgen.js.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit' });
  execFileSync(process.execPath, [path.join(root, 'scripts/bundle.mjs')], { stdio: 'inherit' });
}

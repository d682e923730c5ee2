/**
 * The manifest's `package.dependencies` / `package.devDependencies` against what the generated
 * project declares itself: mcpgen's runtime is tested with its own versions only, so a name it
 * declares cannot be added (or re-pinned) from the manifest; and one package is named in one
 * section only. Both are MCPGEN_DEPENDENCY_CONFLICT at the manifest key, before anything is written.
 */
import { type Diagnostics, type Location, pointer } from '../core/diagnostics.js';
import { type DependencySections, generatedDependencies, manifestDependencies } from '../emit/project/dependencies.js';
import type { IrServer } from '../ir/types.js';

/** Options of {@link checkDependencies}. */
export type CheckDependenciesOptions = {
  ir: IrServer;
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
};

const SECTIONS = ['dependencies', 'devDependencies'] as const satisfies ReadonlyArray<keyof DependencySections>;

/** Reports every manifest dependency that collides with mcpgen's, or that both sections name. */
export function checkDependencies(opts: CheckDependenciesOptions): void {
  const own = generatedDependencies(opts.ir);
  const user = manifestDependencies(opts.ir);
  for (const section of SECTIONS) {
    for (const name of Object.keys(user[section]).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
      const at = opts.locateManifest(pointer(['package', section, name]), { key: true });
      const mine = SECTIONS.find((s) => Object.prototype.hasOwnProperty.call(own[s], name));
      if (mine !== undefined) {
        const usable = mine === 'dependencies' ? `handlers can import ${name} as it is` : `it is there for the build already`;
        opts.diagnostics.error(
          'MCPGEN_DEPENDENCY_CONFLICT',
          `package.${section} names ${JSON.stringify(name)}, which the generated project declares itself (${name} ${own[mine][name]} in ${mine})`,
          `remove it from package.${section}: ${usable}; mcpgen keeps the version its runtime is tested with`,
          at,
        );
      } else if (section === 'devDependencies' && Object.prototype.hasOwnProperty.call(user.dependencies, name)) {
        opts.diagnostics.error(
          'MCPGEN_DEPENDENCY_CONFLICT',
          `package.devDependencies names ${JSON.stringify(name)}, which package.dependencies names too`,
          'keep it in one of them: dependencies for what handlers import when the server runs, devDependencies for what only the build needs',
          at,
        );
      }
    }
  }
}

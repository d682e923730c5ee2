/**
 * The generated package.json's `dependencies` and `devDependencies`: the ones mcpgen declares for
 * the runtime it copies (./versions.ts), and the manifest's `package.dependencies` /
 * `package.devDependencies` for the user's handlers. A name mcpgen declares cannot come from the
 * manifest too (MCPGEN_DEPENDENCY_CONFLICT, checked in write/dependencies.ts): the runtime is
 * tested against mcpgen's versions only.
 */
import type { IrServer } from '../../ir/types.js';
import { serverParts } from '../ts/entry.js';
import { GENERATED_DEPENDENCIES, GENERATED_DEV_DEPENDENCIES, OPTIONAL_DEPENDENCIES } from './versions.js';

/** A package.json dependency section: package name ⇒ version range. */
export type DependencyMap = Record<string, string>;

/** The two sections of package.json that name packages. */
export type DependencySections = { dependencies: DependencyMap; devDependencies: DependencyMap };

const byCodeUnit = ([a]: [string, string], [b]: [string, string]) => (a < b ? -1 : a > b ? 1 : 0);
const sorted = (map: DependencyMap): DependencyMap => Object.fromEntries(Object.entries(map).sort(byCodeUnit));

/**
 * What mcpgen declares itself, sorted: the fixed runtime dependencies plus handlebars for prompts
 * of any kind (runtime/primitives/prompts.ts: manifest prompts, gate prompts, `with_context`) and gate prompt
 * arguments, the Porter stemmer for search mode, the OpenTelemetry API for the policy layer, and the
 * JMESPath evaluator when some tool takes a projection (runtime/operation/projection.ts).
 */
export function generatedDependencies(ir: IrServer): DependencySections {
  const deps: DependencyMap = { ...GENERATED_DEPENDENCIES };
  const parts = serverParts(ir);
  // every project ships the library (src/index.ts, runtime/library.ts), which serves registered prompts
  deps.handlebars = OPTIONAL_DEPENDENCIES.handlebars;
  if (parts.search) deps.stemmer = OPTIONAL_DEPENDENCIES.stemmer;
  if (parts.code) {
    deps['quickjs-emscripten'] = OPTIONAL_DEPENDENCIES['quickjs-emscripten'];
    deps.sucrase = OPTIONAL_DEPENDENCIES.sucrase;
  }
  if (ir.policy !== undefined) {
    deps['@opentelemetry/api'] = OPTIONAL_DEPENDENCIES['@opentelemetry/api'];
    deps['@opentelemetry/api-logs'] = OPTIONAL_DEPENDENCIES['@opentelemetry/api-logs'];
  }
  if (parts.projection) deps['@jmespath-community/jmespath'] = OPTIONAL_DEPENDENCIES['@jmespath-community/jmespath'];
  return { dependencies: sorted(deps), devDependencies: sorted({ ...GENERATED_DEV_DEPENDENCIES }) };
}

/** The manifest's `package.dependencies` and `package.devDependencies` (empty when absent). */
export function manifestDependencies(ir: IrServer): DependencySections {
  const pkg = ir.package;
  return { dependencies: { ...pkg?.dependencies }, devDependencies: { ...pkg?.devDependencies } };
}

/**
 * Both sections of the generated package.json, sorted by name (as npm keeps them): mcpgen's
 * entries, then the manifest's for names mcpgen does not declare (a name it declares is an error
 * before anything is emitted; mcpgen's version would win).
 */
export function packageDependencies(ir: IrServer): DependencySections {
  const own = generatedDependencies(ir);
  const declared = new Set([...Object.keys(own.dependencies), ...Object.keys(own.devDependencies)]);
  const user = manifestDependencies(ir);
  const add = (section: keyof DependencySections) =>
    sorted({ ...Object.fromEntries(Object.entries(user[section]).filter(([name]) => !declared.has(name))), ...own[section] });
  return { dependencies: add('dependencies'), devDependencies: add('devDependencies') };
}

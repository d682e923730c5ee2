/**
 * An IR built in memory from spec and manifest text, as the unit tests of the IR builder need it:
 * no files, no `compile()`, the manifest's defaults filled with small test values. Diagnostics
 * point into the given manifest text (`mcpgen.yaml`) and spec text.
 */
import { Diagnostics } from '../../src/core/diagnostics.js';
import { type BuildManifest, buildIr } from '../../src/ir/build.js';
import type { IrServer } from '../../src/ir/types.js';
import type { SpecVersion } from '../../src/openapi/load.js';
import { parseYamlSource } from '../../src/source/source.js';

/** The manifest settings every test build starts from. */
export const TEST_MANIFEST: BuildManifest = {
  name: 'x',
  version: '1.0.0',
  envPrefix: 'X',
  maxToolNameLength: 64,
  maxDescriptionLength: 1024,
  timeoutMs: 1000,
  maxResponseBytes: 10_000,
};

export type IrFromText = {
  /** The spec, YAML or JSON text. */
  spec: string;
  /** Its file name in locations (`openapi.yaml`). */
  specFile?: string;
  /** Its version; by default `2.0` for a document with `swagger`, else `3.0`. */
  version?: SpecVersion;
  /** The manifest's YAML text, laid over `manifest` (keys as the builder reads them, unless `fromYaml` maps them). */
  manifestYaml?: string;
  /** Settings over {@link TEST_MANIFEST}, under the YAML's. */
  manifest?: Partial<BuildManifest>;
  /** Maps the parsed manifest YAML to builder settings (default: as is). */
  fromYaml?: (value: Record<string, unknown>) => Partial<BuildManifest>;
};

/** Builds the IR of `opts.spec` under `opts.manifestYaml`; the diagnostics are returned, not checked. */
export function irFromText(opts: IrFromText): { ir: IrServer; diagnostics: Diagnostics } {
  const diagnostics = new Diagnostics();
  const spec = parseYamlSource({ file: opts.specFile ?? 'openapi.yaml', text: opts.spec, diagnostics, syntaxCode: 'MCPGEN_SPEC_SYNTAX' })!;
  const mf = parseYamlSource({ file: 'mcpgen.yaml', text: opts.manifestYaml || '{}', diagnostics, syntaxCode: 'MCPGEN_MANIFEST_SYNTAX' })!;
  const yaml = (mf.value ?? {}) as Record<string, unknown>;
  const manifest: BuildManifest = { ...TEST_MANIFEST, ...opts.manifest, ...(opts.fromYaml ? opts.fromYaml(yaml) : yaml) };
  const document = spec.value as Record<string, unknown>;
  const version = opts.version ?? (typeof document.swagger === 'string' ? '2.0' : '3.0');
  const ir = buildIr({ manifest, locateManifest: (p, o) => mf.locate(p, o), spec: { version, document, source: spec }, diagnostics });
  return { ir, diagnostics };
}

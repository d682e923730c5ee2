/**
 * Stage 4 (emit): IR → virtual file tree (relative POSIX path → content). Pure: no I/O
 * besides reading mcpgen's own templates, and the same IR always gives the same bytes.
 */

import { usesCode, usesSearch } from '../ir/features/discovery.js';
import type { IrServer } from '../ir/types.js';
import { emitCompose } from './project/compose.js';
import { emitGitignore, emitPackageJson, emitReadme, emitTsconfig } from './project/files.js';
import { emitBundleManifest, emitDockerfile, emitDockerignore, emitEnvExample, emitMcpbignore, emitMcpJson } from './project/ship.js';
import { runtimeFiles } from './runtime.js';
import type { RuntimeImportMemo } from './runtime-memo.js';
import { emitConcernsFile } from './ts/concerns.js';
import { emitConfigFile, emitLibraryIndex, emitServerEntry } from './ts/entry.js';
import { emitPreprocessorsFile, emitReflectionFile } from './ts/gates.js';
import { emitCustomServerEntry } from './ts/library.js';
import { emitPolicyFile } from './ts/policy.js';
import { emitExtraToolsFile, emitPromptsFile, emitResourcesFile } from './ts/primitives.js';
import { handlerExports } from './ts/stubs.js';
import { emitToolsFile } from './ts/tools.js';

/**
 * The emitters of the discovery modes, loaded only by a build that uses them (search mode's pull in
 * the WordNet lexicon, the stemmer and the runtime's index builder; code mode's the signatures).
 */
export interface ModeEmitters {
  searchIndex?: (ir: IrServer) => string;
  codeSignatures?: (ir: IrServer) => string;
}

/** Loads the emitters {@link emitProject} needs for `ir`'s discovery modes. */
export async function loadModeEmitters(ir: IrServer): Promise<ModeEmitters> {
  return {
    ...(usesSearch(ir) ? { searchIndex: (await import('./ts/search.js')).emitSearchIndexFile } : {}),
    ...(usesCode(ir) ? { codeSignatures: (await import('./ts/code-mode.js')).emitCodeSignaturesFile } : {}),
  };
}

function modeEmitter(emit: ((ir: IrServer) => string) | undefined, what: string): (ir: IrServer) => string {
  if (emit === undefined) throw new Error(`emitProject: ${what} needs the emitters of loadModeEmitters(ir)`);
  return emit;
}

/**
 * Renders every generated file of the project, sorted by path (`modes`: {@link loadModeEmitters};
 * `importMemo`: the runtime's import graph kept by the build cache, ./runtime-memo.ts).
 */
export function emitProject(ir: IrServer, modes: ModeEmitters = {}, importMemo?: RuntimeImportMemo): Map<string, string> {
  const files = new Map<string, string>([
    ['.dockerignore', emitDockerignore()],
    ['.env.example', emitEnvExample(ir)],
    ['.gitignore', emitGitignore()],
    ['.mcp.json', emitMcpJson(ir)],
    ['.mcpbignore', emitMcpbignore()],
    ['Dockerfile', emitDockerfile(ir)],
    ['README.md', emitReadme(ir)],
    ['manifest.json', emitBundleManifest(ir)],
    ['package.json', emitPackageJson(ir)],
    ['tsconfig.json', emitTsconfig(ir)],
    ['src/config.gen.ts', emitConfigFile(ir)],
    // the bin: one call (entry: custom ⇒ the user's src/main.ts registers first)
    ['src/server.ts', ir.entry === 'custom' ? emitCustomServerEntry() : emitServerEntry(ir)],
    // every project is a library too: `import { createServer } from '<name>'`
    ['src/index.ts', emitLibraryIndex(ir)],
    ['src/tools.gen.ts', emitToolsFile(ir)],
  ]);
  if (ir.extraTools.length > 0) files.set('src/extra-tools.gen.ts', emitExtraToolsFile(ir));
  if (ir.prompts.length > 0) files.set('src/prompts.gen.ts', emitPromptsFile(ir));
  if (ir.resources.length + ir.resourceTemplates.length > 0) files.set('src/resources.gen.ts', emitResourcesFile(ir));
  if (ir.concerns !== undefined) files.set('src/concerns.gen.ts', emitConcernsFile(ir));
  if (ir.preprocessors.length > 0) files.set('src/preprocessors.gen.ts', emitPreprocessorsFile(ir));
  if (ir.reflection !== undefined) files.set('src/reflection.gen.ts', emitReflectionFile(ir));
  if (usesSearch(ir)) files.set('src/search-index.gen.ts', modeEmitter(modes.searchIndex, 'search mode')(ir));
  if (usesCode(ir)) files.set('src/code-signatures.gen.ts', modeEmitter(modes.codeSignatures, 'code mode')(ir));
  if (ir.policy !== undefined) files.set('src/policy.gen.ts', emitPolicyFile(ir));
  // three replicas, Redis and a reverse proxy (docs/deploy.md)
  if (ir.deploy === 'compose') files.set('compose.yaml', emitCompose(ir));
  // the host-side helper is for the user's host, not the server: shipped, imported by nothing
  // shipped although nothing generated imports them: the preprocessor host helper, the audit chain checker
  const hostHelpers = [
    ...(ir.preprocessors.length > 0 ? ['preprocessors/preprocessors-host.ts'] : []),
    ...(ir.policy?.audit?.chain === true ? ['policy/verify-audit.ts'] : []),
  ];
  // the one runtime module the user's handler files (and an `entry: custom` src/main.ts) import: its path is stable
  const userCode = handlerExports(ir).size > 0 || ir.entry === 'custom' ? ['handlers.ts'] : [];
  for (const [file, content] of runtimeFiles([...files.values()], [...hostHelpers, ...userCode], importMemo)) files.set(file, content);
  const sorted = [...files.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return new Map(sorted.map((k) => [k, normalizeNewlines(files.get(k)!)]));
}

/** LF line ends and exactly one final newline (trimmed by hand: `/\n*$/` tries every position of a multi-megabyte file). */
function normalizeNewlines(text: string): string {
  const lf = text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
  let end = lf.length;
  while (end > 0 && lf.charCodeAt(end - 1) === 0x0a) end--;
  // most files end in exactly one newline already: no copy of a multi-megabyte text then
  return end === lf.length - 1 ? lf : lf.slice(0, end) + '\n';
}

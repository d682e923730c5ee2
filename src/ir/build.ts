/**
 * Stage 3 (model): OpenAPI document + manifest → IR. The only stage that reads both.
 */
import { resolveResults } from '../manifest/load.js';
import type { BuildInput } from './build-input.js';
import { attachUses } from './features/api-uses.js';
import { buildConcerns } from './features/concerns.js';
import { resolveDiscovery } from './features/discovery.js';
import { handlerResolver } from './features/handlers.js';
import { buildPolicy } from './features/policy.js';
import { buildPreprocessors, WITH_CONTEXT_PROMPT } from './features/preprocessors.js';
import { checkPresetCoverage } from './features/preset-coverage.js';
import { buildPrimitives, objectSchemaChecker } from './features/primitives.js';
import { buildReflection, PERSIST_TOOL_NAME } from './features/reflection.js';
import { modelOperations } from './operations-model.js';
import { DEFAULT_LIMITS } from './surface/fit.js';
import { judgeSurface } from './surface/judge.js';
import { measureSurface } from './surface/measure.js';
import { assignDefTypes } from './tools/def-types.js';
import { ExcludedReferences } from './tools/excluded.js';
import { resolveResultPresets, serverResultPolicy } from './tools/results.js';
import type { IrServer } from './types.js';

export type { BuildInput, BuildManifest } from './build-input.js';

/** Builds the IR; problems go to `diagnostics` (the IR is still returned for reporting). */
export function buildIr(input: BuildInput): IrServer {
  const { manifest, diagnostics, locateManifest } = input;
  // the operation tools (./operations-model.ts), from the build cache's memo when it holds them
  const part = input.memo ? input.memo.operations(input, modelOperations) : modelOperations(input);
  const { model } = part;
  const { tools, apiOperations, toolNames } = model;
  const excluded = new ExcludedReferences(new Set(model.excluded.toolNames));
  for (const e of model.excluded.entries) excluded.add(e.pointer, e.label);
  const results = manifest.results ?? resolveResults(undefined);
  const resultExamples = model.resultExamples;

  const handlers = handlerResolver({ manifest, locateManifest, diagnostics });
  const primitives = buildPrimitives({
    manifest: { ...manifest, dir: manifest.dir ?? '.' },
    handlers,
    extraToolIds: model.extraToolIds,
    locateManifest,
    diagnostics,
    parameterEnum: part.parameterEnum,
  });
  // persist_justification is a tool too when the reflection gate has a host flow
  const hostFlow = manifest.reflection !== undefined && manifest.reflection.mode !== 'sampling';
  const preprocessors = buildPreprocessors({
    manifest,
    toolNames: hostFlow ? [...toolNames, PERSIST_TOOL_NAME] : toolNames,
    handlers,
    locateManifest,
    diagnostics,
  });
  const manifestPrompts = (manifest.prompts ?? []).map((p) => p.name);
  if (preprocessors.length > 0) {
    const i = manifestPrompts.indexOf(WITH_CONTEXT_PROMPT);
    if (i >= 0)
      diagnostics.error(
        'MCPGEN_DUPLICATE_PRIMITIVE',
        `prompt name "${WITH_CONTEXT_PROMPT}" is taken by the preprocessors' prompt`,
        'rename this prompt',
        locateManifest(`/prompts/${i}/name`),
      );
  }
  const reflection = buildReflection({
    manifest,
    tools: [...tools, ...primitives.extraTools],
    promptNames: [...manifestPrompts, ...(preprocessors.length > 0 ? [WITH_CONTEXT_PROMPT] : [])],
    checkSchema: objectSchemaChecker(diagnostics, locateManifest),
    locateManifest,
    diagnostics,
    excluded,
    ...(manifest.entry === 'custom' ? { runTimeTools: true } : {}),
  });
  const concerns = buildConcerns({
    manifest: { ...manifest, exposeInMeta: manifest.exposeInMeta === true, enforce: manifest.enforce === true },
    known: {
      tools: toolNames,
      // from the manifest, so an entry that failed its own checks does not also fail its mapping
      prompts: [...manifestPrompts, ...(preprocessors.length > 0 ? [WITH_CONTEXT_PROMPT] : [])],
      resources: (manifest.resources ?? []).map((r) => r.uri),
      resourceTemplates: (manifest.resourceTemplates ?? []).map((t) => t.uriTemplate),
    },
    // gate prompts follow their tools: with `enforce`, a hint must never point at a prompt the session may not get
    gatePrompts: new Map(Object.entries(reflection?.gates ?? {}).flatMap(([tool, gates]) => gates.map((g) => [g.prompt, tool] as const))),
    locateManifest,
    diagnostics,
    excluded,
  });
  checkPresetCoverage({ concerns, tools: toolNames, locateManifest, diagnostics });
  attachUses(primitives.extraTools, model.usesByTool, [...tools, ...apiOperations]);

  const server: IrServer = {
    kind: 'server',
    name: manifest.name,
    version: manifest.version,
    envPrefix: manifest.envPrefix,
    timeoutMs: manifest.timeoutMs,
    maxResponseBytes: manifest.maxResponseBytes,
    // the manifest schema's default (the runtime's DEFAULT_MAX_IN_FLIGHT_BYTES), for IR built without a resolved manifest
    maxInFlightBytes: manifest.maxInFlightBytes ?? 67_108_864,
    ...(manifest.uploads?.localFiles ? { uploads: { root: manifest.uploads.root ?? '.' } } : {}),
    results: serverResultPolicy(results),
    tools,
    // after every schema is final: the TS names of all `$defs`, collision-free
    sharedDefs: assignDefTypes({ tools: [...tools, ...apiOperations], extraTools: primitives.extraTools }),
    securitySchemes: model.securitySchemes,
    ...primitives,
    preprocessors,
  };
  if (concerns !== undefined) server.concerns = concerns;
  if (apiOperations.length > 0) server.apiOperations = apiOperations;
  Object.assign(server, resolveDiscovery(manifest, Object.keys(concerns?.presets ?? {}), { locate: locateManifest, diagnostics }));
  const resultPresets = resolveResultPresets(manifest.resultPresets, Object.keys(concerns?.presets ?? {}), { locate: locateManifest, diagnostics });
  if (resultPresets !== undefined) server.resultPresets = resultPresets;
  if (input.exampleTokens) server.resultExamples = resultExamples;
  if (manifest.argumentRules !== undefined) server.argumentRules = part.finishRules();
  if (reflection !== undefined) server.reflection = reflection;
  if (manifest.description !== undefined) server.description = manifest.description;
  if (manifest.package !== undefined) server.package = { ...manifest.package };
  // the project is a library too, and src/main.ts registers primitives in code (runtime/library.ts)
  if (manifest.entry === 'custom') server.entry = 'custom';
  if (manifest.deploy === 'compose') server.deploy = 'compose';
  // over the final primitives: every tool, prompt and resource is named and mapped by now
  if (manifest.policy !== undefined) server.policy = buildPolicy({ policy: manifest.policy, server, locateManifest, diagnostics, excluded });
  const stale = excluded.report(diagnostics, locateManifest);
  if (stale.length > 0) server.excludedReferences = stale.map((e) => e.pointer);
  const baseUrl = manifest.baseUrl ?? model.specBaseUrl;
  if (manifest.httpAuth !== undefined && Object.keys(manifest.httpAuth).length > 0) server.httpAuth = manifest.httpAuth;
  if (baseUrl !== undefined) server.baseUrl = baseUrl;
  else {
    diagnostics.warn(
      'MCPGEN_NO_BASE_URL',
      'the spec gives no absolute server URL and the manifest sets no `baseUrl`',
      `set \`baseUrl\` in the manifest; if the URL is known only where the server runs (${manifest.envPrefix}_BASE_URL), acknowledge this with \`diagnostics: { MCPGEN_NO_BASE_URL: off }\``,
      locateManifest(''),
    );
  }
  server.surface = measureSurface(server, model.fitted);
  // the verdict on bytes and tool counts; tokens are judged once counted (compile.ts)
  const verdict = judgeSurface({
    surface: server.surface,
    budget: manifest.budget ?? { maxListBytes: DEFAULT_LIMITS.maxListBytes },
    measure: 'bytes',
    declaredPresets: Object.keys(server.concerns?.presets ?? {}),
    locate: locateManifest,
  });
  for (const d of verdict) diagnostics.add(d);
  return server;
}

export { truncateDescription } from './text.js';

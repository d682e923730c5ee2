/**
 * Emits the server entry (`src/server.ts`) and its settings (`src/config.gen.ts`). The entry
 * wires up what the manifest uses (extra tools, prompts, resources, concerns) and nothing else,
 * so a project copies only the runtime modules, and needs only the dependencies, it uses.
 */

import { serverVariables, type Variable, type VariableSources, type VariableTool } from '../../../templates/runtime/process/variables.js';
import { usesCode, usesSearch } from '../../ir/features/discovery.js';
import { usesTasks } from '../../ir/tools/long-running.js';
import type { IrServer } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { tsLiteral } from '../safe.js';
import { emitLibraryEntry } from './library.js';

/** `{ fromClient }` of a scheme whose credential an HTTP client sends in a header of its own, else nothing. */
function fromClient(s: { readonly fromClient?: string }): { fromClient?: string } {
  return s.fromClient !== undefined ? { fromClient: s.fromClient } : {};
}

/** The generated `config` (runtime `ServerConfig`) of `ir`, as data. */
export function serverConfig(ir: IrServer): Record<string, unknown> & VariableSources['config'] & { name: string; version: string } {
  const config: Record<string, unknown> = { name: ir.name, version: ir.version };
  if (ir.description !== undefined) config.instructions = ir.description;
  if (ir.baseUrl !== undefined) config.baseUrl = ir.baseUrl;
  config.envPrefix = ir.envPrefix;
  config.timeoutMs = ir.timeoutMs;
  config.maxResponseBytes = ir.maxResponseBytes;
  config.maxInFlightBytes = ir.maxInFlightBytes;
  if (ir.uploads) config.uploads = ir.uploads;
  config.results = { maxTokens: ir.results.maxTokens, compact: ir.results.compact, omit: ir.results.omit, maxStringChars: ir.results.maxStringChars };
  if (ir.resultPresets) config.resultPresets = ir.resultPresets;
  if (ir.httpAuth) config.oauth = ir.httpAuth;
  if (usesCode(ir)) config.codeMode = true;
  if (usesTasks(ir)) config.taskTools = true;
  if (usesSearch(ir)) config.searchMode = true;
  if (ir.securitySchemes.length > 0) {
    // variable NAMES only: secret values exist in the server's environment, never in its source
    config.securitySchemes = ir.securitySchemes.map((s) => {
      switch (s.kind) {
        case 'apiKey':
          return { kind: s.kind, name: s.name, in: s.in, paramName: s.paramName, env: { apiKey: s.env.apiKey }, ...fromClient(s) };
        case 'bearer':
          return { kind: s.kind, name: s.name, env: { token: s.env.token }, ...fromClient(s), ...(s.exchange !== undefined ? { exchange: s.exchange } : {}) };
        case 'basic':
          return { kind: s.kind, name: s.name, env: { username: s.env.username, password: s.env.password }, ...fromClient(s) };
        case 'oauth2ClientCredentials': {
          const o: Record<string, unknown> = { kind: s.kind, name: s.name, tokenUrl: s.tokenUrl };
          if (s.scopes.length > 0) o.scopes = s.scopes;
          o.env = { clientId: s.env.clientId, clientSecret: s.env.clientSecret };
          return o;
        }
      }
    });
  }
  return config as ReturnType<typeof serverConfig>;
}

/** The tools of `ir` as far as the variables they read go (the runtime `VariableTool`). */
export function variableTools(ir: IrServer): VariableTool[] {
  return ir.tools.map((t) => ({ name: t.name, http: { params: t.params, ...(t.body ? { body: t.body } : {}) }, security: t.security }));
}

/** Every environment variable the generated server reads, computed by the runtime's own registry. */
export function irVariables(ir: IrServer): Variable[] {
  const audit = ir.policy?.audit;
  return serverVariables({
    config: serverConfig(ir),
    tools: variableTools(ir),
    ...(ir.reflection ? { reflectionDir: ir.reflection.storeDir } : {}),
    ...(audit ? { audit: audit.file !== undefined ? { file: audit.file } : {} } : {}),
  });
}

/** Renders `src/config.gen.ts`: the static server settings, as data. */
export function emitConfigFile(ir: IrServer): string {
  const config = serverConfig(ir);
  return (
    TS_HEADER +
    "\nimport type { ServerConfig } from './runtime/core/types.js';\n\n" +
    '/** Settings from the manifest; `<envPrefix>_*` environment variables override them at run time. */\n' +
    `export const config: ServerConfig = ${tsLiteral(config, 2)};\n`
  );
}

/** Which optional parts a server has, as the entry and package.json need to know. */
export type ServerParts = {
  extraTools: boolean;
  prompts: boolean;
  resources: boolean;
  templates: boolean;
  concerns: boolean;
  tools: boolean;
  preprocessors: boolean;
  reflection: boolean;
  /** Prompts of any origin: the manifest's, gate prompts, `with_context`. */
  anyPrompts: boolean;
  /** Search mode (`discovery: search`), for the server or any preset. */
  search: boolean;
  /** Search mode per concern preset (`discovery.presets`): the active preset decides what `tools/list` lists. */
  searchPresets: boolean;
  /** Code mode (`discovery: code`, for the server or a preset): search_tools, describe_tool and a sandboxed execute. */
  code: boolean;
  /** The policy layer (`policy`: audit, access, limits). */
  policy: boolean;
  /** Some tool takes a projection argument (`results.projection`): the server loads the JMESPath evaluator. */
  projection: boolean;
  /** Some prompt argument or template variable has completion values: `completion/complete` and the `completions` capability. */
  completions: boolean;
  /** Some prompt message embeds a declared resource: prompts read it through the resources' reader. */
  promptReadsResources: boolean;
  /** Some resource can change (a handler computes it, or a template's): resource subscriptions and the `subscribe` capability. */
  subscriptions: boolean;
  /** Some prompt, resource or template needs OAuth scopes (manifest `scopes`). */
  scoped: boolean;
};

/** The optional parts of `ir`. */
export function serverParts(ir: IrServer): ServerParts {
  const preprocessors = ir.preprocessors.length > 0;
  const reflection = ir.reflection !== undefined;
  const gatePrompts = reflection && Object.keys(ir.reflection!.gates).length > 0;
  return {
    extraTools: ir.extraTools.length > 0,
    prompts: ir.prompts.length > 0,
    resources: ir.resources.length > 0,
    templates: ir.resourceTemplates.length > 0,
    concerns: ir.concerns !== undefined,
    tools: ir.tools.length + ir.extraTools.length > 0 || (reflection && ir.reflection!.mode !== 'sampling'),
    preprocessors,
    reflection,
    anyPrompts: ir.prompts.length > 0 || gatePrompts || preprocessors,
    search: usesSearch(ir),
    searchPresets: ir.presetDiscovery !== undefined,
    code: usesCode(ir),
    policy: ir.policy !== undefined,
    projection: ir.tools.some((t) => t.projection !== undefined),
    completions: ir.prompts.some((p) => p.arguments.some((a) => a.complete !== undefined)) || ir.resourceTemplates.some((t) => t.complete !== undefined),
    promptReadsResources: ir.prompts.some((p) => p.messages.some((m) => 'resource' in m && 'read' in m.resource)),
    subscriptions: ir.resources.some((r) => r.content.kind === 'handler') || ir.resourceTemplates.length > 0,
    scoped: [...ir.prompts, ...ir.resources, ...ir.resourceTemplates].some((x) => x.scopes !== undefined),
  };
}

/** Renders `src/index.ts`, the package's library entry (every project): `createServer()`, ./library.ts. */
export function emitLibraryIndex(ir: IrServer): string {
  return emitServerEntry({ ...ir, entry: 'custom' });
}

/**
 * Renders `src/server.ts`, the bin: one `main` call over the generated wiring — or, for
 * `entry: custom` (and for `src/index.ts` of every project, ./library.ts), the library entry.
 */
export function emitServerEntry(ir: IrServer): string {
  const p = serverParts(ir);
  const hasResources = p.resources || p.templates;
  const imports: string[] = [];
  const plain = !p.extraTools && !p.anyPrompts && !hasResources && !p.concerns && !p.reflection && !p.preprocessors && !p.policy;
  if (!plain) imports.push("import type { ServerCapabilities } from '@modelcontextprotocol/server';");
  if (p.concerns) imports.push("import { concerns } from './concerns.gen.js';");
  imports.push("import { config } from './config.gen.js';");
  if (p.extraTools) imports.push("import { extraTools } from './extra-tools.gen.js';");
  if (p.preprocessors) imports.push("import { preprocessors } from './preprocessors.gen.js';");
  if (p.policy) imports.push("import { policy } from './policy.gen.js';");
  if (p.prompts) imports.push("import { prompts } from './prompts.gen.js';");
  if (p.reflection) imports.push("import { reflection } from './reflection.gen.js';");
  if (hasResources)
    imports.push(
      `import { ${[p.resources ? 'resources' : '', p.templates ? 'resourceTemplates' : ''].filter(Boolean).join(', ')} } from './resources.gen.js';`,
    );
  if (p.concerns) imports.push("import { concernCapability, installConcerns } from './runtime/concerns/concern-protocol.js';");
  imports.push("import { main } from './runtime/main.js';");
  if (p.policy) imports.push("import { createPolicy } from './runtime/policy/policy.js';");
  if (p.preprocessors)
    imports.push("import { installPreprocessors, preprocessorCapability, withContextPrompt } from './runtime/preprocessors/preprocessors-protocol.js';");
  // registers the JMESPath evaluator with the result pipeline; servers without projection never load it
  if (p.projection) imports.push("import './runtime/operation/projection.js';");
  if (p.completions) imports.push("import { installCompletions } from './runtime/primitives/completion.js';");
  if (p.anyPrompts) imports.push("import { installPrompts } from './runtime/primitives/prompts.js';");
  if (p.concerns) imports.push("import { composeGates } from './runtime/core/primitive-gate.js';");
  if (p.reflection) imports.push("import { ReflectionGate, reflectionConfigFromEnv } from './runtime/reflection/reflection.js';");
  if (hasResources) imports.push("import { installResources } from './runtime/primitives/resources.js';");
  if (p.code) imports.push("import { codeLimitsFromEnv, createCodeMode } from './runtime/code/code-mode.js';");
  if (p.search) imports.push("import { createToolSearch } from './runtime/search/search.js';");
  if (p.subscriptions) imports.push("import { installSubscriptions, resourceChanges } from './runtime/primitives/subscriptions.js';");
  if (p.search) imports.push(`import { ${p.searchPresets || p.code ? 'discovery, ' : ''}searchIndex } from './search-index.gen.js';`);
  if (p.code) imports.push("import { codeSignatures } from './code-signatures.gen.js';");
  imports.push("import { tools } from './tools.gen.js';");
  const head = '#!/usr/bin/env node\n' + TS_HEADER + '\n' + imports.join('\n') + '\n\n';
  const call =
    '// --help, --version and --print-config answer on stdout and exit; otherwise the server serves MCP\n// over stdio, or over Streamable HTTP with --transport http (see --help)\n';
  // code mode: the search tools with code mode's signatures and sandbox, its bounds from <PREFIX>_CODE_* (runtime/code/code-mode.ts)
  const toolSearchDecl =
    p.searchPresets || p.code
      ? `/** ${p.code ? 'Search and code mode' : 'Search mode'}, per concern preset (manifest \`discovery\`): shared by every instance. */\nconst toolSearch = ${p.code ? '{ ...createToolSearch(searchIndex, discovery), code: createCodeMode(codeSignatures, { limits: () => codeLimitsFromEnv(config.envPrefix, process.env) }) }' : 'createToolSearch(searchIndex, discovery)'};\n\n`
      : '';
  if (plain && ir.entry !== 'custom')
    return (
      head +
      toolSearchDecl +
      call +
      `await main(config, tools${p.code ? ', { search: toolSearch }' : p.search ? ', { search: createToolSearch(searchIndex) }' : ''});\n`
    );

  // list_changed is only ever sent after a concern update, so it is declared only with concerns
  const changing = p.concerns ? '{ listChanged: true }' : '{}';
  const caps: string[] = [];
  if (p.tools) caps.push(`  tools: ${changing},`);
  if (p.anyPrompts) caps.push(`  prompts: ${changing},`);
  // subscribe: some resource can change (resources/subscribe, subscriptions/listen)
  if (hasResources) caps.push(`  resources: ${p.subscriptions ? (p.concerns ? '{ subscribe: true, listChanged: true }' : '{ subscribe: true }') : changing},`);
  if (p.completions) caps.push('  completions: {},');
  // logging is declared by every server (runtime/server/server.ts): preprocessor runs are reported as logging notifications
  const experimental: string[] = [];
  // the capability types take JSON values; these are JSON data, typed more precisely
  if (p.concerns) experimental.push('concerns: concernCapability(concerns.declarations, concerns.metaKey, concerns.presets) as never');
  if (p.preprocessors) experimental.push('preprocessors: preprocessorCapability(preprocessors) as never');
  if (experimental.length > 0) caps.push(`  experimental: { ${experimental.join(', ')} },`);
  // the gate prompts and resources are filtered and guarded with: concerns, the base gate (the policy's access rules, OAuth scopes), or both
  const gated = p.concerns || p.policy || p.scoped;
  const gateOpt = gated ? ', { gate }' : '';
  const install: string[] = [];
  // search mode per preset: the concern gate tells the server each request's active preset
  // code registration (entry: custom): registered primitives' concern mappings beside the manifest's
  const mappings = ir.entry === 'custom' ? ' mappings: registry.mappings(concerns.mappings),' : '';
  const concernOptions = `{ ...concerns,${mappings} capabilities, era: instance.era${p.searchPresets ? ', toolListMode: toolSearch.modeOf' : ''} }`;
  // the base gate (runtime/server/server.ts) holds the OAuth scopes of tools, prompts and resources and the policy's access rules: concerns join it
  if (p.concerns && p.searchPresets) {
    install.push(`    const concernGate = installConcerns(server, ${concernOptions});`);
    install.push('    const gate = { ...composeGates(base, concernGate), activePreset: concernGate.activePreset };');
  } else if (p.concerns) install.push(`    const gate = composeGates(base, installConcerns(server, ${concernOptions}));`);
  else if ((p.policy || p.scoped) && (p.anyPrompts || hasResources)) install.push('    const gate = base;');
  if (p.preprocessors) install.push('    installPreprocessors(server, preprocessors);');
  // prompts that embed a declared resource read it as resources/read does (the gate included)
  const readsResources = p.promptReadsResources && hasResources;
  const resourceDefs = [p.resources ? 'resources' : '', p.templates ? 'templates: resourceTemplates' : ''].filter(Boolean).join(', ');
  if (readsResources) install.push(`    const readResource = installResources(server, { ${resourceDefs} }${gateOpt});`);
  if (p.anyPrompts) {
    const lists = [p.prompts ? '...prompts' : '', p.reflection ? '...reflectionPrompts' : '', p.preprocessors ? 'withContextPrompt(preprocessors)' : ''].filter(
      Boolean,
    );
    const all = lists.length === 1 && p.prompts ? 'prompts' : `[${lists.join(', ')}]`;
    const promptOpts = readsResources ? (gated ? ', { gate, readResource }' : ', { readResource }') : gateOpt;
    install.push(`    installPrompts(server, ${all}${promptOpts});`);
  }
  if (hasResources && !readsResources) install.push(`    installResources(server, { ${resourceDefs} }${gateOpt});`);
  if (p.subscriptions) install.push(`    installSubscriptions(server, instance, { ${resourceDefs} }${gateOpt});`);
  if (p.completions) {
    const sources = [p.prompts ? 'prompts' : '', p.templates ? 'templates: resourceTemplates' : ''].filter(Boolean).join(', ');
    install.push(`    installCompletions(server, { ${sources} }${gateOpt});`);
  }
  if (install.some((l) => l.startsWith('    const gate'))) install.push('    return gate;');
  const ext: string[] = [];
  if (p.extraTools) ext.push('  extraTools,');
  ext.push('  capabilities,');
  if (p.reflection) {
    ext.push(
      '  reflection: (key, extra) => (reflectionGate = new ReflectionGate({ ...reflectionConfigFromEnv(reflection, config.envPrefix, key), ...extra })),',
    );
    ext.push('  reflectionDir: reflection.storeDir,');
  }
  if (p.preprocessors) ext.push('  preprocessorNames: preprocessors.map((p) => p.name),');
  if (p.search) ext.push(p.searchPresets || p.code ? '  search: toolSearch,' : '  search: createToolSearch(searchIndex),');
  if (p.subscriptions) ext.push('  subscriptions: resourceChanges,');
  if (p.scoped)
    ext.push(
      `  scoped: { ${[p.prompts ? 'prompts' : '', p.resources ? 'resources' : '', p.templates ? 'templates: resourceTemplates' : ''].filter(Boolean).join(', ')} },`,
    );
  if (p.policy) ext.push('  policy: (context) => createPolicy(policy, { serverName: config.name, serverVersion: config.version, ...context }),');
  if (ir.policy?.audit) ext.push('  audit: policy.audit,');
  // name only the parameters the body uses (the project type-checks with noUnusedParameters)
  const body = install.join('\n');
  const usesBase = /\bbase\b/.test(body);
  const usesInstance = /\binstance\b/.test(body);
  const params = ['server', ...(usesInstance || usesBase ? [usesInstance ? 'instance' : '_instance'] : []), ...(usesBase ? ['base'] : [])];
  if (install.length > 0)
    ext.push(
      `  install: (${params.join(', ')}) => {\n${p.reflection && p.anyPrompts ? '    const reflectionPrompts = reflectionGate?.promptsFor() ?? [];\n' : ''}${install.join('\n')}\n  },`,
    );
  const gateDecl =
    (p.reflection
      ? '/** The reflection gate, shared by every instance of this process (made once the state key is known). */\nlet reflectionGate: ReflectionGate | undefined;\n\n'
      : '') + toolSearchDecl;
  if (ir.entry === 'custom') return emitLibraryEntry(ir, { imports, decls: gateDecl, capabilities: caps, extensions: ext });
  return (
    head +
    gateDecl +
    '/** What this server declares: only the primitive kinds it has, and its protocol extensions. */\n' +
    `const capabilities: ServerCapabilities = {\n${caps.join('\n')}\n};\n\n` +
    call +
    `await main(config, tools, {\n${ext.join('\n')}\n});\n`
  );
}

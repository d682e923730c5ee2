/**
 * The generated project as a library (`entry: custom`): `createServer()` of the project's
 * `src/index.ts` returns a {@link LibraryServer} that has not served yet. Code registers tools,
 * prompts, resources and resource templates on it (checked by registry.ts: a name the server has
 * already throws `Tool with name '<name>' already exists`), then `serve()` runs the same `main`
 * as a generated entry, with the registered primitives beside the manifest's: registered tools
 * are extra tools (the same pipeline: concern enforcement, argument validation, the reflection
 * gate of a tool it names, the policy's access, limits and audit), registered prompts and
 * resources are served through the same modules (prompts.ts, resources.ts) behind the same gate
 * as the manifest's, and audited the same.
 *
 * This file is copied verbatim into every generated project whose manifest says `entry: custom`.
 */
import type { Server } from '@modelcontextprotocol/server';
import { ResourceNotFoundError } from '@modelcontextprotocol/server';
import type { ConcernDeclaration } from './concerns/concerns.js';
import { log } from './core/log.js';
import type { PrimitiveGate } from './core/primitive-gate.js';
import { toolEntry } from './core/surface.js';
import type { OperationTool, ServerConfig } from './core/types.js';
import type { MainOptions } from './main.js';
import { main } from './main.js';
import { encodedBytes } from './operation/result-size.js';
import { installPrompts, promptDescriptor } from './primitives/prompts.js';
import { installResources, resourceDescriptor, templateDescriptor } from './primitives/resources.js';
import { parseCommandLine } from './process/command-line.js';
import type { RegisteredPrompt, RegisteredResource, RegisteredResourceTemplate, Taken, ToolDefinition, ToolHandler } from './server/registry.js';
import { Registry } from './server/registry.js';

export type { RegisteredPrompt, RegisteredResource, RegisteredResourceTemplate, ToolDefinition, ToolHandler } from './server/registry.js';

/** How {@link LibraryServer.serve} serves; what it leaves out comes from the command line and `<PREFIX>_*` variables, as for the generated entry. */
export type ServeCall = {
  /** `stdio` (the default) or `http` (Streamable HTTP): the `--transport` flag. */
  readonly transport?: 'stdio' | 'http';
  /** HTTP: the interface to listen on (`--host`). */
  readonly host?: string;
  /** HTTP: the port (`--port`; 0 picks a free one). */
  readonly port?: number;
  /** The command line (default `process.argv.slice(2)`): `--help`, `--version` and `--print-config` answer and return. */
  readonly argv?: readonly string[];
  /** The environment the settings come from (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Registers primitives just before serving: what it throws is logged (`cannot start: …`) and the process exits with code 1. */
  readonly setup?: (server: LibraryServer) => void | Promise<void>;
};

/** A generated server before it serves. */
export interface LibraryServer {
  /** Adds a tool implemented by `handler`; throws on an illegal name, an uncompilable schema, or `Tool with name '<name>' already exists`. */
  registerTool<Args = Record<string, unknown>, Result = unknown>(name: string, definition: ToolDefinition, handler: ToolHandler<Args, Result>): void;
  /** Adds a prompt (messages or a handler); throws `Prompt with name '<name>' already exists` for a name the server has. */
  registerPrompt(definition: RegisteredPrompt): void;
  /** Adds a resource (text, blob or handler); throws `Resource with URI '<uri>' already exists` for a URI the server has. */
  registerResource(definition: RegisteredResource): void;
  /** Adds a resource template; throws `Resource template with URI template '<template>' already exists` for one the server has. */
  registerResourceTemplate(definition: RegisteredResourceTemplate): void;
  /** Serves (once): over stdio, or Streamable HTTP. Registering afterwards throws. */
  serve(call?: ServeCall): Promise<void>;
}

/** What the generated `src/index.ts` knows of the server: its own primitives and concerns. */
export type LibraryParts = {
  /** Names (URIs, URI templates) the server has before any registration. */
  readonly taken: Taken;
  /** The manifest's concerns (registered primitives may map them). */
  readonly concerns?: readonly ConcernDeclaration[];
};

/** The generated entry's options, made when the server starts serving, from what was registered. */
export type ExtensionsOf = (registry: Registry) => MainOptions;

const PROMPT_METHODS: ReadonlySet<string> = new Set(['prompts/list', 'prompts/get']);
const RESOURCE_METHODS: ReadonlySet<string> = new Set(['resources/list', 'resources/templates/list', 'resources/read']);

type Handler = (request: { params: Record<string, unknown> }, ctx: never) => unknown;

/** The request handlers `install` sets for `methods`, set aside instead (`set` sets the others). */
function handlersOf(install: () => void, server: Server, methods: ReadonlySet<string>): Map<string, Handler> {
  const captured = new Map<string, Handler>();
  const own = server.setRequestHandler;
  server.setRequestHandler = ((method: string, ...rest: unknown[]) => {
    if (methods.has(method) && rest.length === 1) captured.set(method, rest[0] as Handler);
    else (own as (...a: unknown[]) => void).call(server, method, ...rest);
  }) as Server['setRequestHandler'];
  try {
    install();
  } finally {
    server.setRequestHandler = own;
  }
  return captured;
}

/** A stand-in `Server` whose handlers `install` keeps (for the registered prompts and resources). */
function shadow(install: (server: Server) => void): Map<string, Handler> {
  const handlers = new Map<string, Handler>();
  install({ setRequestHandler: (method: string, handler: Handler) => void handlers.set(method, handler) } as unknown as Server);
  return handlers;
}

/** Sets `method` on `server` to one handler over the manifest's (`mine`, may be absent) and the registered (`theirs`). */
function merge(server: Server, method: string, mine: Handler | undefined, theirs: Handler, combine: (a: Handler | undefined, b: Handler) => Handler): void {
  (server.setRequestHandler as unknown as (m: string, h: Handler) => void).call(server, method, combine(mine, theirs));
}

/** A list handler answering both lists, the manifest's entries first. */
const concat =
  (key: string) =>
  (a: Handler | undefined, b: Handler): Handler =>
  async (request, ctx) => ({
    [key]: [...(a ? ((await a(request, ctx)) as Record<string, unknown[]>)[key]! : []), ...((await b(request, ctx)) as Record<string, unknown[]>)[key]!],
  });

/** `options` with the registered primitives added: tools beside the extra tools, prompts and resources installed behind each instance's gate. */
function withRegistered(options: MainOptions, registry: Registry, concerns: boolean): MainOptions {
  const { tools, prompts, resources, templates } = registry;
  const install = options.install;
  return {
    ...options,
    // the generated index declares them already (so its concern install knows them); kept for other callers
    capabilities: registry.capabilities(options.capabilities, concerns),
    ...(tools.length > 0 ? { extraTools: [...(options.extraTools ?? []), ...tools] } : {}),
    install: (server, instance, base) => {
      let gate: PrimitiveGate = base;
      const methods = new Set([...(prompts.length > 0 ? PROMPT_METHODS : []), ...(resources.length + templates.length > 0 ? RESOURCE_METHODS : [])]);
      const manifest = handlersOf(() => void (gate = install?.(server, instance, base) ?? base), server, methods);
      if (prompts.length > 0) {
        const own = shadow((s) => installPrompts(s, prompts, { gate }));
        const names = new Set(prompts.map((p) => p.name));
        merge(server, 'prompts/list', manifest.get('prompts/list'), own.get('prompts/list')!, concat('prompts'));
        merge(
          server,
          'prompts/get',
          manifest.get('prompts/get'),
          own.get('prompts/get')!,
          (a, b) => (request, ctx) => (a && !names.has(String(request.params.name)) ? a(request, ctx) : b(request, ctx)),
        );
      }
      if (resources.length + templates.length > 0) {
        const own = shadow((s) => void installResources(s, { resources, templates }, { gate }));
        merge(server, 'resources/list', manifest.get('resources/list'), own.get('resources/list')!, concat('resources'));
        merge(server, 'resources/templates/list', manifest.get('resources/templates/list'), own.get('resources/templates/list')!, concat('resourceTemplates'));
        // the registered first (their URIs are not the manifest's), then the manifest's
        merge(server, 'resources/read', manifest.get('resources/read'), own.get('resources/read')!, (a, b) => async (request, ctx) => {
          try {
            return await b(request, ctx);
          } catch (err) {
            if (a && err instanceof ResourceNotFoundError) return a(request, ctx);
            throw err;
          }
        });
      }
      return gate;
    },
  };
}

/** `1 tool (312 bytes)`: the count and list-entry bytes of registered primitives of one kind. */
function counted(items: readonly object[], word: string): string {
  const bytes = items.reduce((sum, item) => sum + encodedBytes(item), 0);
  return `${items.length} ${word}${items.length === 1 ? '' : 's'} (${bytes} bytes)`;
}

/** The command-line flags of `call`'s explicit serving options (flags win over variables). */
function flags(call: ServeCall): string[] {
  return [
    ...(call.transport !== undefined ? ['--transport', call.transport] : []),
    ...(call.host !== undefined ? ['--host', call.host] : []),
    ...(call.port !== undefined ? ['--port', String(call.port)] : []),
  ];
}

/** A server of `config` and `tools` (the generated `src/index.ts` calls this): registrations first, then `serve`. */
export function createLibraryServer(config: ServerConfig, tools: readonly OperationTool[], parts: LibraryParts, extensions: ExtensionsOf): LibraryServer {
  const registry = new Registry(parts.taken, parts.concerns);
  let serving = false;
  const open = (what: string): void => {
    if (serving) throw new Error(`${what}: the server is already serving; register before serve()`);
  };
  const server: LibraryServer = {
    registerTool: (name, definition, handler) => {
      open(`Tool ${name}`);
      registry.addTool(name, definition, handler as ToolHandler<never, unknown>);
    },
    registerPrompt: (definition) => {
      open(`Prompt ${definition?.name}`);
      registry.addPrompt(definition);
    },
    registerResource: (definition) => {
      open(`Resource ${definition?.uri}`);
      registry.addResource(definition);
    },
    registerResourceTemplate: (definition) => {
      open(`Resource template ${definition?.uriTemplate}`);
      registry.addTemplate(definition);
    },
    serve: async (call = {}) => {
      open('serve()');
      const argv = [...(call.argv ?? process.argv.slice(2)), ...flags(call)];
      try {
        await call.setup?.(server);
      } catch (err) {
        log('error', `${config.name}: cannot start: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      }
      serving = true;
      const options = withRegistered(extensions(registry), registry, parts.concerns !== undefined);
      const { tools: t, prompts, resources, templates } = registry;
      if (parseCommandLine(argv).kind === 'serve' && t.length + prompts.length + resources.length + templates.length > 0) {
        const kinds = [
          counted(t.map(toolEntry), 'tool'),
          counted(prompts.map(promptDescriptor), 'prompt'),
          counted(resources.map(resourceDescriptor), 'resource'),
          counted(templates.map(templateDescriptor), 'resource template'),
        ];
        log('info', `${config.name}: registered at run time: ${kinds.join(', ')} of list entries`);
      }
      await main(config, tools, options, argv, call.env ?? process.env);
    },
  };
  return server;
}

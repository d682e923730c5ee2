/**
 * The MCP server, built once and instantiated per connection or request: `createServer` sets up
 * what every instance shares (settings, credentials, the memory budget of responses, the tool
 * table, the reflection gate, the pipeline's steps and dispatch) and returns a factory of
 * low-level SDK `Server` instances — one per legacy session, one per modern request over HTTP,
 * one per stdio connection. It knows nothing of transports: stdio.ts and http.ts serve the
 * factory, main.ts picks one.
 *
 * Tools are published with their JSON Schemas verbatim (the low-level `Server` does not rewrite
 * draft 2020-12 schemas with `$defs`): the tool table (tool-table.ts), the `tools/*` handlers
 * (tool-handlers.ts), every `tools/call` through one pipeline (tool-call.ts, pipeline.ts); the
 * types of the factory and its options are in server-types.ts. Prompts, resources, concerns and
 * preprocessors come in through the `install` hook of {@link ServerExtensions}; this module
 * imports none of them, so a project copies only the runtime (and the dependencies) its manifest
 * uses.
 */
import { randomUUID } from 'node:crypto';
import type { Server, ServerCapabilities, ServerEventBus } from '@modelcontextprotocol/server';
import { ResourceNotFoundError } from '@modelcontextprotocol/server';
import { log } from '../core/log.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import { composeGates, OPEN_GATE } from '../core/primitive-gate.js';
import type { OperationTool, ServerConfig } from '../core/types.js';
import { scopeGate, scopeNeeds } from '../oauth/oauth-scopes.js';
import { readArgumentEnv } from '../operation/arguments.js';
import { Authenticator } from '../operation/auth.js';
import { InFlightBudget } from '../operation/in-flight.js';
import type { HeaderRefusal, ParamHeader } from '../operation/param-headers.js';
import { checkParamHeaders, paramHeaders } from '../operation/param-headers.js';
import { RESULT_URI_PREFIX, ResultStore } from '../operation/result-store.js';
import { createDispatch } from '../pipeline/dispatch.js';
import { resolveSettings } from '../process/settings.js';
import { DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_IN_FLIGHT_BYTES } from '../process/variables.js';
import { openState } from '../shared/state.js';
import { TaskTools } from '../tasks/tasks-tools.js';
import { observe, ServerInstance } from './instance.js';
import { LocalRoundNonces } from './round-nonces.js';
import type { CreateServerOptions, InstanceContext, ServerFactory } from './server-types.js';
import type { ToolServing } from './tool-call.js';
import { installToolHandlers } from './tool-handlers.js';
import { toolTable } from './tool-table.js';

export type { CodeFront, CodeNestedOutcome, CodeWaiting, PresetGate, ReflectionGuard } from '../pipeline/dispatch.js';
export type { Era, Step, ToolCall, ToolGuard, ToolResult } from '../pipeline/pipeline.js';
export type { PolicyEvent, PolicyLayer } from '../pipeline/policy-layer.js';
export type { CreateServerOptions, InstanceContext, ListenFeed, ServerExtensions, ServerFactory, ToolMetadata, ToolSearch } from './server-types.js';
export { toolDescriptor } from './tool-table.js';

/**
 * Builds the server for `tools` and `options.extraTools` and returns its instance factory.
 * Settings come from `config`, overridden by `<envPrefix>_*` variables in `env`; a malformed
 * variable throws `SettingsError`. Duplicate tool names throw. `tools/call` of an unknown name
 * (or of a preprocessor) fails with JSON-RPC error -32602. Without any tool, no `tools`
 * capability is declared.
 */
export function createServer(
  config: ServerConfig,
  tools: readonly OperationTool[],
  env: NodeJS.ProcessEnv = process.env,
  options: CreateServerOptions = {},
): ServerFactory {
  const settings = options.settings ?? resolveSettings(config, env);
  const auth = options.auth ?? new Authenticator(config.securitySchemes ?? [], env);
  // read once, here: the values of hidden arguments are fixed for the life of the server
  const argumentEnv = readArgumentEnv(tools, env);
  // one memory budget for the response bodies of all calls in flight, of every instance
  const inFlight = new InFlightBudget(settings.maxInFlightBytes ?? DEFAULT_MAX_IN_FLIGHT_BYTES, options.outputBacklog);
  const stateKey = options.stateKey ?? Buffer.from(randomUUID() + randomUUID());
  const roundNonces = options.roundNonces ?? new LocalRoundNonces();
  const reflection = options.reflection;
  const table = toolTable(tools, options.extraTools, reflection, options.search, options.preprocessorNames);
  const { all, byName } = table;
  const hasTools = byName.size > 0;
  const { tools: toolsCapability, ...otherCapabilities } = options.capabilities ?? {};
  // every server takes logging/setLevel (legacy era): its log notifications (preprocessor runs)
  // follow the level a client sets; in the modern era the level rides each request's _meta
  // a server with operation tools can link a cut result to its whole (`mcpgen://results/…`), read
  // with resources/read: it declares resources even when the manifest has none
  const ownResources = tools.length > 0 && otherCapabilities.resources === undefined;
  const capabilities: ServerCapabilities = {
    ...(hasTools ? { tools: toolsCapability ?? {} } : {}),
    logging: {},
    ...(ownResources ? { resources: {} } : {}),
    ...otherCapabilities,
  };
  const resultStore = new ResultStore();
  const policy = options.policy;
  const defaultIdentity = options.identity ?? 'local';
  const maxArgumentBytes = settings.maxArgumentBytes ?? DEFAULT_MAX_ARGUMENT_BYTES;
  // tools that run as MCP tasks (tasks-tools.ts): one task table for every instance of the process
  const taskTools = TaskTools.of(all, config.envPrefix, env, options.taskStore);
  // the steps of a tool call and the dispatch they end in (pipeline/dispatch.ts)
  const { steps, dispatch } = createDispatch({
    config,
    settings,
    auth,
    argumentEnv,
    inFlight,
    resultStore,
    byName,
    maxArgumentBytes,
    ...(reflection ? { reflection } : {}),
    ...(policy ? { policy } : {}),
    ...(table.code ? { code: table.code } : {}),
    ...(options.steps ? { steps: options.steps } : {}),
    ...(options.exchange ? { exchange: options.exchange } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.subscriptions ? { subscriptions: options.subscriptions } : {}),
  });
  const serving: ToolServing = {
    table,
    steps,
    dispatch,
    envPrefix: config.envPrefix,
    maxArgumentBytes,
    stateKey,
    roundNonces,
    defaultIdentity,
    ...(taskTools ? { taskTools } : {}),
  };

  // an OAuth token sees only the tools, prompts and resources its scopes allow (oauth-scopes.ts; open when nothing needs a scope)
  const scoped = scopeGate(scopeNeeds([...tools, ...(options.extraTools ?? [])], options.scoped));
  const factory = (instance: InstanceContext): Server => {
    const serverOptions: ConstructorParameters<typeof Server>[1] = {
      capabilities: taskTools ? taskTools.capabilities(instance.era, capabilities) : capabilities,
      // an input round's state comes back from the client: only state this server (or another
      // with the same key) sealed is accepted (-32602 "Invalid or expired requestState" else)
      requestState: { verify: (token: string) => openState(stateKey, token) },
    };
    if (config.instructions !== undefined) serverOptions.instructions = config.instructions;
    const server = new ServerInstance({ name: config.name, version: config.version }, serverOptions);
    server.onerror = (err) => log('warn', 'MCP protocol error', err);
    const identity = instance.identity ?? defaultIdentity;
    const base = composeGates(scoped, policy?.gate(identity) ?? OPEN_GATE);
    if (policy) observe(server, policy, instance.era, identity);
    const gate: PrimitiveGate = options.install?.(server, instance, base) ?? base;
    if (tools.length > 0) {
      server.readResult = (uri, ctx) => {
        const kept = resultStore.read(uri, ctx.http?.authInfo?.clientId ?? instance.identity ?? defaultIdentity);
        if (kept !== undefined) return { contents: [{ uri, mimeType: 'application/json', text: kept.text }] };
        // another client's, expired or never issued: all the same to the asker
        if (uri.startsWith(RESULT_URI_PREFIX))
          throw new ResourceNotFoundError(uri, `Resource not found: ${uri} (kept results last 10 minutes and are readable by the client whose call made them)`);
        return undefined;
      };
    }
    if (ownResources) {
      server.setRequestHandler('resources/list', () => ({ resources: [] }));
      server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }));
      server.setRequestHandler('resources/read', (request) => {
        throw new ResourceNotFoundError(request.params.uri, `Resource not found: ${request.params.uri}`);
      });
    }
    if (hasTools) installToolHandlers(serving, { server, instance, gate });
    return server;
  };
  // x-mcp-header arguments of each tool (SEP-2243), checked against Mcp-Param-* headers
  const headerParams = new Map<string, ParamHeader[]>();
  for (const tool of all) {
    const declared = paramHeaders(tool.inputSchema);
    if (declared.length > 0) headerParams.set(tool.name, declared);
  }
  const feed = options.subscriptions;
  const precheck = (body: unknown, ctx: InstanceContext): HeaderRefusal | undefined => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
    const { method, params } = body as { method?: unknown; params?: { name?: unknown; arguments?: unknown } };
    if (method === 'tools/call' && typeof params?.name === 'string' && ctx.headers) {
      const declared = headerParams.get(params.name);
      return declared ? checkParamHeaders(declared, params.arguments, ctx.headers) : undefined;
    }
    if (method === 'subscriptions/listen' && feed) {
      // an instance for this client: its gate decides, as for resources/subscribe
      const server = factory(ctx);
      try {
        feed.checkListen(server, params);
      } catch (err) {
        const code = typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -32603;
        return {
          status: 200,
          code,
          message: err instanceof Error ? err.message : String(err),
          ...((err as { data?: unknown }).data !== undefined ? { data: (err as { data?: unknown }).data } : {}),
        };
      } finally {
        void server.close().catch(() => undefined);
      }
    }
    return undefined;
  };
  const taskListen = taskTools
    ? {
        taskListen: (identity: string | undefined, ids: readonly unknown[], subscriptionId: unknown, send: (message: unknown) => void) =>
          taskTools.listen(identity ?? defaultIdentity, ids, subscriptionId, send),
      }
    : {};
  return Object.assign(factory, {
    settings,
    toolCount: all.length,
    precheck,
    ...taskListen,
    ...(feed ? { bus: feed.bus, share: (bus: ServerEventBus) => feed.share(bus) } : {}),
  });
}

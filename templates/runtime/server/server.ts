/**
 * The MCP server, built once and instantiated per connection or request: `createServer` sets up
 * what every instance shares (settings, credentials, the memory budget of responses, the tool
 * catalogue, the reflection gate) and returns a factory of low-level SDK `Server` instances —
 * one per legacy session, one per modern request over HTTP, one per stdio connection. It knows
 * nothing of transports: stdio.ts and http.ts serve the factory, main.ts picks one.
 *
 * Tools are published with their JSON Schemas verbatim (the low-level `Server` does not rewrite
 * draft 2020-12 schemas with `$defs`). Every `tools/call` runs through one pipeline
 * (pipeline.ts). Prompts, resources, concerns and preprocessors come in through the `install`
 * hook of {@link ServerExtensions}; this module imports none of them, so a project copies only
 * the runtime (and the dependencies) its manifest uses.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult, Server, ServerCapabilities, ServerContext, ServerEventBus, Tool } from '@modelcontextprotocol/server';
import { ResourceNotFoundError } from '@modelcontextprotocol/server';
import { log } from '../core/log.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import { composeGates, OPEN_GATE } from '../core/primitive-gate.js';
import type { ToolEntry } from '../core/surface.js';
import { toolEntry } from '../core/surface.js';
import type { OperationTool, ServerConfig } from '../core/types.js';
import type { TokenExchanger } from '../oauth/oauth-exchange.js';
import type { ScopedPrimitives } from '../oauth/oauth-scopes.js';
import { scopeGate, scopeNeeds } from '../oauth/oauth-scopes.js';
import { measureArguments, overLimitMessage } from '../operation/argument-limits.js';
import { readArgumentEnv } from '../operation/arguments.js';
import { Authenticator } from '../operation/auth.js';
import type { OutputBacklog } from '../operation/in-flight.js';
import { InFlightBudget } from '../operation/in-flight.js';
import type { CallOptions } from '../operation/operation-call.js';
import type { HeaderRefusal, ParamHeader } from '../operation/param-headers.js';
import { checkParamHeaders, paramHeaders } from '../operation/param-headers.js';
import type { CodeFront, PresetGate, ReflectionGuard } from '../pipeline/dispatch.js';
import { createDispatch } from '../pipeline/dispatch.js';
import type { Era, PipelineTool, Step, ToolCall, ToolResult } from '../pipeline/pipeline.js';
import { isInputRequired, runPipeline } from '../pipeline/pipeline.js';
import type { Settings } from '../process/settings.js';
import { resolveSettings } from '../process/settings.js';
import { DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_IN_FLIGHT_BYTES, settingNames } from '../process/variables.js';
import { SharedStateError } from '../shared/shared-state.js';
import { openState } from '../shared/state.js';
import type { TaskWork } from '../tasks/tasks.js';
import type { TaskStore } from '../tasks/tasks-store.js';
import { TaskTools } from '../tasks/tasks-tools.js';
import type { AnyExtraTool } from '../tools/extra-tools.js';
import type { PolicyLayer } from './instance.js';
import { callArguments, invalidParams, observe, ServerInstance } from './instance.js';
import { RESULT_URI_PREFIX, ResultStore } from './result-store.js';
import type { RoundNonces } from './round-nonces.js';
import { LocalRoundNonces } from './round-nonces.js';
import { belongsTo, hasNonce, ROUND_STATE_TTL_MS, roundOf, sealRound } from './rounds.js';
import { listAnswered } from './warm.js';

export type { CodeFront, CodeNestedOutcome, CodeWaiting, PresetGate, ReflectionGuard } from '../pipeline/dispatch.js';
export type { Era, Step, ToolCall, ToolGuard, ToolResult } from '../pipeline/pipeline.js';
export type { PolicyEvent, PolicyLayer } from './instance.js';

/** What a transport tells the factory about the instance it needs. */
export type InstanceContext = {
  readonly era: Era;
  /** The client's identity (from its HTTP token); absent ⇒ the server's default identity. */
  readonly identity?: string;
  /** Headers of the HTTP request that opened the session or carries the request. */
  readonly headers?: { get(name: string): string | null };
};

/** Makes a server instance for one legacy session, one modern request, or one stdio connection. */
export type ServerFactory = ((ctx: InstanceContext) => Server) & {
  /** The resolved settings every instance uses. */
  readonly settings: Settings;
  /** How many tools the server has (listed or behind search). */
  readonly toolCount: number;
  /** The change-event bus of modern `subscriptions/listen` streams over HTTP (when some resource can change). */
  readonly bus?: ServerEventBus;
  /** Sends resource changes through a bus shared with other instances (redis-bus.ts) too (when some resource can change). */
  readonly share?: (bus: ServerEventBus) => void;
  /**
   * Checks a modern (2026-07-28) HTTP request before the SDK serves it: a `tools/call` whose
   * `Mcp-Param-*` headers disagree with its `x-mcp-header` arguments (HTTP 400, -32020), a
   * `subscriptions/listen` for a resource the client may not read (the error `resources/read`
   * gives). Undefined: serve it.
   */
  precheck(body: unknown, ctx: InstanceContext): HeaderRefusal | undefined;
  /** With task tools: a 2026-07-28 HTTP listen stream for task ids (tasks-tools.ts `listen`); `identity` undefined ⇒ the server's default. */
  readonly taskListen?: (
    identity: string | undefined,
    taskIds: readonly unknown[],
    subscriptionId: unknown,
    send: (message: unknown) => void,
  ) => Promise<{ accepted: string[]; stop: () => void }>;
};

/** What the server needs of resource subscriptions (subscriptions.ts's `resourceChanges` is one; not imported, so servers whose resources never change carry none of it). */
export interface ListenFeed {
  /** The bus modern HTTP listen streams subscribe to. */
  readonly bus: ServerEventBus;
  /** Throws the error `resources/subscribe` would give when the listen params ask for a resource `server`'s client may not read. */
  checkListen(server: Server, params: unknown): void;
  /** Sends changes through a bus shared with other instances too. */
  share(bus: ServerEventBus): void;
  /** Tells every subscriber (of every instance, with a shared bus) that `uri` changed: a handler's `ctx.notifyResourceUpdated`. */
  updated(uri: string): void;
}

/**
 * What search mode needs (`createToolSearch` of search.ts makes one; this module does not import
 * it, so servers that list their tools carry none of its code or dependencies).
 */
export interface ToolSearch {
  /** The tools listed instead of the catalogue, in list order. */
  readonly tools: readonly ToolEntry[];
  /** Names of the three search-mode tools. */
  readonly names: { readonly search: string; readonly describe: string; readonly call: string };
  /**
   * The mode of a request whose active concern preset is `preset` (undefined: none): `search`
   * lists `tools`, `list` the catalogue. Absent: every request lists `tools`.
   */
  modeOf?(preset: string | undefined): 'list' | 'search' | 'code';
  /** Answers `search_tools` over the tools `keep` accepts; invalid arguments throw -32602. With `signature`, each result carries its operation's TypeScript signature (code mode). */
  search(
    args: unknown,
    keep: (name: string) => boolean,
    describe: (name: string) => ToolMetadata | undefined,
    signature?: (name: string) => string | undefined,
  ): CallToolResult;
  /** What `describe_tool` and `call_tool` say of a name the request cannot see: the closest of `known` (the names it can), and a pointer to `search_tools`. */
  unknown(name: string, known: Iterable<string>): string;
  /** Code mode (`discovery: code`, code-mode.ts's `createCodeMode` makes one): for the requests whose mode is `code`. */
  readonly code?: CodeFront;
}

/** What a generated entry adds to a server besides its operation tools. */
export type ServerExtensions = {
  /** Over HTTP with an OAuth access token: exchanges it for API tokens (oauth-exchange.ts) for schemes with `exchange`. */
  exchange?: TokenExchanger;
  /** Tools implemented by handlers, listed after the operation tools. */
  extraTools?: readonly AnyExtraTool[];
  /** The manifest's prompts, resources and templates, when one needs OAuth scopes (oauth-scopes.ts); the install hook must apply the base gate to them. */
  scoped?: ScopedPrimitives;
  /**
   * Capabilities to declare besides `tools` and `logging` (prompts, resources, `experimental`);
   * a `tools` entry here replaces the default `{}` (e.g. `{ listChanged: true }`).
   */
  capabilities?: ServerCapabilities;
  /**
   * Called for every new instance, before the tool handlers are registered: registers further
   * handlers (prompts, resources, concern methods) and returns the gate that filters
   * `tools/list` and guards `tools/call` for that instance. `base` is the policy layer's access
   * gate for the instance (open without a policy): the returned gate must include it (compose it
   * with the concern gate), and so must the gate given to prompts and resources; returning
   * nothing means `base`. With search mode per preset, the returned gate is a {@link PresetGate}.
   */
  install?: (server: Server, instance: InstanceContext, base: PrimitiveGate) => PrimitiveGate | void;
  /** The reflection gate, shared by every instance: gated tools run only once it allows them. */
  reflection?: ReflectionGuard;
  /** Names of the preprocessors: `tools/call` refuses them with a pointer to `preprocessors/run`. */
  preprocessorNames?: readonly string[];
  /** Search mode: list `search_tools`, `describe_tool` and `call_tool` instead of the tools. */
  search?: ToolSearch;
  /** Resource subscriptions (some resource can change): the install hook wires each instance, this the modern HTTP listen streams. */
  subscriptions?: ListenFeed;
};

/** Extra options of `createServer` (the transports, tests and embedding). */
export type CreateServerOptions = ServerExtensions & {
  /** Settings to use instead of resolving them from `config` and the environment. */
  settings?: Settings;
  /** fetch implementation passed to every call. */
  fetch?: CallOptions['fetch'];
  /** Credentials to use instead of `config.securitySchemes` with secrets from `env`. */
  auth?: Authenticator;
  /** What the transport has queued for sending: counted in the memory budget of responses in flight. */
  outputBacklog?: OutputBacklog;
  /** HMAC key of the state that outlives a request (input rounds); default: a random key per process. */
  stateKey?: Buffer;
  /** Identity of clients that bring none (stdio: `<PREFIX>_CLIENT`); default `local`. */
  identity?: string;
  /** Steps every tool call runs first (after the policy layer's), before concern enforcement, validation and the gate (pipeline.ts). */
  steps?: readonly Step[];
  /** The policy layer: its steps run first, its access gate filters every list, its audit trail records sessions, prompts, resources, preprocessors and justifications. */
  policy?: PolicyLayer;
  /** Where the tasks of task tools live (tasks-store.ts); default: in this process, bounded. */
  taskStore?: TaskStore;
  /** Where used round-state nonces are remembered (round-nonces.ts); default: in this process, bounded. */
  roundNonces?: RoundNonces;
};

/** The fields of a tool (operation or extra) its `tools/list` entry is made of. */
export type ToolMetadata = Pick<OperationTool, 'name' | 'title' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations'>;

/** The `tools/list` entry of a tool: its metadata and schemas, as generated (the same function the build measures with). */
export function toolDescriptor(tool: ToolMetadata): Tool {
  return toolEntry(tool) as Tool;
}

/** A required string argument of a search-mode tool; anything else is invalid params. */
function stringArgument(args: Record<string, unknown>, key: string, tool: string): string {
  const value = args[key];
  if (typeof value !== 'string' || value.length === 0) throw invalidParams(`Invalid arguments for tool ${tool}: ${key} must be a non-empty string`);
  return value;
}

/** A pass-through params schema: the SDK has already checked the spec shape; the params object is kept as received (an argument named `__proto__` included). */
const RAW_PARAMS = { '~standard': { version: 1, vendor: 'mcpgen', validate: (value: unknown) => ({ value }) } } as const;

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
  const persistTool = reflection?.exposesPersistTool ? reflection.persistTool : undefined;
  const all: ReadonlyArray<OperationTool | AnyExtraTool> = [...tools, ...(options.extraTools ?? [])];
  const byName = new Map<string, PipelineTool>();
  for (const tool of all) {
    if (byName.has(tool.name)) throw new Error(`Duplicate tool name: ${tool.name}`);
    byName.set(tool.name, tool.kind === 'extra' ? { kind: 'extra', tool } : { kind: 'operation', tool: tool as OperationTool });
  }
  if (persistTool) {
    if (byName.has(persistTool.name)) throw new Error(`Duplicate tool name: ${persistTool.name} (the reflection gate's tool)`);
    byName.set(persistTool.name, { kind: 'persist', name: persistTool.name });
  }
  const metadata = (name: string): ToolMetadata | undefined => {
    const t = byName.get(name);
    return t && (t.kind === 'operation' || t.kind === 'extra') ? t.tool : undefined;
  };
  const preprocessors = new Set(options.preprocessorNames ?? []);
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
  const search = options.search;
  let listed: Tool[] | undefined;
  const catalogue = (): Tool[] => (listed ??= [...all.map(toolDescriptor), ...(persistTool ? [persistTool as Tool] : [])]);
  // search mode lists its three tools (and the gate's persist tool) instead of the catalogue
  const front: Tool[] | undefined = search ? [...(search.tools as Tool[]), ...(persistTool ? [persistTool as Tool] : [])] : undefined;
  // code mode lists search_tools, describe_tool and execute (and the persist tool)
  const code = search?.code;
  const codeFront: Tool[] | undefined = code ? [...(code.tools as Tool[]), ...(persistTool ? [persistTool as Tool] : [])] : undefined;
  const codeNames: ReadonlySet<string> = new Set(code ? code.tools.map((t) => t.name) : []);
  const policy = options.policy;
  const searchNames: ReadonlySet<string> = new Set(search ? [search.names.search, search.names.describe, search.names.call] : []);
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
    ...(code ? { code } : {}),
    ...(options.steps ? { steps: options.steps } : {}),
    ...(options.exchange ? { exchange: options.exchange } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.subscriptions ? { subscriptions: options.subscriptions } : {}),
  });

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
    if (!hasTools) return server;
    taskTools?.install(
      server,
      instance.era,
      (ctx) => ctx.http?.authInfo?.clientId ?? instance.identity ?? defaultIdentity,
      (tool, ctx) => gate.visible('tools', tool, ctx),
    );

    // search mode per concern preset: the request's active preset decides what is listed
    const activePreset = (gate as Partial<PresetGate>).activePreset;
    const modeOf = (ctx: ServerContext): 'list' | 'search' | 'code' => (search === undefined ? 'list' : (search.modeOf?.(activePreset?.(ctx)) ?? 'search'));
    const listsFront = (ctx: ServerContext): boolean => modeOf(ctx) === 'search';
    server.setRequestHandler('tools/list', (_request, ctx) => {
      listAnswered();
      // code mode: its own tools are always listed (the persist tool as the gate says)
      if (codeFront && modeOf(ctx) === 'code')
        return {
          tools: codeFront
            .filter((t) => codeNames.has(t.name) || gate.visible('tools', t.name, ctx))
            .map((t) => (codeNames.has(t.name) ? t : gate.decorate('tools', t.name, t))),
        };
      // search mode's own three tools are always listed: what they reach is filtered by the gate
      if (front && listsFront(ctx))
        return {
          tools:
            gate === OPEN_GATE
              ? front
              : front
                  .filter((t) => searchNames.has(t.name) || gate.visible('tools', t.name, ctx))
                  .map((t) => (searchNames.has(t.name) ? t : gate.decorate('tools', t.name, t))),
        };
      const shown = taskTools ? taskTools.listed(instance.era, catalogue()) : catalogue();
      if (gate === OPEN_GATE) return { tools: shown };
      return { tools: shown.filter((t) => gate.visible('tools', t.name, ctx)).map((t) => gate.decorate('tools', t.name, t)) };
    });

    /** Runs one tool call through the pipeline, carrying its logical call across input rounds. */
    const run = async (name: string, args: Record<string, unknown>, ctx: ServerContext, viaCallTool?: string, signal?: AbortSignal): Promise<ToolResult> => {
      // code mode's execute: the pipeline's call carries what the audit may keep (the code's hash); the code rides in the target
      const target: PipelineTool | undefined = code && name === code.executeName && !byName.has(name) ? { kind: 'code', name, args } : byName.get(name);
      if (!target) {
        if (preprocessors.has(name))
          throw invalidParams(
            `${name} is a preprocessor, not a tool: a host runs preprocessors with preprocessors/run, or gets their context from the with_context prompt`,
          );
        throw invalidParams(`Unknown tool: ${name}`);
      }
      // before anything else walks them: the audit trail, access control, validation, the gate
      const size = measureArguments(args, maxArgumentBytes);
      if (!size.fits) throw invalidParams(overLimitMessage(name, size, settingNames(config.envPrefix).maxArgumentBytes));
      const identity = ctx.http?.authInfo?.clientId ?? instance.identity ?? defaultIdentity;
      const round = roundOf(ctx.mcpReq.requestState());
      // a sealed state continues exactly the call it was issued for: the same tool, client and
      // arguments (else a client could replay one to pass off a new call as a later round, which
      // skips what runs once per call: its audit line, its rate count)
      if (round && !belongsTo(round, name, identity, args)) {
        throw invalidParams(`Invalid requestState: it belongs to another call (tool, client or arguments differ); retry the call without it`);
      }
      // …and continues it once: resending a later round would run it again (its writes too)
      if (round) {
        if (!hasNonce(round)) throw invalidParams('Invalid requestState: not the state of a tool call; retry the call without it');
        let claim: Awaited<ReturnType<RoundNonces['claim']>>;
        try {
          claim = await roundNonces.claim(round.nonce, ROUND_STATE_TTL_MS);
        } catch (err) {
          if (!(err instanceof SharedStateError)) throw err;
          log('warn', `${name}: cannot check that requestState is used once: ${err.message}`);
          return {
            isError: true,
            content: [{ type: 'text', text: `Cannot continue this call of ${name}: ${err.message}; its requestState was not used, send it again shortly` }],
          };
        }
        if (claim === 'used') {
          log('warn', `${name}: refused a requestState that was already used (call ${round.callId}, client ${identity})`);
          throw invalidParams('Invalid requestState: this requestState was already used (each continues its call once); start the call again without it');
        }
        if (claim === 'full') {
          log('warn', `${name}: refused an input round: too many rounds answered in the last ${ROUND_STATE_TTL_MS / 60_000} minutes to remember them all`);
          return {
            isError: true,
            content: [
              {
                type: 'text',
                text: `Cannot continue this call of ${name}: the server is answering too many input rounds at once; its requestState was not used, send it again shortly`,
              },
            ],
          };
        }
      }
      const headers = ctx.http?.req?.headers ?? instance.headers;
      const call: ToolCall = {
        name,
        target,
        args: target.kind === 'code' ? code!.auditArguments(args) : args,
        argumentBytes: size.bytes,
        server,
        ctx,
        era: instance.era,
        identity,
        callId: round ? round.callId : randomUUID(),
        firstRound: !round,
        state: round && typeof round.state === 'object' && round.state !== null ? { ...round.state } : {},
        signal: signal ?? ctx.mcpReq.signal,
        gate,
        ...(headers ? { headers } : {}),
        ...(viaCallTool !== undefined ? { viaCallTool } : {}),
      };
      const { result } = await runPipeline(steps, dispatch, call);
      // (execute's round state is bound to its arguments as sent, not to what the audit keeps of them)
      if (isInputRequired(result)) return { ...result, requestState: sealRound(stateKey, target.kind === 'code' ? { ...call, args } : call) };
      return result;
    };

    /** The tool names this request may see (for a did-you-mean: never a hidden one). */
    const visibleNames = (ctx: ServerContext): string[] => [...byName.keys()].filter((n) => gate.visible('tools', n, ctx));

    server.setRequestHandler('tools/call', { params: RAW_PARAMS }, async (params, ctx) => {
      const { name, arguments: raw } = params as { name: string; arguments?: unknown };
      // one value for validation, the gate and the call: a missing `arguments` is `{}` everywhere,
      // so leaving it out cannot skip the gate of a tool whose arguments are all optional; the
      // envelope (an object, or left out) was checked once, before this handler (instance.ts checkToolCall)
      const args = (raw ?? {}) as Record<string, unknown>;
      if (code && !byName.has(name) && codeNames.has(name) && modeOf(ctx) === 'code') {
        if (name === code.executeName) return run(name, args, ctx);
        if (name === search!.names.search)
          return search!.search(
            args,
            (n) => code.signature(n) !== undefined && gate.visible('tools', n, ctx),
            metadata,
            (n) => code.signature(n),
          );
        const wanted = stringArgument(args, 'name', name);
        const tool = metadata(wanted);
        const signature = code.signature(wanted);
        if (!tool || signature === undefined || !gate.visible('tools', wanted, ctx))
          return {
            isError: true,
            content: [
              {
                type: 'text',
                text: search!.unknown(
                  wanted,
                  visibleNames(ctx).filter((n) => code.signature(n) !== undefined),
                ),
              },
            ],
          };
        const described = {
          name: tool.name,
          ...(tool.title !== undefined ? { title: tool.title } : {}),
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          signature,
        };
        return {
          content: [{ type: 'text', text: `${tool.description ? `/** ${tool.description.replace(/\*\//g, '* /').slice(0, 1000)} */\n` : ''}${signature}` }],
          structuredContent: described,
        };
      }
      if (search && !byName.has(name)) {
        if (name === search.names.search) return search.search(args, (n) => metadata(n) !== undefined && gate.visible('tools', n, ctx), metadata);
        if (name === search.names.describe) {
          const wanted = stringArgument(args, 'name', name);
          const tool = metadata(wanted);
          if (!tool || !gate.visible('tools', wanted, ctx))
            return { isError: true, content: [{ type: 'text', text: search.unknown(wanted, visibleNames(ctx)) }] };
          const entry = gate.decorate('tools', tool.name, toolDescriptor(tool));
          return { content: [{ type: 'text', text: JSON.stringify(entry) }], structuredContent: entry as unknown as Record<string, unknown> };
        }
        if (name === search.names.call) {
          const inner = stringArgument(args, 'name', name);
          // the same -32602 as a direct call, with the closest names and a pointer to search_tools
          if (!byName.has(inner) && !preprocessors.has(inner)) throw invalidParams(search.unknown(inner, visibleNames(ctx)));
          return run(inner, callArguments(inner, args.arguments), ctx, name);
        }
      }
      // a task tool the client runs as a task: the call runs in the task, under its signal (tasks-tools.ts);
      // one the request may not see (access rules, scopes, concerns) gets no task: the pipeline refuses it at once
      if (taskTools && gate.visible('tools', name, ctx)) {
        const owner = ctx.http?.authInfo?.clientId ?? instance.identity ?? defaultIdentity;
        const work: TaskWork = async (taskSignal, resume) =>
          (await run(
            name,
            args,
            TaskTools.resumed(ctx, resume, (token) => openState(stateKey, token)),
            undefined,
            taskSignal,
          )) as CallToolResult;
        const asTask =
          (await taskTools.deferred(instance.era, name, ctx, owner, work)) ?? (await taskTools.call(instance.era, name, params, ctx, owner, server, work));
        if (asTask) return asTask;
      }
      return run(name, args, ctx);
    });
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

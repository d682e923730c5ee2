/**
 * What the server is and what it is built from, as types: the instance factory the transports
 * serve (`ServerFactory`, told about each instance by an `InstanceContext`), what a generated
 * entry adds besides its operation tools (`ServerExtensions`: search mode, subscriptions,
 * reflection, the install hook) and the options of `createServer` (server.ts builds it).
 */
import type { CallToolResult, Server, ServerCapabilities, ServerEventBus } from '@modelcontextprotocol/server';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import type { ToolEntry } from '../core/surface.js';
import type { OperationTool } from '../core/types.js';
import type { TokenExchanger } from '../oauth/oauth-exchange.js';
import type { ScopedPrimitives } from '../oauth/oauth-scopes.js';
import type { Authenticator } from '../operation/auth.js';
import type { OutputBacklog } from '../operation/in-flight.js';
import type { CallOptions } from '../operation/operation-call.js';
import type { HeaderRefusal } from '../operation/param-headers.js';
import type { CodeFront, PresetGate, ReflectionGuard } from '../pipeline/dispatch.js';
import type { Era, Step } from '../pipeline/pipeline.js';
import type { PolicyLayer } from '../pipeline/policy-layer.js';
import type { Settings } from '../process/settings.js';
import type { TaskStore } from '../tasks/tasks-store.js';
import type { AnyExtraTool } from '../tools/extra-tools.js';
import type { RoundNonces } from './round-nonces.js';

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

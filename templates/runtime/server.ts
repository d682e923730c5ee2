/**
 * The MCP server: publishes the generated tools with their JSON Schemas verbatim (low-level
 * `Server`, so draft 2020-12 schemas with `$defs` are not rewritten) and runs tool calls.
 *
 * Operation tools are built in; everything else a manifest can add comes in through
 * {@link ServerExtensions}: extra tools, capabilities, and an `install` hook that registers
 * prompts, resources and the concern methods and returns the gate the tool handlers filter and
 * guard with. This module imports none of those modules itself, so a project copies only the
 * runtime (and the dependencies) its manifest uses.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolRequest, CallToolResult, RequestId, ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { missingArgumentVariables, readArgumentEnv } from './arguments.js';
import { Authenticator, missingCredentials } from './auth.js';
import { callOperation } from './call.js';
import type { CallOptions } from './call.js';
import { callExtraTool } from './extra-tools.js';
import type { AnyExtraTool } from './extra-tools.js';
import { InFlightBudget } from './in-flight.js';
import { DEFAULT_MAX_IN_FLIGHT_BYTES } from './variables.js';
import type { OutputBacklog } from './in-flight.js';
import { log, parseLogLevel, setLogLevel } from './log.js';
import { toolEntry } from './surface.js';
import type { ToolEntry } from './surface.js';
import { OPEN_GATE } from './primitives.js';
import type { PrimitiveGate } from './primitives.js';
import { describeBase, resolveSettings, settingsVariables } from './settings.js';
import type { Settings } from './settings.js';
import type { OperationTool, ServerConfig } from './types.js';
import { validateArguments } from './validate.js';

/**
 * What the server needs of a reflection gate (`ReflectionGate` of reflection.ts is one; this
 * module does not import it, so servers without gates carry none of its code).
 */
export interface ToolGuard {
  /** Whether calls of `tool` are gated. */
  isGated(tool: string): boolean;
  /** Decides whether a gated tool may run now (after its arguments validated); else the result to return instead. */
  check(tool: string, args: unknown, ctx: { readonly server: Server; readonly signal: AbortSignal; readonly requestId?: RequestId }): Promise<{ readonly ok: true } | { readonly ok: false; readonly result: CallToolResult }>;
  /** Whether `persistTool` is listed and callable (the host flow exists). */
  readonly exposesPersistTool: boolean;
  /** The `persist_justification` tool. */
  readonly persistTool: ToolEntry;
  /** Runs `persistTool`; never throws. */
  persist(args: unknown): Promise<CallToolResult>;
}

/** Whether `args` pass the tool's input schema (a schema that cannot compile counts as no: the call reports it). */
function argumentsValid(tool: OperationTool | AnyExtraTool, args: unknown): boolean {
  try {
    return validateArguments(tool, args).length === 0;
  } catch {
    return false;
  }
}

/** `value`'s JSON type, for messages: `a string`, `an array`, `null`. */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * The params of a `tools/call` request, checked by hand: a malformed request is a JSON-RPC
 * invalid-params error (-32602) with one readable line, where the SDK's own schema answers
 * -32603 with a dump of its validation issues. The params object is passed on as received: the
 * SDK's schema would also drop an argument named `__proto__` (it never copies that key).
 */
function toolCallParams(params: unknown): CallToolRequest['params'] {
  const invalid = (why: string) => new InvalidParamsError(`Invalid tools/call request: ${why}`);
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw invalid(`params must be an object, not ${jsonType(params)}`);
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string') throw invalid(name === undefined ? 'name is required' : `name must be a string, not ${jsonType(name)}`);
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    throw new InvalidParamsError(`Invalid arguments for tool ${name}: arguments must be an object of argument values, not ${jsonType(args)}`);
  }
  return params as CallToolRequest['params'];
}

/** A JSON-RPC invalid-params error whose message is sent as is (`McpError` prefixes its own code to it). */
class InvalidParamsError extends Error {
  /** The JSON-RPC error code. */
  readonly code = ErrorCode.InvalidParams;
}

/** `tools/call` with the params checked by {@link toolCallParams}. */
const ToolCallRequestSchema = CallToolRequestSchema.extend({ params: z.unknown().transform(toolCallParams) });

/** What a generated entry adds to a server besides its operation tools. */
export type ServerExtensions = {
  /** Tools implemented by handlers, listed after the operation tools. */
  extraTools?: readonly AnyExtraTool[];
  /**
   * Capabilities to declare besides `tools` (prompts, resources, `experimental`); a `tools`
   * entry here replaces the default `{}` (e.g. `{ listChanged: true }`).
   */
  capabilities?: ServerCapabilities;
  /**
   * Called once for every new `Server`, before the tool handlers are registered: registers
   * further handlers (prompts, resources, concern methods) and returns the gate that filters
   * `tools/list` and guards `tools/call` for that server's session (none ⇒ everything open).
   */
  install?: (server: Server) => PrimitiveGate | void;
  /**
   * The reflection gate, shared by every session: gated tools run only once it allows them (their
   * arguments are validated first), and its `persist_justification` tool is listed after the others.
   */
  reflection?: ToolGuard;
  /** Names of the preprocessors: `tools/call` refuses them with a pointer to `preprocessors/run`. */
  preprocessorNames?: readonly string[];
};

/** Extra options of `createServer` (tests and embedding). */
export type CreateServerOptions = ServerExtensions & {
  /** Settings to use instead of resolving them from `config` and the environment. */
  settings?: Settings;
  /** fetch implementation passed to every call. */
  fetch?: CallOptions['fetch'];
  /** Credentials to use instead of `config.securitySchemes` with secrets from `env`. */
  auth?: Authenticator;
  /** What the transport has queued for sending: counted in the memory budget of responses in flight. */
  outputBacklog?: OutputBacklog;
};

/** The fields of a tool (operation or extra) its `tools/list` entry is made of. */
export type ToolMetadata = Pick<OperationTool, 'name' | 'title' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations'>;

/** The `tools/list` entry of a tool: its metadata and schemas, as generated (the same function the build measures with). */
export function toolDescriptor(tool: ToolMetadata): Tool {
  return toolEntry(tool) as Tool;
}

/**
 * Creates the MCP server for `tools` and `options.extraTools` (not yet connected). Settings come
 * from `config`, overridden by `<envPrefix>_*` variables in `env`; a malformed variable throws
 * `SettingsError`. `tools/call` for an unknown name fails with JSON-RPC error -32602
 * (InvalidParams), as does a call the gate refuses or of a preprocessor. Without any tool, no
 * `tools` capability is declared. Duplicate tool names throw.
 */
export function createServer(config: ServerConfig, tools: readonly OperationTool[], env: NodeJS.ProcessEnv = process.env, options: CreateServerOptions = {}): Server {
  const settings = options.settings ?? resolveSettings(config, env);
  const auth = options.auth ?? new Authenticator(config.securitySchemes ?? [], env);
  // read once, here: the values of hidden arguments are fixed for the life of the server
  const argumentEnv = readArgumentEnv(tools, env);
  // one memory budget for the response bodies of all calls in flight
  const inFlight = new InFlightBudget(settings.maxInFlightBytes ?? DEFAULT_MAX_IN_FLIGHT_BYTES, options.outputBacklog);
  const reflection = options.reflection;
  const persistTool = reflection?.exposesPersistTool ? reflection.persistTool : undefined;
  const all: ReadonlyArray<OperationTool | AnyExtraTool> = [...tools, ...(options.extraTools ?? [])];
  const byName = new Map<string, OperationTool | AnyExtraTool>();
  for (const tool of all) {
    if (byName.has(tool.name)) throw new Error(`Duplicate tool name: ${tool.name}`);
    byName.set(tool.name, tool);
  }
  if (persistTool && byName.has(persistTool.name)) throw new Error(`Duplicate tool name: ${persistTool.name} (the reflection gate's tool)`);
  const preprocessors = new Set(options.preprocessorNames ?? []);
  const hasTools = all.length > 0 || persistTool !== undefined;
  const { tools: toolsCapability, ...otherCapabilities } = options.capabilities ?? {};
  const capabilities: ServerCapabilities = hasTools ? { tools: toolsCapability ?? {}, ...otherCapabilities } : otherCapabilities;
  const serverOptions: ConstructorParameters<typeof Server>[1] = { capabilities };
  if (config.instructions !== undefined) serverOptions.instructions = config.instructions;
  const server = new Server({ name: config.name, version: config.version }, serverOptions);
  server.onerror = (err) => log('warn', 'MCP protocol error', err);
  const gate: PrimitiveGate = options.install?.(server) ?? OPEN_GATE;
  if (!hasTools) return server;

  let listed: Tool[] | undefined;
  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
    listed ??= [...all.map(toolDescriptor), ...(persistTool ? [persistTool as Tool] : [])];
    if (gate === OPEN_GATE) return { tools: listed };
    return { tools: listed.filter((t) => gate.visible('tools', t.name, extra)).map((t) => gate.decorate('tools', t.name, t)) };
  });
  server.setRequestHandler(ToolCallRequestSchema, async (request, extra) => {
    const { name } = request.params;
    // one value for validation, the gate and the call: a missing `arguments` is `{}` everywhere,
    // so leaving it out cannot skip the gate of a tool whose arguments are all optional
    const args = request.params.arguments ?? {};
    if (persistTool && reflection && name === persistTool.name) {
      gate.assertAllowed('tools', name, extra);
      return reflection.persist(args);
    }
    const tool = byName.get(name);
    if (!tool) {
      if (preprocessors.has(name)) throw new McpError(ErrorCode.InvalidParams, `${name} is a preprocessor, not a tool: a host runs preprocessors with preprocessors/run, or gets their context from the with_context prompt`);
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    gate.assertAllowed('tools', tool.name, extra);
    // invalid arguments are reported by the call itself, before any justification is asked for
    if (reflection?.isGated(tool.name) && argumentsValid(tool, args)) {
      const verdict = await reflection.check(tool.name, args, { server, signal: extra.signal, requestId: extra.requestId });
      if (!verdict.ok) return verdict.result;
    }
    if (tool.kind === 'extra') return callExtraTool(tool, args, extra.signal);
    // only the cancellation signal is taken from `extra`: the MCP client's own request headers
    // (`extra.requestInfo`, e.g. its Authorization) are never forwarded to the API
    const callOptions: CallOptions = { signal: extra.signal, auth, argumentEnv, inFlight };
    if (options.fetch) callOptions.fetch = options.fetch;
    return callOperation(tool, args, settings, callOptions);
  });
  return server;
}

/**
 * Serves `tools` (and what `extensions` adds) over stdio: logs one start-up line to stderr,
 * then runs until stdin closes or SIGINT/SIGTERM arrives, and exits with code 0. Bad settings
 * are logged and exit with code 1.
 */
export async function runStdio(config: ServerConfig, tools: readonly OperationTool[], env: NodeJS.ProcessEnv = process.env, extensions: ServerExtensions = {}): Promise<void> {
  const vars = settingsVariables(config.envPrefix);
  const level = parseLogLevel(env[vars.logLevel]);
  if (level) setLogLevel(level);
  let settings: Settings;
  let server: Server;
  try {
    settings = resolveSettings(config, env);
    // stdout is a socket or pipe the client reads at its own pace: results wait there in memory
    const outputBacklog: OutputBacklog = {
      bytes: () => process.stdout.writableLength,
      drained: () =>
        new Promise((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            process.stdout.off('drain', done);
            resolve();
          };
          const timer = setTimeout(done, 100);
          process.stdout.once('drain', done);
        }),
    };
    server = createServer(config, tools, env, { ...extensions, settings, outputBacklog });
  } catch (err) {
    log('error', `${config.name}: cannot start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }

  let closing = false;
  const shutdown = (reason: string): void => {
    if (closing) return;
    closing = true;
    log('info', `${config.name}: shutting down (${reason})`);
    server.close().then(
      () => process.exit(0),
      () => process.exit(0),
    );
  };
  process.stdin.once('end', () => shutdown('stdin closed'));
  process.stdin.once('close', () => shutdown('stdin closed'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.stdout.on('error', () => shutdown('stdout closed'));

  await server.connect(new StdioServerTransport());
  const where = settings.baseUrl !== undefined ? describeBase(settings) : `WARNING: ${vars.baseUrl} is not set, tool calls will fail until it is`;
  log(settings.baseUrl !== undefined ? 'info' : 'warn', `${config.name} ${config.version}: MCP server on stdio with ${tools.length + (extensions.extraTools?.length ?? 0)} tools${extensions.reflection ? ` (${extensions.reflection.exposesPersistTool ? 'reflection gate with persist_justification' : 'reflection gate, sampling only'})` : ''}; ${where}`);
  for (const m of missingCredentials(config.securitySchemes ?? [], env)) {
    log('warn', `${config.name}: credentials of security scheme ${JSON.stringify(m.scheme)} are not set (${m.variables.join(', ')}); tools that need them will fail until they are`);
  }
  for (const m of missingArgumentVariables(tools, env)) {
    log('warn', `${config.name}: ${m.variable} is not set, so hidden arguments of ${m.tools.join(', ')} have no value; those tools will fail until it is set and the server restarted`);
  }
}

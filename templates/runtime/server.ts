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

/**
 * What search mode needs (`createToolSearch` of search.ts makes one; this module does not import
 * it, so servers that list their tools carry none of its code or dependencies).
 */
export interface ToolSearch {
  /** The tools listed instead of the catalogue, in list order. */
  readonly tools: readonly ToolEntry[];
  /** Names of the three search-mode tools. */
  readonly names: { readonly search: string; readonly describe: string; readonly call: string };
  /** Answers `search_tools` over the tools `keep` accepts; invalid arguments throw -32602. */
  search(args: unknown, keep: (name: string) => boolean, describe: (name: string) => ToolMetadata | undefined): CallToolResult;
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

/** A required string argument of a search-mode tool; anything else is invalid params. */
function stringArgument(args: unknown, key: string, tool: string): string {
  const value = (args as Record<string, unknown>)[key];
  if (typeof value !== 'string' || value.length === 0) throw new InvalidParamsError(`Invalid arguments for tool ${tool}: ${key} must be a non-empty string`);
  return value;
}

/** The `describe_tool` answer for a name the server does not have (or hides). */
function notFound(name: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `No tool named ${JSON.stringify(name)}: use search_tools to find the tools for a task.` }] };
}

/** A gate hint for a call made through `call_tool`: the retry goes through `call_tool` too. */
function retryThroughCallTool(result: CallToolResult, tool: string, callTool: string): CallToolResult {
  const note = `Then call ${callTool} again with {"name": ${JSON.stringify(tool)}, "arguments": <the same arguments>}.`;
  const [first, ...rest] = result.content;
  if (first?.type !== 'text') return { ...result, content: [{ type: 'text', text: note }, ...result.content] };
  const plain = `Then call ${tool} again with the same arguments.`;
  const text = first.text.includes(plain) ? first.text.replace(plain, note) : `${first.text}\n${note}`;
  return { ...result, content: [{ ...first, text }, ...rest] };
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
  /**
   * Search mode: list `search_tools`, `describe_tool` and `call_tool` (runtime/search-tools.ts)
   * instead of the tools, and answer them with this index (runtime/search.ts). Every tool stays
   * callable, through `call_tool` or directly, by the same code path.
   */
  search?: ToolSearch;
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
  const catalogue = (): Tool[] => (listed ??= [...all.map(toolDescriptor), ...(persistTool ? [persistTool as Tool] : [])]);
  const search = options.search;
  // search mode lists its three tools (and the gate's persist tool) instead of the catalogue
  const front: Tool[] | undefined = search ? [...(search.tools as Tool[]), ...(persistTool ? [persistTool as Tool] : [])] : undefined;
  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
    const shown = front ?? catalogue();
    if (gate === OPEN_GATE) return { tools: shown };
    return { tools: shown.filter((t) => gate.visible('tools', t.name, extra)).map((t) => gate.decorate('tools', t.name, t)) };
  });

  type Extra = Parameters<Parameters<typeof server.setRequestHandler<typeof ToolCallRequestSchema>>[1]>[1];
  /** One tool call, the same whether it came directly or through `call_tool`. */
  const dispatch = async (name: string, args: unknown, extra: Extra, viaCallTool?: string): Promise<CallToolResult> => {
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
      if (!verdict.ok) return viaCallTool !== undefined ? retryThroughCallTool(verdict.result, tool.name, viaCallTool) : verdict.result;
    }
    if (tool.kind === 'extra') return callExtraTool(tool, args, extra.signal);
    // only the cancellation signal is taken from `extra`: the MCP client's own request headers
    // (`extra.requestInfo`, e.g. its Authorization) are never forwarded to the API
    const callOptions: CallOptions = { signal: extra.signal, auth, argumentEnv, inFlight };
    if (options.fetch) callOptions.fetch = options.fetch;
    return callOperation(tool, args, settings, callOptions);
  };

  server.setRequestHandler(ToolCallRequestSchema, async (request, extra) => {
    const { name } = request.params;
    // one value for validation, the gate and the call: a missing `arguments` is `{}` everywhere,
    // so leaving it out cannot skip the gate of a tool whose arguments are all optional
    const args = request.params.arguments ?? {};
    if (search && !byName.has(name)) {
      if (name === search.names.search) return search.search(args, (n) => byName.has(n) && gate.visible('tools', n, extra), (n) => byName.get(n));
      if (name === search.names.describe) {
        const wanted = stringArgument(args, 'name', name);
        const tool = byName.get(wanted);
        if (!tool || !gate.visible('tools', wanted, extra)) return notFound(wanted);
        const entry = gate.decorate('tools', tool.name, toolDescriptor(tool));
        return { content: [{ type: 'text', text: JSON.stringify(entry) }], structuredContent: entry as unknown as Record<string, unknown> };
      }
      if (name === search.names.call) {
        const inner = toolCallParams({ name: stringArgument(args, 'name', name), arguments: (args as { arguments?: unknown }).arguments });
        return dispatch(inner.name, inner.arguments ?? {}, extra, name);
      }
    }
    return dispatch(name, args, extra);
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

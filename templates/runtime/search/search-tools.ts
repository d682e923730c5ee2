/**
 * The tools a server in search mode lists instead of its catalogue: `search_tools`,
 * `describe_tool` and `call_tool`. Pure data, with no imports but types: mcpgen measures the
 * listed surface with this module at build time, and the generated server lists these entries.
 *
 * This file is copied into generated projects that use search mode.
 */
import type { ToolEntry } from '../core/surface.js';

/** Names of the search-mode tools. */
export const SEARCH_TOOL_NAMES = { search: 'search_tools', describe: 'describe_tool', call: 'call_tool' } as const;

/** Bounds of every search-mode answer: no call returns the whole catalogue. */
export const SEARCH_LIMITS = {
  /** Results of `search_tools` when `limit` is not given. */
  defaultLimit: 5,
  /** Most results of one `search_tools` call. */
  maxLimit: 20,
  /** Characters of a description in a `search_tools` result. */
  descriptionChars: 200,
  /** Most bytes of a ranked answer's text at the default limit or below: descriptions are cut shorter to fit. */
  answerBytes: 2048,
  /** Characters of a query. */
  queryChars: 500,
  /** Areas in one page of a query-less `search_tools` answer. */
  areaPage: 20,
  /** Characters of an area's `about` line. */
  areaAboutChars: 50,
  /** Tools in one page of an area's listing. */
  toolPage: 15,
  /** Characters of a tool's summary in an area's listing. */
  toolLineChars: 70,
} as const;

/** The HTTP methods `search_tools` filters on. */
export const SEARCH_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The `tools/list` entries of search mode, in list order. */
export const SEARCH_TOOLS: readonly ToolEntry[] = [
  {
    name: SEARCH_TOOL_NAMES.search,
    title: 'Search tools',
    description: `Finds the tools of this server that fit a task, best match first. Describe the task in plain words; then call describe_tool for a tool's arguments, and call_tool to run it. No query: the API's areas; a tag: only that area.`,
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: SEARCH_LIMITS.queryChars, description: 'What you want to do, in plain words.' },
        limit: { type: 'integer', minimum: 1, maximum: SEARCH_LIMITS.maxLimit, default: SEARCH_LIMITS.defaultLimit },
        method: { type: 'string', enum: [...SEARCH_METHODS] },
        tag: { type: 'string' },
        page: { type: 'integer', minimum: 1 },
      },
      additionalProperties: false,
    },
    annotations: { title: 'Search tools', readOnlyHint: true, openWorldHint: false },
  },
  {
    name: SEARCH_TOOL_NAMES.describe,
    title: 'Describe tool',
    description: 'The full definition of one tool (as tools/list would give it): description, input schema, output schema and annotations.',
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, description: 'The tool name, from search_tools.' } },
      required: ['name'],
      additionalProperties: false,
    },
    annotations: { title: 'Describe tool', readOnlyHint: true, openWorldHint: false },
  },
  {
    name: SEARCH_TOOL_NAMES.call,
    title: 'Call tool',
    description: 'Runs one tool of this server with its arguments, exactly as if it were called directly. Use describe_tool first for its input schema.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, description: 'The tool name, from search_tools.' },
        arguments: { type: 'object', description: "The tool's arguments, as its input schema describes them." },
      },
      required: ['name'],
      additionalProperties: false,
    },
    annotations: { title: 'Call tool', openWorldHint: true },
  },
];

/** Names of the code-mode tools (manifest `discovery: code`): search and describe as in search mode, and `execute`. */
export const CODE_TOOL_NAMES = { search: SEARCH_TOOL_NAMES.search, describe: SEARCH_TOOL_NAMES.describe, execute: 'execute' } as const;

/** The `tools/list` entries of code mode, in list order. */
export const CODE_TOOLS: readonly ToolEntry[] = [
  {
    ...SEARCH_TOOLS[0]!,
    description: `Finds the API operations that fit a task, best match first, each with its TypeScript signature for execute. Describe the task in plain words. No query: the API's areas; a tag: only that area.`,
  },
  {
    ...SEARCH_TOOLS[1]!,
    description: "One operation's TypeScript signature (api.<name>(args): Promise<result>) and description, for code run by execute.",
  },
  {
    name: CODE_TOOL_NAMES.execute,
    title: 'Execute code',
    description:
      'Runs TypeScript or JavaScript (the body of an async function) in a sandbox and returns what it returns, plus its console output. `api.<name>(args)` calls an operation (signatures from search_tools/describe_tool) and resolves to its data, or throws an Error with status and body. Only api, console and the language exist: no network, files or timers. Filter and join in code; return only what is needed.',
    inputSchema: {
      type: 'object',
      properties: { code: { type: 'string', minLength: 1, description: 'The body of an async function: await api calls, then return a JSON value.' } },
      required: ['code'],
      additionalProperties: false,
    },
    annotations: { title: 'Execute code', openWorldHint: true },
  },
];

/**
 * The tools a server serves, built once by `createServer` for all its instances: each tool by
 * name with what runs it (an operation, an extra tool's handler, the reflection gate's persist
 * tool), the catalogue `tools/list` shows, and the tools search mode and code mode list instead.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { toolEntry } from '../core/surface.js';
import type { OperationTool } from '../core/types.js';
import type { CodeFront, ReflectionGuard } from '../pipeline/dispatch.js';
import type { PipelineTool } from '../pipeline/pipeline.js';
import type { AnyExtraTool } from '../tools/extra-tools.js';
import type { ToolMetadata, ToolSearch } from './server-types.js';

/** The `tools/list` entry of a tool: its metadata and schemas, as generated (the same function the build measures with). */
export function toolDescriptor(tool: ToolMetadata): Tool {
  return toolEntry(tool) as Tool;
}

/** What a server serves as tools. */
export type ToolTable = {
  /** The operation tools, then the extra tools. */
  readonly all: ReadonlyArray<OperationTool | AnyExtraTool>;
  /** Every callable tool by name: those of `all` and the persist tool (when the gate exposes it). */
  readonly byName: ReadonlyMap<string, PipelineTool>;
  /** The metadata of an operation or extra tool. */
  metadata(name: string): ToolMetadata | undefined;
  /** The `tools/list` entries of every tool (made on first use). */
  catalogue(): Tool[];
  /** Names of the preprocessors: `tools/call` refuses them with a pointer to `preprocessors/run`. */
  readonly preprocessors: ReadonlySet<string>;
  readonly search?: ToolSearch;
  /** Search mode's list: its three tools (and the gate's persist tool) instead of the catalogue. */
  readonly front?: Tool[];
  readonly searchNames: ReadonlySet<string>;
  readonly code?: CodeFront;
  /** Code mode's list: search_tools, describe_tool and execute (and the persist tool). */
  readonly codeFront?: Tool[];
  readonly codeNames: ReadonlySet<string>;
};

/** The tool table of operation tools `tools` and `extraTools`; duplicate tool names throw. */
export function toolTable(
  tools: readonly OperationTool[],
  extraTools: readonly AnyExtraTool[] = [],
  reflection: ReflectionGuard | undefined,
  search: ToolSearch | undefined,
  preprocessorNames: readonly string[] = [],
): ToolTable {
  const persistTool = reflection?.exposesPersistTool ? reflection.persistTool : undefined;
  const all: ReadonlyArray<OperationTool | AnyExtraTool> = [...tools, ...extraTools];
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
  let listed: Tool[] | undefined;
  const catalogue = (): Tool[] => (listed ??= [...all.map(toolDescriptor), ...(persistTool ? [persistTool as Tool] : [])]);
  const front: Tool[] | undefined = search ? [...(search.tools as Tool[]), ...(persistTool ? [persistTool as Tool] : [])] : undefined;
  const code = search?.code;
  const codeFront: Tool[] | undefined = code ? [...(code.tools as Tool[]), ...(persistTool ? [persistTool as Tool] : [])] : undefined;
  return {
    all,
    byName,
    metadata,
    catalogue,
    preprocessors: new Set(preprocessorNames),
    searchNames: new Set(search ? [search.names.search, search.names.describe, search.names.call] : []),
    codeNames: new Set(code ? code.tools.map((t) => t.name) : []),
    ...(search ? { search } : {}),
    ...(front ? { front } : {}),
    ...(code ? { code } : {}),
    ...(codeFront ? { codeFront } : {}),
  };
}

/**
 * The command lines that connect a client to a generated server: `claude mcp add` (Claude Code
 * CLI) and the MCP Inspector CLI, each over stdio and over HTTP. The generated README prints
 * them and `mcpgen build` prints the stdio one with the real path; both come from here, and
 * test/e2e/client-lines.test.ts runs them, exactly as printed, with the clients they are for.
 *
 * Argument order matters to both clients: `claude mcp add --header <header...>` and the
 * Inspector's `--tool-arg <pairs...>` are variadic, so the server's name, URL or command comes
 * before them, never after.
 */

import { shellQuote } from '../../core/shell.js';
import type { IrServer } from '../../ir/types.js';
import { clientConfigs, httpHeaderPlaceholders } from './ship.js';

export { shellQuote };

/** The Inspector the lines run: pinned, because on Node 20 an unpinned `npx` picks an old release (newer ones declare Node 22). */
export const INSPECTOR_PACKAGE = '@modelcontextprotocol/inspector@2.12.0';

const line = (words: readonly string[]) => words.map(shellQuote).join(' ');

export type ClientLines = {
  /** `claude mcp add <name> [-e VAR=...] -- node <entry>`. */
  claudeStdio: string;
  /** `claude mcp add --transport http <name> <url> [--header '…']`. */
  claudeHttp: string;
  /** Inspector CLI: list the tools of the server started over stdio from this folder. */
  inspectorStdio: string;
  /** Inspector CLI: list the tools of the server serving HTTP at its default URL. */
  inspectorHttp: string;
};

/**
 * The lines for one server. `entry` is the path the stdio lines start (`node <entry>`); the
 * README's Claude line uses a placeholder absolute path, its Inspector line runs from the
 * project folder (`dist/server.js`), and `mcpgen build` passes the real absolute path.
 */
export function clientLines(ir: IrServer, entry?: { claude?: string; inspector?: string }): ClientLines {
  const clients = clientConfigs(ir);
  const add = clients.claudeCodeAdd;
  const claudeEntry = entry?.claude ?? add.command[1]!;
  const inspectorEntry = entry?.inspector ?? 'dist/server.js';
  return {
    claudeStdio: line(['claude', 'mcp', 'add', add.name, ...add.env.flatMap((e) => ['-e', e]), '--', 'node', claudeEntry]),
    claudeHttp: line(clients.http.claudeCodeAdd),
    inspectorStdio: line(['npx', '-y', INSPECTOR_PACKAGE, '--cli', ...add.env.flatMap((e) => ['-e', e]), 'node', inspectorEntry, '--method', 'tools/list']),
    inspectorHttp: line([
      'npx',
      '-y',
      INSPECTOR_PACKAGE,
      '--cli',
      clients.http.url,
      '--transport',
      'http',
      ...httpHeaderPlaceholders(ir).flatMap(([h, v]) => ['--header', `${h}: ${v}`]),
      '--method',
      'tools/list',
    ]),
  };
}

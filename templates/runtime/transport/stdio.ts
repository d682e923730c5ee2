/**
 * Serves a server factory over stdio, in both protocol eras: the SDK's `serveStdio` reads the
 * client's opening (an `initialize` request, or a 2026-07-28 request with its `_meta` envelope)
 * and pins one instance of that era for the connection. Runs until stdin closes or SIGINT/SIGTERM
 * arrives, then exits with code 0. stdout carries the protocol only; logs go to stderr.
 *
 * This file is copied verbatim into every generated project.
 */
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { log } from '../core/log.js';
import type { OutputBacklog } from '../operation/in-flight.js';
import { shutdownRoutine } from '../process/shutdown.js';
import type { ServerFactory } from '../server/server.js';
import { withTaskListen } from '../tasks/tasks-stdio.js';

/** What stdout holds for the client to read: results wait there in memory, counted in the response budget. */
export const STDOUT_BACKLOG: OutputBacklog = {
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

/** Serves `factory` on this process's stdin/stdout until the client goes away or a signal arrives; exits at the latest `exitWithinMs` after that. */
export function serveOnStdio(
  factory: ServerFactory,
  name: string,
  identity: string,
  beforeExit: () => Promise<void> = () => Promise.resolve(),
  exitWithinMs = 10_700,
): void {
  // with task tools, 2026-07-28 listen requests for task ids are served before the SDK's entry (tasks-stdio.ts)
  const transport = factory.taskListen ? withTaskListen(new StdioServerTransport(), factory.taskListen, identity) : undefined;
  const handle = serveStdio((ctx) => factory({ era: ctx.era, identity }), {
    onerror: (err) => log('warn', 'MCP protocol error', err),
    ...(transport ? { transport } : {}),
  });
  const shutdown = shutdownRoutine(name, exitWithinMs, () => handle.close().then(beforeExit));
  process.stdin.once('end', () => shutdown('stdin closed'));
  process.stdin.once('close', () => shutdown('stdin closed'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.stdout.on('error', () => shutdown('stdout closed'));
}

/**
 * The `mcpgen` command line: flag parsing only; the work is in `commands.ts`.
 * Exit codes: 0 success, 1 validation errors or drift (`--check`), 2 usage errors.
 */
import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { packageFile } from '../core/paths.js';
import { suggest } from '../core/suggest.js';
// the commands are loaded when one runs (`--help`, `--version` and usage errors load none of
// them; `init` and `--watch` code, with chokidar, only for those)
import type { Io } from './commands.js';
import { NO_PROGRESS, paint, progressDelay, startProgress, useColor, useProgress } from './terminal.js';

const VERSION = (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version;

/** Every option of each command (and the global ones), for "did you mean" on an unknown one. */
const OPTIONS: Record<string, readonly string[]> = {
  build: ['out', 'check', 'format', 'report', 'quiet', 'watch', 'no-cache'],
  validate: ['format', 'quiet', 'no-cache'],
  init: ['out', 'tag', 'exclude-tag', 'method'],
  fix: ['dry-run'],
};
const GLOBAL_OPTIONS = ['help', 'version'];

/**
 * Adds "did you mean --format?" to yargs' `Unknown argument(s): frmat, …` for every unknown name
 * that was given as an option (`--frmat`, `--frmat=json`, `-frmat`) and is close to one of the
 * command's options.
 */
export function suggestOptions(message: string, argv: readonly string[]): string[] {
  const m = /^Unknown arguments?: (.*)$/.exec(message);
  if (!m) return [];
  const command = argv.find((a) => !a.startsWith('-'));
  const known = [...(command !== undefined && Object.hasOwn(OPTIONS, command) ? OPTIONS[command]! : Object.values(OPTIONS).flat()), ...GLOBAL_OPTIONS];
  const given = new Set(argv.filter((a) => a.startsWith('-')).map((a) => a.replace(/^-+/, '').split('=')[0]!));
  const out: string[] = [];
  for (const name of m[1]!.split(', ')) {
    if (!given.has(name)) continue;
    const near = suggest(name, new Set(known));
    if (near !== undefined) out.push(`Did you mean --${near} (not --${name})?`);
  }
  return out;
}

/** Runs the CLI with the given arguments; resolves to the exit code. */
export async function main(argv: string[], io: Io = defaultIo()): Promise<number> {
  let code = 0;
  let usageError: string | undefined;
  const usageErrors: string[] = [];
  const parser = yargs(argv)
    .scriptName('mcpgen')
    .usage('$0 <command> [options]\n\nCompile an OpenAPI description and a YAML manifest into a typed TypeScript MCP server project.')
    .command(
      'build <manifest>',
      "Generate the server project into the manifest's output directory",
      (y) =>
        y
          .positional('manifest', { type: 'string', demandOption: true, describe: 'Path of the manifest (mcpgen.yaml)' })
          .option('out', { type: 'string', describe: "Output directory (overrides the manifest's `output`)" })
          .option('check', { type: 'boolean', default: false, describe: 'Write nothing; exit 1 listing every file that would be added, changed or removed' })
          .option('format', { choices: ['text', 'json', 'github'] as const, default: 'text' as const, describe: 'Diagnostics format' })
          .option('report', { type: 'boolean', default: false, describe: "Also count the tool surface's tokens (o200k) and list the largest tools" })
          .option('quiet', {
            alias: 'q',
            type: 'boolean',
            default: false,
            describe: 'No progress and no success message; diagnostics and drift are still printed',
          })
          .option('watch', {
            alias: 'w',
            type: 'boolean',
            default: false,
            describe: 'Build, then rebuild whenever the manifest, the spec, a handler or a template changes (Ctrl-C stops)',
          })
          .option('cache', {
            type: 'boolean',
            default: true,
            describe:
              'Keep the checked spec in .cache/mcpgen/ beside the manifest and reuse it while it is unchanged (--no-cache: read and check it anew, touch no cache)',
          })
          .check((a) => !(a.watch && a.check) || '--watch and --check cannot be used together: --check is for CI, --watch for editing'),
      async (a) => {
        if (usageError !== undefined) return;
        const opts = {
          manifest: a.manifest,
          format: a.format,
          report: a.report,
          quiet: a.quiet,
          cache: a.cache,
          ...(a.out !== undefined ? { out: a.out } : {}),
        };
        if (a.watch) {
          const { runWatch } = await import('./watch.js');
          code = await runWatch({ ...opts, color: io.colors?.stdout.enabled === true }, io, io.signal ?? stopSignal());
        } else {
          const { runBuild } = await import('./commands.js');
          code = await runBuild({ ...opts, check: a.check }, io);
        }
      },
    )
    .command(
      'validate <manifest>',
      'Run every check on the manifest and the OpenAPI description; write nothing',
      (y) =>
        y
          .positional('manifest', { type: 'string', demandOption: true, describe: 'Path of the manifest (mcpgen.yaml)' })
          .option('format', { choices: ['text', 'json', 'github'] as const, default: 'text' as const, describe: 'Diagnostics format' })
          .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'No progress and no success message; diagnostics are still printed' })
          .option('cache', {
            type: 'boolean',
            default: true,
            describe: 'Reuse the checked spec kept in .cache/mcpgen/ beside the manifest (--no-cache: read and check it anew, touch no cache)',
          }),
      async (a) => {
        if (usageError !== undefined) return;
        const { runValidate } = await import('./commands.js');
        code = await runValidate({ manifest: a.manifest, format: a.format, quiet: a.quiet, cache: a.cache }, io);
      },
    )
    .command(
      'init <spec>',
      'Write a commented starter manifest for an OpenAPI description (never over an existing file)',
      (y) =>
        y
          .positional('spec', { type: 'string', demandOption: true, describe: 'Path of the OpenAPI description (YAML or JSON)' })
          .option('out', { type: 'string', default: 'mcpgen.yaml', describe: 'Where to write the manifest' })
          .option('tag', { type: 'string', array: true, nargs: 1, describe: 'Keep only operations with this tag (repeatable; any of them)' })
          .option('exclude-tag', { type: 'string', array: true, nargs: 1, describe: 'Leave out operations with this tag (repeatable; wins over --tag)' })
          .option('method', {
            type: 'string',
            array: true,
            nargs: 1,
            describe: 'Keep only operations with this HTTP method, e.g. GET (repeatable; any of them)',
          }),
      async (a) => {
        if (usageError !== undefined) return;
        const { runInit } = await import('./init.js');
        code = await runInit({ spec: a.spec, out: a.out, tags: a.tag ?? [], excludeTags: a['exclude-tag'] ?? [], methods: a.method ?? [] }, io);
      },
    )
    .command(
      'fix <manifest>',
      'Remove the manifest entries that name operations include/exclude leave out (comments and order kept)',
      (y) =>
        y
          .positional('manifest', { type: 'string', demandOption: true, describe: 'Path of the manifest (mcpgen.yaml)' })
          .option('dry-run', { type: 'boolean', default: false, describe: 'Print what would be removed; write nothing' }),
      async (a) => {
        if (usageError !== undefined) return;
        const { runFix } = await import('./fix.js');
        code = await runFix({ manifest: a.manifest, dryRun: a['dry-run'] }, io);
      },
    )
    .demandCommand(1, 'Name a command: build, validate, init or fix.')
    .recommendCommands()
    .strict()
    .version(VERSION)
    .help()
    .alias('h', 'help')
    .alias('v', 'version')
    .wrap(Math.min(100, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((msg, err) => {
      // a failed `.check()` comes as its message (a string) or a YError: a usage error too; any other error is a bug
      const e = err as unknown;
      if (e instanceof Error && e.name !== 'YError') throw e;
      const text = msg ?? (e instanceof Error ? e.message : typeof e === 'string' ? e : 'invalid arguments');
      // yargs may report several problems (e.g. "Did you mean build?" then "Unknown arguments")
      usageErrors.push(text, ...suggestOptions(text, argv));
      const hints = usageErrors.filter((m) => m.startsWith('Did you mean'));
      usageError = [...usageErrors.filter((m) => !m.startsWith('Did you mean')), ...hints].join('\n');
    });
  skipHelpCache(parser);
  let helpText = '';
  try {
    await parser.parseAsync(argv, {}, (_err, _argv, output) => {
      helpText = output;
    });
  } catch (e) {
    // a bug in mcpgen, not in the user's input: say so plainly; the stack only on request
    const detail = process.env.MCPGEN_DEBUG ? ((e as Error).stack ?? String(e)) : ((e as Error).message ?? String(e));
    io.stderr(`mcpgen: internal error: ${detail}\nThis is a bug in mcpgen; run again with MCPGEN_DEBUG=1 for details and report it.\n`);
    return 70;
  }
  if (usageError !== undefined) {
    io.stderr(`${await parser.getHelp()}\n\nmcpgen: ${usageError}\n`);
    return 2;
  }
  if (helpText) io.stdout(helpText + '\n');
  return code;
}

/**
 * yargs renders the command's whole help text after starting its handler, only to keep it for a
 * later `showHelp` (about 20 ms of every build, 5% of a Petstore build's CPU). mcpgen prints help
 * only for `--help` and for a usage error, both before any handler runs, and renders it then; so
 * the keeping is turned off (through yargs' internal methods, when it has them).
 */
function skipHelpCache(parser: unknown): void {
  const internal = (parser as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: unknown } } }).getInternalMethods?.();
  const usage = internal?.getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => undefined;
}

const NO_COLORS = paint(false);

/** Aborts on SIGINT or SIGTERM (for `--watch`). */
function stopSignal(): AbortSignal {
  const ac = new AbortController();
  const stop = () => ac.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return ac.signal;
}

/** The process' streams: colours and progress only where a terminal shows them (terminal.ts decides). */
function defaultIo(): Io {
  const colorOut = useColor(process.stdout, process.env);
  const colorErr = useColor(process.stderr, process.env);
  return {
    stdout: (s) => void process.stdout.write(s),
    stderr: (s) => void process.stderr.write(s),
    cwd: process.cwd(),
    ...(colorOut || colorErr ? { colors: { stdout: colorOut ? paint(true) : NO_COLORS, stderr: colorErr ? paint(true) : NO_COLORS } } : {}),
    progress: (label) => (useProgress(process.stderr, process.env, false) ? startProgress(process.stderr, label, progressDelay(process.env)) : NO_PROGRESS),
  };
}

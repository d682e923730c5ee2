/**
 * The `mcpgen` command line: flag parsing only; the work is in `commands.ts`.
 * Exit codes: 0 success, 1 validation errors or drift (`--check`), 2 usage errors.
 */
import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { runBuild, runValidate, type Io } from './commands.js';
import { packageFile } from '../paths.js';

const VERSION = (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version;

/** Runs the CLI with the given arguments; resolves to the exit code. */
export async function main(argv: string[], io: Io = defaultIo()): Promise<number> {
  let code = 0;
  let usageError: string | undefined;
  const parser = yargs(argv)
    .scriptName('mcpgen')
    .usage('$0 <command> [options]\n\nCompile an OpenAPI description and a YAML manifest into a typed TypeScript MCP server project.')
    .command(
      'build <manifest>',
      'Generate the server project into the manifest\'s output directory',
      (y) =>
        y
          .positional('manifest', { type: 'string', demandOption: true, describe: 'Path of the manifest (mcpgen.yaml)' })
          .option('out', { type: 'string', describe: 'Output directory (overrides the manifest\'s `output`)' })
          .option('check', { type: 'boolean', default: false, describe: 'Write nothing; exit 1 listing every file that would be added, changed or removed' })
          .option('format', { choices: ['text', 'json', 'github'] as const, default: 'text' as const, describe: 'Diagnostics format' })
          .option('report', { type: 'boolean', default: false, describe: 'Also count the tool surface\'s tokens (o200k) and list the largest tools' }),
      async (a) => {
        if (usageError !== undefined) return;
        code = await runBuild({ manifest: a.manifest, check: a.check, format: a.format, report: a.report, ...(a.out !== undefined ? { out: a.out } : {}) }, io);
      },
    )
    .command(
      'validate <manifest>',
      'Run every check on the manifest and the OpenAPI description; write nothing',
      (y) =>
        y
          .positional('manifest', { type: 'string', demandOption: true, describe: 'Path of the manifest (mcpgen.yaml)' })
          .option('format', { choices: ['text', 'json', 'github'] as const, default: 'text' as const, describe: 'Diagnostics format' }),
      async (a) => {
        if (usageError !== undefined) return;
        code = await runValidate({ manifest: a.manifest, format: a.format }, io);
      },
    )
    .demandCommand(1, 'Name a command: build or validate.')
    .strict()
    .version(VERSION)
    .help()
    .alias('h', 'help')
    .alias('v', 'version')
    .wrap(Math.min(100, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((msg, err) => {
      if (err) throw err;
      usageError = msg;
    });
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

function defaultIo(): Io {
  return {
    stdout: (s) => void process.stdout.write(s),
    stderr: (s) => void process.stderr.write(s),
    cwd: process.cwd(),
  };
}

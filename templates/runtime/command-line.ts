/**
 * The server's command line. Without arguments the server serves MCP over stdio; `--help`,
 * `--version` and `--print-config` answer on stdout and exit instead, and those are the only
 * times the server writes anything but protocol messages to stdout. An unknown argument is
 * reported on stderr with exit code 2, so a typo never starts a server that ignores it.
 *
 * `--print-config` lists every variable the server reads (variables.ts) with the value it would
 * use: what the environment sets, or the default. Secrets are masked; a malformed setting is
 * reported on stderr and makes the exit code 1.
 */
import { resolveSettings } from './settings.js';
import type { ServerConfig } from './types.js';
import { serverVariables } from './variables.js';
import type { Variable, VariableTool } from './variables.js';

/** An option that answers instead of serving. */
type Answer = 'help' | 'version' | 'print-config';

/** What the arguments ask for. */
export type Command = { readonly kind: 'serve' | Answer } | { readonly kind: 'error'; readonly message: string };

/** Where the answers go (replaceable for tests). */
export type CommandLineIo = {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Ends the process once everything written has been flushed. */
  exit: (code: number) => void;
};

/** What the command line needs to know of the server. */
export type CommandLineOptions = {
  /** The reflection gate's store directory, when the server has a gate. */
  reflectionDir?: string;
  env?: NodeJS.ProcessEnv;
  io?: CommandLineIo;
};

const PROCESS_IO: CommandLineIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  // an empty write completes after every earlier one: stdout is flushed before the process ends
  exit: (code) => void process.stdout.write('', () => process.exit(code)),
};

const OPTIONS: ReadonlyArray<readonly [string, Answer, string]> = [
  ['--print-config', 'print-config', 'Print the configuration read from the environment (secrets masked), then exit'],
  ['--version', 'version', 'Print the version, then exit'],
  ['--help', 'help', 'Print this help, then exit'],
];

/** Reads the arguments (`process.argv.slice(2)`): none serves, one option answers, anything else is an error. */
export function parseCommandLine(argv: readonly string[]): Command {
  if (argv.length === 0) return { kind: 'serve' };
  const aliases: Record<string, Answer> = { '-h': 'help', '-v': 'version' };
  const kinds = argv.map((a) => OPTIONS.find(([flag]) => flag === a)?.[1] ?? aliases[a]);
  const unknown = argv.find((_, i) => kinds[i] === undefined);
  if (unknown !== undefined) return { kind: 'error', message: `unknown ${unknown.startsWith('-') ? 'option' : 'argument'} ${JSON.stringify(unknown)}` };
  if (argv.length > 1) return { kind: 'error', message: `one option at a time (got ${argv.join(' ')})` };
  return { kind: kinds[0]! };
}

/** A value as printed: as is when it is plain, else as a JSON string (no line break can split a line). */
function shown(value: string): string {
  return /^[\x21-\x7e]*$/.test(value) && !value.startsWith('"') ? value : JSON.stringify(value);
}

/** Value of a variable, trimmed; `undefined` when unset or blank (as the server reads it). */
function read(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/** `--help`: usage, options and every environment variable. */
export function helpText(config: ServerConfig, variables: readonly Variable[]): string {
  const lines = [`Usage: ${config.name} [${OPTIONS.map(([flag]) => flag).join(' | ')}]`, ''];
  if (config.instructions !== undefined) lines.push(config.instructions.replace(/\s+/g, ' ').trim(), '');
  lines.push(`${config.name} ${config.version} is an MCP server. Started without options, it serves MCP over stdio: requests on stdin, responses on stdout, logs on stderr.`, '', 'Options:');
  const width = Math.max(...OPTIONS.map(([flag]) => flag.length));
  for (const [flag, , text] of OPTIONS) lines.push(`  ${flag.padEnd(width)}  ${text}`);
  lines.push('', 'Environment variables:');
  const nameWidth = Math.max(...variables.map((v) => v.name.length));
  for (const v of variables) {
    const notes = [v.required ? 'required' : '', v.secret ? 'secret' : '', v.default !== undefined ? `default ${shown(v.default)}` : ''].filter(Boolean);
    lines.push(`  ${v.name.padEnd(nameWidth)}  ${v.description}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * `--print-config`: one `NAME=value` line per variable with where the value comes from, secrets
 * masked, in the form of an env file; `ok` is false when a setting is malformed (`problems`).
 */
export function printConfig(config: ServerConfig, variables: readonly Variable[], env: NodeJS.ProcessEnv): { text: string; ok: boolean; problems: string[] } {
  const rows = variables.map((v) => {
    const value = read(env, v.name);
    if (value !== undefined) return [`${v.name}=${v.secret ? '********' : shown(value)}`, v.secret ? 'set, secret' : 'set'];
    if (v.default !== undefined) return [`${v.name}=${shown(v.default)}`, 'default'];
    return [`${v.name}=`, v.required ? 'NOT SET, required' : 'not set'];
  });
  const width = Math.min(60, Math.max(...rows.map(([line]) => line!.length)));
  const lines = [`# ${config.name} ${config.version}: the configuration read from the environment (secrets masked)`, ...rows.map(([line, note]) => `${line!.padEnd(width)}  # ${note}`)];
  const problems: string[] = [];
  try {
    resolveSettings(config, env);
  } catch (err) {
    problems.push(err instanceof Error ? err.message : String(err));
  }
  return { text: lines.join('\n') + '\n', ok: problems.length === 0, problems };
}

/**
 * Answers the command line when it asks for something other than serving. Returns true when it
 * did (the process is then ending: the caller must not start the server), false to serve.
 */
export function runCommandLine(argv: readonly string[], config: ServerConfig, tools: readonly VariableTool[], options: CommandLineOptions = {}): boolean {
  const command = parseCommandLine(argv);
  if (command.kind === 'serve') return false;
  const io = options.io ?? PROCESS_IO;
  const env = options.env ?? process.env;
  const variables = () => serverVariables({ config, tools, ...(options.reflectionDir !== undefined ? { reflectionDir: options.reflectionDir } : {}) });
  switch (command.kind) {
    case 'error':
      io.err(`${config.name}: ${command.message}\nRun ${config.name} --help for the options; without any, it serves MCP over stdio.\n`);
      io.exit(2);
      break;
    case 'version':
      io.out(`${config.version}\n`);
      io.exit(0);
      break;
    case 'help':
      io.out(helpText(config, variables()));
      io.exit(0);
      break;
    case 'print-config': {
      const { text, ok, problems } = printConfig(config, variables(), env);
      io.out(text);
      for (const p of problems) io.err(`${config.name}: ${p}\n`);
      io.exit(ok ? 0 : 1);
      break;
    }
  }
  return true;
}

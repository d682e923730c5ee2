/**
 * `mcpgen fix <manifest> [--dry-run]`: removes the manifest entries that name operations the
 * spec has but `include`/`exclude` leave out (MCPGEN_EXCLUDED_REFERENCES: concern mappings,
 * overrides, reflection gates, policy limits), keeping every other byte of the file (src/cli/fix/remove.ts).
 * The manifest is checked as `validate` checks it first; with any error it refuses and changes
 * nothing. The file is written only when something changed, through a temporary file renamed
 * over it, so a reader never sees half a manifest.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { compile } from '../compile.js';
import { atomicWrite } from '../write/tree.js';
import type { Io } from './commands.js';
import { removeEntries } from './fix/remove.js';
import { formatDiagnostics } from './format.js';
import { paint } from './terminal.js';

/** `mcpgen fix`. Exit 0 when the manifest is fixed (or had nothing to fix), 1 when it was refused. */
export async function runFix(opts: { manifest: string; dryRun: boolean }, io: Io): Promise<number> {
  const shown = opts.manifest;
  const err = io.colors?.stderr ?? paint(false);
  const c = io.colors?.stdout ?? paint(false);
  const refuse = (why: string, help: string) => {
    io.stderr(`${err.bold(shown)} ${err.bold(err.red('error'))} ${why}\n  ${err.cyan('help:')} ${help}\n`);
    return 1;
  };
  const abs = path.resolve(io.cwd, opts.manifest);
  let before: string;
  try {
    before = await readFile(abs, 'utf8');
  } catch (e) {
    return refuse(`cannot read ${shown}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, 'name the manifest (mcpgen.yaml) to fix');
  }

  const res = await compile({ manifestPath: opts.manifest, cwd: io.cwd, emit: false });
  const list = res.diagnostics.sorted();
  // the entries it removes are errors too when the manifest's `diagnostics` makes them so
  const errors = list.filter((d) => d.severity === 'error' && d.code !== 'MCPGEN_EXCLUDED_REFERENCES');
  if (errors.length > 0 || !res.ir) {
    if (list.length > 0) io.stderr(formatDiagnostics(list, 'text', io.colors?.stderr));
    return refuse(
      `${shown} has ${errors.length} error${errors.length === 1 ? '' : 's'} (above) that \`mcpgen fix\` does not fix; nothing changed`,
      'fix them by hand (each says how), then run `mcpgen fix` again: it removes only entries that name operations include/exclude leave out',
    );
  }
  const pointers = res.ir.excludedReferences ?? [];
  if (pointers.length === 0) {
    io.stdout(`${shown}: nothing to fix (no entry names an operation include/exclude leave out).\n`);
    return 0;
  }

  const out = removeEntries(before, pointers);
  if (!out.ok)
    return refuse(
      `cannot remove the entries safely: ${out.reason}`,
      'remove the entries the build warning (MCPGEN_EXCLUDED_REFERENCES) names by hand; nothing changed',
    );
  const n = pointers.length;
  const width = String(Math.max(...out.removed.map((r) => r.lastLine))).length;
  const lines = out.removed.flatMap((r) => r.lines.map((l, i) => `${c.red(`- ${String(r.firstLine + i).padStart(width)} | ${l}`)}\n`)).join('');
  const what = `${n} ${n === 1 ? 'entry' : 'entries'} naming operations include/exclude leave out`;
  if (opts.dryRun) {
    io.stdout(`${shown}: would remove ${what} (--dry-run: nothing written):\n${lines}`);
    return 0;
  }

  // written through a temporary file next to the real one (a symlinked manifest: next to its target)
  const target = await realpath(abs);
  const now = await readFile(target, 'utf8');
  if (now !== before) return refuse(`${shown} changed while it was being checked; nothing written`, 'run `mcpgen fix` again');
  try {
    await atomicWrite(target, out.text, { mode: (await stat(target)).mode & 0o777 });
  } catch (e) {
    return refuse(`cannot write ${shown}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, 'check that the folder is writable; nothing changed');
  }
  io.stdout(`${c.green('Fixed')} ${c.bold(shown)}: removed ${what}:\n${lines}`);
  return 0;
}

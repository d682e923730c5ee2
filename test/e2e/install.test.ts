/**
 * Installing mcpgen as the README says: `npm pack` the repository, `npm install` the tarball
 * into a scratch folder outside it (so nothing resolves from the repository's node_modules),
 * and use that `mcpgen`: --version, init, and a build of the Petstore example (with --report,
 * which loads the tokenizer) that gives the same files as the repository's own CLI; then the
 * library from a scratch project: `import { build, validate } from 'mcpgen'`, typed.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mcpgen, snapshot } from '../helpers/cli.js';
import { ROOT, run } from '../helpers/project.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-install-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const npm = (args: string[], cwd: string) =>
  run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });

describe('the packed CLI', () => {
  it('packs only what it needs, installs from the tarball, and builds the Petstore example', async () => {
    const version = (JSON.parse((await run('node', ['-p', 'JSON.stringify(require("./package.json"))'], { cwd: ROOT })).stdout) as { version: string }).version;

    // what the tarball holds: the CLI, its compiled code, the precompiled checks and templates, schemas and templates; no tests, no corpus
    const listing = JSON.parse((await npm(['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT)).stdout) as Array<{ files: Array<{ path: string }> }>;
    const files = listing[0]!.files.map((f) => f.path);
    expect(files).toContain('bin/mcpgen.js');
    expect(files).toContain('dist/src/cli/main.js');
    // the library: `exports` and `types` point at these
    expect(files).toContain('dist/src/api.js');
    expect(files).toContain('dist/src/api.d.ts');
    expect(files).toContain('dist/src/core/diagnostics.d.ts');
    expect(files).toContain('schemas/manifest.schema.json');
    expect(files).toContain('templates/runtime/server/server.ts');
    expect(files).toContain('generated/manifest-check.cjs');
    expect(files).toContain('generated/templates.cjs');
    for (const f of files) expect(f, f).toMatch(/^(bin|dist|generated|schemas|templates)\/|^(package\.json|README\.md|LICENSE)$/);

    // `npm pack` runs `prepack` (tsc), as a user's would
    await npm(['pack', '--pack-destination', scratch], ROOT);
    const tgz = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
    expect(tgz).toBe(`mcpgen-${version}.tgz`);
    const prefix = path.join(scratch, 'install');
    await npm(['install', '--prefix', prefix, path.join(scratch, tgz!)], scratch);
    const bin = path.join(prefix, 'node_modules/.bin/mcpgen');

    // the installed package carries no install-time script (npm 11 warns about each one, and a `prepare` could not run from the tarball: no tsconfig, no sources)
    const installed = JSON.parse(readFileSync(path.join(prefix, 'node_modules/mcpgen/package.json'), 'utf8')) as { scripts?: Record<string, string> };
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(installed.scripts?.[hook], hook).toBeUndefined();

    const v = await run(bin, ['--version'], { cwd: scratch });
    expect(v.stdout.trim()).toBe(version);

    const out = path.join(scratch, 'server');
    const built = await run(bin, ['build', path.join(ROOT, 'examples/petstore/mcpgen.yaml'), '--out', out, '--report'], { cwd: scratch, timeout: 120_000 });
    expect(built.stdout).toMatch(/^Built petstore into server: 6 tools/);
    expect(built.stdout).toMatch(/tokens \(o200k\)/);

    // the same bytes as the repository's own CLI
    const reference = path.join(scratch, 'reference');
    expect((await mcpgen(['build', path.join(ROOT, 'examples/petstore/mcpgen.yaml'), '--out', reference], scratch)).code).toBe(0);
    expect(snapshot(out)).toEqual(snapshot(reference));

    // init reads the schema and the spec from the installed package's point of view
    const init = await run(bin, ['init', path.join(ROOT, 'examples/petstore/openapi.yaml'), '--out', 'mine/mcpgen.yaml'], { cwd: scratch });
    expect(init.stdout).toMatch(/^Wrote mine\/mcpgen\.yaml/);
    const valid = await run(bin, ['validate', 'mine/mcpgen.yaml'], { cwd: scratch, timeout: 120_000 });
    expect(valid.stdout).toMatch(/mine\/mcpgen\.yaml: valid \(6 tools/);

    await useTheLibrary(prefix, reference);
  }, 600_000);
});

/**
 * A scratch project (the install prefix, where `mcpgen` is in node_modules) imports the library:
 * `build` writes the same bytes as the CLI, `check: true` reports the drift `build --check`
 * reports, `validate` returns a broken manifest's located diagnostics as objects — the same the
 * CLI prints — and the library writes nothing to stdout or stderr. Its types come through
 * `exports`: a TypeScript file using them type-checks, and a misspelt option does not.
 */
async function useTheLibrary(project: string, reference: string): Promise<void> {
  const manifest = path.join(ROOT, 'examples/petstore/mcpgen.yaml');
  mkdirSync(path.join(project, 'broken'));
  writeFileSync(
    path.join(project, 'broken/mcpgen.yaml'),
    `name: broken\nversion: 1.0.0\nopenapi: ${JSON.stringify(path.join(ROOT, 'examples/petstore/openapi.yaml'))}\noutput: ./server\nbogus: 1\n`,
  );
  writeFileSync(
    path.join(project, 'use.mjs'),
    [
      "import { appendFileSync } from 'node:fs';",
      "import { build, validate } from 'mcpgen';",
      'const [manifest] = process.argv.slice(2);',
      "const built = await build({ manifest, out: 'lib-server' });",
      "appendFileSync('lib-server/README.md', 'edited\\n');",
      "const checked = await build({ manifest, out: 'lib-server', check: true });",
      "const broken = await validate({ manifest: 'broken/mcpgen.yaml' });",
      "const missing = await build({ manifest: 'nowhere/mcpgen.yaml' });",
      'process.stdout.write(JSON.stringify({ built, checked, broken, missing }));',
      '',
    ].join('\n'),
  );
  const used = await run('node', ['use.mjs', manifest], { cwd: project, timeout: 120_000 });
  // nothing but the script's own line: the library prints nothing
  expect(used.stderr).toBe('');
  const r = JSON.parse(used.stdout) as Record<
    'built' | 'checked' | 'broken' | 'missing',
    { ok: boolean; diagnostics: unknown[]; summary: { name: string; tools: number } | null; drift?: unknown[]; files?: { added: string[] } }
  >;

  // build: the same bytes as the CLI; the summary of --format json
  expect(r.built.ok).toBe(true);
  expect(r.built.summary).toMatchObject({ name: 'petstore', tools: 6, output: 'lib-server' });
  expect(r.built.files!.added).toContain('src/server.ts');
  const built = snapshot(path.join(project, 'lib-server'));
  built['README.md'] = built['README.md']!.replace(/edited\n$/, '');
  expect(built).toEqual(snapshot(reference));

  // check: the drift build --check reports, and not ok (the CLI's exit code 1)
  expect(r.checked.ok).toBe(false);
  expect(r.checked.drift).toEqual([{ change: 'changed', file: 'lib-server/README.md' }]);
  const cli = await mcpgen(['build', manifest, '--out', 'lib-server', '--check', '--format', 'json'], project);
  expect(cli.code).toBe(1);
  expect(r.checked.drift).toEqual((JSON.parse(cli.stdout) as { drift: unknown[] }).drift);

  // validate: located diagnostics as objects, the same the CLI prints
  expect(r.broken.ok).toBe(false);
  expect(r.broken.summary).toBeNull();
  expect(r.broken.diagnostics).toContainEqual(
    expect.objectContaining({
      code: 'MCPGEN_MANIFEST_UNKNOWN_KEY',
      severity: 'error',
      location: { file: 'broken/mcpgen.yaml', pointer: '/bogus', line: 5, col: 1 },
    }),
  );
  const cliBroken = await mcpgen(['validate', 'broken/mcpgen.yaml', '--format', 'json'], project);
  expect(cliBroken.code).toBe(1);
  expect(r.broken.diagnostics).toEqual((JSON.parse(cliBroken.stdout) as { diagnostics: unknown[] }).diagnostics);

  // a missing manifest is a diagnostic too, never a throw
  expect(r.missing.ok).toBe(false);
  expect(r.missing.diagnostics).toEqual([expect.objectContaining({ code: 'MCPGEN_MANIFEST_NOT_FOUND', severity: 'error' })]);

  // the types, through the package's `exports`
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, types: [] },
      files: ['use.mts'],
    }),
  );
  const typed = [
    "import { build, validate, type BuildResult, type Diagnostic } from 'mcpgen';",
    "const result: BuildResult = await build({ manifest: 'mcpgen.yaml', check: true, report: true });",
    'const first: Diagnostic | undefined = result.diagnostics[0];',
    'const line: number | undefined = first?.location.line;',
    "const code: string | undefined = (await validate({ manifest: 'mcpgen.yaml', cwd: '.' })).diagnostics[0]?.code;",
    'export { line, code };',
    '',
  ].join('\n');
  writeFileSync(path.join(project, 'use.mts'), typed);
  const tsc = [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'];
  const ok = await run(process.execPath, tsc, { cwd: project, timeout: 120_000 }).catch((e: { stdout?: string }) => e);
  expect((ok as { stdout?: string }).stdout ?? '').toBe('');
  appendFileSync(path.join(project, 'use.mts'), "await build({ manifest: 'mcpgen.yaml', chek: true });\n");
  const bad = await run(process.execPath, tsc, { cwd: project, timeout: 120_000 }).then(
    () => ({ stdout: '' }),
    (e: { stdout?: string }) => e,
  );
  expect(bad.stdout).toMatch(/use\.mts\(7,[0-9]+\): error TS2561: .*'chek' does not exist in type 'BuildOptions'/);
}

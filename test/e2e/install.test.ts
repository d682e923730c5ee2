/**
 * Installing mcpgen as the README says: `npm pack` the repository, `npm install` the tarball
 * into a scratch folder outside it (so nothing resolves from the repository's node_modules),
 * and use that `mcpgen`: --version, init, and a build of the Petstore example (with --report,
 * which loads the tokenizer) that gives the same files as the repository's own CLI.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mcpgen, snapshot } from '../helpers/cli.js';
import { ROOT, run } from '../helpers/project.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-install-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });

describe('the packed CLI', () => {
  it('packs only what it needs, installs from the tarball, and builds the Petstore example', async () => {
    const version = (JSON.parse((await run('node', ['-p', 'JSON.stringify(require("./package.json"))'], { cwd: ROOT })).stdout) as { version: string }).version;

    // what the tarball holds: the CLI, its compiled code, the precompiled checks and templates, schemas and templates; no tests, no corpus
    const listing = JSON.parse((await npm(['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT)).stdout) as Array<{ files: Array<{ path: string }> }>;
    const files = listing[0]!.files.map((f) => f.path);
    expect(files).toContain('bin/mcpgen.js');
    expect(files).toContain('dist/src/cli/main.js');
    expect(files).toContain('schemas/manifest.schema.json');
    expect(files).toContain('templates/runtime/server.ts');
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
  }, 600_000);
});

/**
 * The generated package.json is merged, not owned whole (issue 32, item 3): what the user adds
 * (`npm install x`, `npm pkg set`, a hand edit) survives `mcpgen build`, mcpgen's own changes are
 * applied, and only a key both changed differently — or a file that is not JSON — stops the build,
 * naming the key, with nothing written. The manifest's `package.dependencies` land in it.
 * Real files, the real CLI, and npm's own `npm pkg set` for the edits npm makes.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { mcpgen, snapshot } from '../helpers/cli.js';
import { ROOT } from '../helpers/project.js';

const run = promisify(execFile);
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function petstore(manifestExtra = ''): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-pkg-'));
  temps.push(dir);
  cpSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), path.join(dir, 'openapi.yaml'));
  writeFileSync(path.join(dir, 'mcpgen.yaml'), readFileSync(path.join(ROOT, 'examples/petstore/mcpgen.yaml'), 'utf8') + manifestExtra);
  return dir;
}

type Pkg = Record<string, unknown> & {
  version: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const pkgPath = (dir: string) => path.join(dir, 'server/package.json');
const readPkg = (dir: string) => JSON.parse(readFileSync(pkgPath(dir), 'utf8')) as Pkg;
const setManifest = (dir: string, edit: (text: string) => string) =>
  writeFileSync(path.join(dir, 'mcpgen.yaml'), edit(readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8')));
const setVersion = (dir: string, v: string) => setManifest(dir, (t) => t.replace(/^version: .*$/m, `version: ${v}`));

/** `npm pkg set` in the generated project: npm's own rewrite of package.json, no registry needed. */
const npmPkgSet = (dir: string, ...pairs: string[]) => run('npm', ['pkg', 'set', ...pairs], { cwd: path.join(dir, 'server') });

/**
 * What `npm install date-fns` leaves: the keys in another order, `dependencies` re-sorted with the
 * new entry, a 4-space indent (npm keeps the file's indent; this one is the user's).
 */
function npmInstallLike(dir: string, name: string, range: string): void {
  const { dependencies, ...rest } = readPkg(dir);
  const reordered = {
    dependencies: Object.fromEntries(Object.entries({ ...dependencies, [name]: range }).sort(([a], [b]) => (a < b ? -1 : 1))),
    ...Object.fromEntries(Object.entries(rest).reverse()),
  };
  writeFileSync(pkgPath(dir), JSON.stringify(reordered, null, 4) + '\n');
}

type Diag = { code: string; severity: string; message: string; help: string; location: { file: string; pointer: string; line: number; col: number } };
const errorsOf = (stdout: string) => (JSON.parse(stdout) as { diagnostics: Diag[] }).diagnostics.filter((d) => d.severity === 'error');

async function built(dir: string, args: string[] = []): Promise<string> {
  const res = await mcpgen(['build', 'mcpgen.yaml', ...args], dir);
  expect(res.code, res.stderr).toBe(0);
  return res.stdout + res.stderr;
}

/** build, build --check and validate all refuse with MCPGEN_OUTPUT_CONFLICT only, exit 1, and change nothing. */
async function expectConflict(dir: string, mention: RegExp): Promise<Diag[]> {
  const before = snapshot(dir);
  let errors: Diag[] = [];
  for (const args of [['build'], ['build', '--check'], ['validate']]) {
    const res = await mcpgen([...args, 'mcpgen.yaml', '--format', 'json'], dir);
    expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(1);
    errors = errorsOf(res.stdout);
    expect(
      errors.map((d) => d.code),
      args.join(' '),
    ).toEqual(errors.map(() => 'MCPGEN_OUTPUT_CONFLICT'));
    expect(errors.map((d) => d.message).join('\n')).toMatch(mention);
    expect(snapshot(dir), args.join(' ')).toEqual(before);
  }
  return errors;
}

describe('a user-edited package.json', () => {
  it("keeps what npm added on rebuild, with --check clean, and still takes mcpgen's changes", async () => {
    const dir = petstore();
    await built(dir);
    await npmPkgSet(dir, 'dependencies.left-pad=^1.3.0', 'scripts.lint=eslint src', 'overrides.undici=7.30.2');
    npmInstallLike(dir, 'date-fns', '^4.1.0');
    const edited = readFileSync(pkgPath(dir), 'utf8');
    // nothing of mcpgen's changed: the user's file is left exactly as it is
    expect(await built(dir, ['--check'])).toMatch(/up to date/);
    await built(dir);
    expect(readFileSync(pkgPath(dir), 'utf8')).toBe(edited);

    // mcpgen changes what it owns: --check reports it, build applies it and keeps every user key
    setVersion(dir, '2.0.0');
    const check = await mcpgen(['build', 'mcpgen.yaml', '--check'], dir);
    expect(check.code).toBe(1);
    expect(check.stderr).toMatch(/changed\s+server\/package\.json/);
    await built(dir);
    const pkg = readPkg(dir);
    expect(pkg.version).toBe('2.0.0');
    expect(pkg.dependencies).toMatchObject({ 'left-pad': '^1.3.0', 'date-fns': '^4.1.0', zod: '4.6.7' });
    expect(pkg.scripts).toEqual({ build: 'tsc -p tsconfig.json', start: 'node dist/server.js', prepack: 'npm run build', lint: 'eslint src' });
    expect(pkg.overrides).toEqual({ undici: '7.30.2' });
    // dependency lists stay sorted by name, as npm keeps them
    expect(Object.keys(pkg.dependencies)).toEqual(Object.keys(pkg.dependencies).sort());
    expect(await built(dir, ['--check'])).toMatch(/up to date/);
    // and again: same inputs, same bytes
    const once = snapshot(path.join(dir, 'server'));
    await built(dir);
    expect(snapshot(path.join(dir, 'server'))).toEqual(once);
  });

  it('keeps a value the user changed or removed while mcpgen leaves it alone', async () => {
    const dir = petstore();
    await built(dir);
    await npmPkgSet(dir, 'dependencies.zod=4.7.0', 'scripts.start=node --enable-source-maps dist/server.js');
    await run('npm', ['pkg', 'delete', 'scripts.prepack'], { cwd: path.join(dir, 'server') });
    setVersion(dir, '2.0.0');
    await built(dir);
    const pkg = readPkg(dir);
    expect(pkg.version).toBe('2.0.0');
    expect(pkg.dependencies.zod).toBe('4.7.0');
    expect(pkg.scripts).toEqual({ build: 'tsc -p tsconfig.json', start: 'node --enable-source-maps dist/server.js' });
  });

  it('refuses a key both changed differently, naming it, at the key in package.json', async () => {
    const dir = petstore();
    await built(dir);
    await npmPkgSet(dir, 'version=5.0.0', 'dependencies.left-pad=^1.3.0');
    const edited = readFileSync(pkgPath(dir), 'utf8');
    setVersion(dir, '2.0.0');
    const [err, ...more] = await expectConflict(dir, /server\/package\.json: key \/version was changed both by you and by mcpgen/);
    expect(more).toEqual([]);
    expect(err!.message).toMatch(/you made it "5\.0\.0", and mcpgen changed it from "1\.0\.0" to "2\.0\.0"/);
    expect(err!.help).toMatch(/set it to "2\.0\.0"/);
    expect(err!.location).toEqual({ file: 'server/package.json', pointer: '/version', line: 3, col: 3 });
    expect(readFileSync(pkgPath(dir), 'utf8')).toBe(edited);
    // following the help clears it, and the user's addition stays
    await npmPkgSet(dir, 'version=2.0.0');
    await built(dir);
    expect(readPkg(dir).dependencies['left-pad']).toBe('^1.3.0');
  });

  it('refuses a package.json that is not JSON, or not an object, and leaves it alone', async () => {
    for (const [text, mention] of [
      ['{\n  "name": "petstore",\n  "dependencies": { "left-pad": "^1.3.0", }\n}\n', /server\/package\.json is not valid JSON/],
      ['["petstore"]\n', /server\/package\.json is JSON but not an object/],
    ] as const) {
      const dir = petstore();
      await built(dir);
      writeFileSync(pkgPath(dir), text);
      setVersion(dir, '2.0.0');
      const [err] = await expectConflict(dir, mention);
      expect(err!.location.file).toBe('server/package.json');
      expect(readFileSync(pkgPath(dir), 'utf8')).toBe(text);
    }
  });

  it('refuses an edited package.json under a lock written before merging, saying how to recover', async () => {
    const dir = petstore();
    await built(dir);
    const lockPath = path.join(dir, 'server/.mcpgen.json');
    const { mergeBase: _, ...older } = JSON.parse(readFileSync(lockPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(lockPath, JSON.stringify(older, null, 2) + '\n');
    await npmPkgSet(dir, 'dependencies.left-pad=^1.3.0');
    const [err] = await expectConflict(dir, /does not hold what mcpgen generated for it/);
    expect(err!.help).toMatch(/put back the package\.json mcpgen wrote/);
  });

  it('does not trust a merge base that is not what mcpgen recorded', async () => {
    const dir = petstore();
    await built(dir);
    const lockPath = path.join(dir, 'server/.mcpgen.json');
    const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as { mergeBase: Record<string, Pkg> };
    // a base claiming the user's own values were mcpgen's would let mcpgen overwrite them
    lock.mergeBase['package.json']!.scripts.lint = 'eslint src';
    writeFileSync(lockPath, JSON.stringify(lock, null, 2) + '\n');
    await npmPkgSet(dir, 'scripts.lint=eslint src');
    await expectConflict(dir, /does not hold what mcpgen generated for it/);
  });
});

describe('package.dependencies in the manifest', () => {
  it("lands in package.json, sorted among mcpgen's, and leaves it when removed; user additions stay", async () => {
    const dir = petstore('package:\n  dependencies:\n    date-fns: ^4.1.0\n    "@acme/greet": file:../greet\n  devDependencies:\n    vitest: ^3.2.0\n');
    await built(dir);
    let pkg = readPkg(dir);
    expect(pkg.dependencies).toEqual({
      '@acme/greet': 'file:../greet',
      '@modelcontextprotocol/node': '2.1.2',
      '@modelcontextprotocol/server': '2.4.0',
      ajv: '8.20.0',
      'ajv-formats': '3.0.1',
      'date-fns': '^4.1.0',
      handlebars: '4.7.10',
      ioredis: '5.11.1',
      jose: '6.2.17',
      'rate-limiter-flexible': '11.4.0',
      re2js: '2.10.0',
      undici: '7.30.2',
      zod: '4.6.7',
    });
    expect(Object.keys(pkg.dependencies)).toEqual(Object.keys(pkg.dependencies).sort());
    expect(pkg.devDependencies).toEqual({ '@types/node': '20.19.43', typescript: '7.0.2', vitest: '^3.2.0' });
    await npmPkgSet(dir, 'dependencies.left-pad=^1.3.0');
    setManifest(dir, (t) => t.replace('    date-fns: ^4.1.0\n', '').replace('^3.2.0', '^3.3.0'));
    await built(dir);
    pkg = readPkg(dir);
    expect(pkg.dependencies['date-fns']).toBeUndefined();
    expect(pkg.dependencies['left-pad']).toBe('^1.3.0');
    expect(pkg.devDependencies.vitest).toBe('^3.3.0');
  });

  it('refuses a package mcpgen declares itself, or one named in both sections, at the manifest key', async () => {
    const dir = petstore(
      'package:\n  dependencies:\n    zod: ^4.0.0\n    date-fns: ^4.1.0\n  devDependencies:\n    typescript: ^5.9.0\n    date-fns: ^4.1.0\n',
    );
    for (const args of [['build'], ['validate']]) {
      const res = await mcpgen([...args, 'mcpgen.yaml', '--format', 'json'], dir);
      expect(res.code, res.stderr).toBe(1);
      const errors = errorsOf(res.stdout);
      // in manifest order
      expect(errors.map((d) => [d.code, d.location.pointer])).toEqual([
        ['MCPGEN_DEPENDENCY_CONFLICT', '/package/dependencies/zod'],
        ['MCPGEN_DEPENDENCY_CONFLICT', '/package/devDependencies/typescript'],
        ['MCPGEN_DEPENDENCY_CONFLICT', '/package/devDependencies/date-fns'],
      ]);
      for (const d of errors) expect(d.location.line).toBeGreaterThan(0);
      expect(errors[0]!.message).toBe('package.dependencies names "zod", which the generated project declares itself (zod 4.6.7 in dependencies)');
      expect(errors[0]!.help).toMatch(/remove it from package\.dependencies: handlers can import zod as it is/);
    }
  });
});

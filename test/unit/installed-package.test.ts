/**
 * The versions the build cache's key includes are those of the packages mcpgen really loads —
 * also when mcpgen is a dependency and npm hoisted them beside it (they are not in mcpgen's own
 * node_modules then). A project layout is made with mcpgen's compiled paths module inside
 * node_modules/mcpgen and a hoisted `yaml` of another version.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { installedPackageJson } from '../../src/core/paths.js';
import { ROOT } from '../helpers/project.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-installed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('finds a package hoisted beside an installed mcpgen, skipping a folder package.json without a version', () => {
  const mcpgen = path.join(dir, 'node_modules/mcpgen');
  mkdirSync(path.join(mcpgen, 'templates'), { recursive: true });
  mkdirSync(path.join(mcpgen, 'dist/src'), { recursive: true });
  writeFileSync(path.join(mcpgen, 'package.json'), JSON.stringify({ name: 'mcpgen', version: '0.1.0', type: 'module' }));
  // the compiled module (dist/ is built before the tests)
  cpSync(path.join(ROOT, 'dist/src/core/paths.js'), path.join(mcpgen, 'dist/src/core/paths.js'));
  // the hoisted package: its entry in a folder that has a package.json of its own (name, no version)
  const yaml = path.join(dir, 'node_modules/yaml');
  mkdirSync(path.join(yaml, 'dist'), { recursive: true });
  writeFileSync(path.join(yaml, 'package.json'), JSON.stringify({ name: 'yaml', version: '9.9.9', type: 'module', exports: { '.': './dist/index.js' } }));
  writeFileSync(path.join(yaml, 'dist/package.json'), JSON.stringify({ name: 'yaml', type: 'module' }));
  writeFileSync(path.join(yaml, 'dist/index.js'), 'export default 1;\n');
  const script = `import { installedPackageJson } from ${JSON.stringify(path.join(mcpgen, 'dist/src/core/paths.js'))};\nprocess.stdout.write(JSON.stringify([installedPackageJson('yaml'), installedPackageJson('not-installed-anywhere')]));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8' });
  const [yamlJson, missing] = JSON.parse(out) as [string, string | null];
  expect((JSON.parse(yamlJson) as { version: string }).version).toBe('9.9.9');
  expect(missing).toBeNull();
});

it('in this checkout, the versions of the loaders and the tokenizer', () => {
  for (const pkg of ['yaml', 'gpt-tokenizer', '@apidevtools/swagger-parser'])
    expect((JSON.parse(installedPackageJson(pkg)!) as { version: string }).version).toMatch(/^\d+\.\d+\.\d+/);
});

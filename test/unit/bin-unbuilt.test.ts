import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

it('bin/mcpgen.js in a clone not built yet says to run npm run build, not a module-not-found trace', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcpgen-unbuilt-'));
  try {
    mkdirSync(path.join(dir, 'bin'));
    copyFileSync(path.join(ROOT, 'bin/mcpgen.js'), path.join(dir, 'bin/mcpgen.js'));
    const run = spawnSync(process.execPath, [path.join(dir, 'bin/mcpgen.js'), '--version'], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`mcpgen: ${dir}/ is not built yet: run \`npm run build\` there first\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

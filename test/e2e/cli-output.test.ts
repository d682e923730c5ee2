/**
 * CI-grade output of the `mcpgen` binary: the one JSON document of `--format json` (summary,
 * diagnostics, drift), GitHub annotations for drift, `--quiet`, no escape codes without a TTY,
 * colours and progress on a pseudo-terminal, and "did you mean" for commands and options.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { JsonReport } from '../../src/cli/report.js';
import { mcpgen } from '../helpers/cli.js';
import { corpusSpec } from '../helpers/corpus.js';
import { ROOT } from '../helpers/project.js';

const temps: string[] = [];
function petstore(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-out-'));
  temps.push(dir);
  cpSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), path.join(dir, 'openapi.yaml'));
  cpSync(path.join(ROOT, 'examples/petstore/mcpgen.yaml'), path.join(dir, 'mcpgen.yaml'));
  return dir;
}
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const ESC = /\u001b\[/;

describe('--format json: one document', () => {
  it('a successful build has the summary, no diagnostics and no drift; stdout is that document alone', async () => {
    const dir = petstore();
    const res = await mcpgen(['build', 'mcpgen.yaml', '--format', 'json'], dir);
    expect(res.code).toBe(0);
    const doc = JSON.parse(res.stdout) as JsonReport;
    expect(Object.keys(doc)).toEqual(['diagnostics', 'summary', 'drift']);
    expect(doc.diagnostics).toEqual([]);
    expect(doc.drift).toEqual([]);
    expect(doc.summary).toMatchObject({
      name: 'petstore',
      version: '1.0.0',
      output: 'server',
      tools: 6,
      operationTools: 6,
      extraTools: 0,
      prompts: 0,
      resources: 0,
      stubs: [],
    });
    expect(doc.summary!.listBytes).toBeGreaterThan(1000);
    expect(doc.summary!.withOutputSchema).toBeGreaterThan(0);
    expect(doc.summary!.files!.added).toBeGreaterThan(5);
    expect(doc.summary!.files).toMatchObject({ changed: 0, removed: 0, unchanged: 0 });
    expect(res.stderr).toBe('');

    // validate: the same summary, without files
    const v = await mcpgen(['validate', 'mcpgen.yaml', '--format', 'json'], dir);
    expect(v.code).toBe(0);
    const vdoc = JSON.parse(v.stdout) as JsonReport;
    expect(vdoc.summary).toMatchObject({ name: 'petstore', tools: 6, listBytes: doc.summary!.listBytes });
    expect(vdoc.summary!.files).toBeUndefined();
  });

  it('build --check lists the drift in the document (nothing on stderr), and is clean after a build', async () => {
    const dir = petstore();
    expect((await mcpgen(['build', 'mcpgen.yaml'], dir)).code).toBe(0);
    const generated = path.join(dir, 'server/src/tools.gen.ts');
    writeFileSync(generated, readFileSync(generated, 'utf8') + '// edited\n');
    rmSync(path.join(dir, 'server/README.md'));
    const res = await mcpgen(['build', 'mcpgen.yaml', '--check', '--format', 'json'], dir);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('');
    const doc = JSON.parse(res.stdout) as JsonReport;
    expect(doc.drift).toEqual([
      { change: 'added', file: 'server/README.md' },
      { change: 'changed', file: 'server/src/tools.gen.ts' },
    ]);
    expect(doc.summary).toMatchObject({ name: 'petstore', tools: 6 });
    expect(doc.diagnostics).toEqual([]);

    // github: one ::error annotation per drifted file
    const gh = await mcpgen(['build', 'mcpgen.yaml', '--check', '--format', 'github'], dir);
    expect(gh.code).toBe(1);
    expect(gh.stderr.split('\n').filter((l) => l !== '')).toEqual([
      expect.stringMatching(/^::error file=server\/README\.md,title=mcpgen drift \(added\)::server\/README\.md would be added/),
      expect.stringMatching(
        /^::error file=server\/src\/tools\.gen\.ts,title=mcpgen drift \(changed\)::server\/src\/tools\.gen\.ts is out of date.*run `mcpgen build mcpgen\.yaml`/,
      ),
    ]);
    // text keeps its list on stderr
    const text = await mcpgen(['build', 'mcpgen.yaml', '--check'], dir);
    expect(text.stderr).toMatch(/changed\s+server\/src\/tools\.gen\.ts/);

    expect((await mcpgen(['build', 'mcpgen.yaml', '--quiet'], dir)).code).toBe(0);
    const clean = await mcpgen(['build', 'mcpgen.yaml', '--check', '--format', 'json'], dir);
    expect(clean.code).toBe(0);
    expect((JSON.parse(clean.stdout) as JsonReport).drift).toEqual([]);
  });

  it('--quiet prints nothing on success, and still the diagnostics on failure', async () => {
    const dir = petstore();
    const ok = await mcpgen(['build', 'mcpgen.yaml', '--quiet'], dir);
    expect(ok).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect((await mcpgen(['validate', 'mcpgen.yaml', '-q'], dir)).stdout).toBe('');
    writeFileSync(path.join(dir, 'mcpgen.yaml'), readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8').replace('name: petstore', 'nmae: petstore'));
    const bad = await mcpgen(['build', 'mcpgen.yaml', '--quiet'], dir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/MCPGEN_MANIFEST_UNKNOWN_KEY/);
  });
});

describe('diagnostics a reader can follow', () => {
  it("the over-budget error's lists are one item per line in text, and line breaks in github", async () => {
    const dir = petstore();
    writeFileSync(path.join(dir, 'mcpgen.yaml'), readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8') + 'budget:\n  maxListBytes: 2000\n');
    const text = await mcpgen(['validate', 'mcpgen.yaml'], dir);
    expect(text.code).toBe(1);
    const lines = text.stderr.split('\n');
    const at = lines.findIndex((l) => / error MCPGEN_OVER_BUDGET tools\/list is \d+ bytes, over budget\.maxListBytes 2000; the largest tools:$/.test(l));
    expect(at, text.stderr).toBeGreaterThanOrEqual(0);
    // every tool on a line of its own, then the ways to get under, each on its own line
    expect(lines.slice(at + 1, at + 7)).toEqual(Array.from({ length: 6 }, () => expect.stringMatching(/^ {4}- \S+ \d+ bytes/)));
    expect(lines[at + 7]).toMatch(/^ {4}cheapest ways to get under \(\d+ bytes\):$/);
    expect(lines[at + 8]).toMatch(/^ {6}- /);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(300);
    const gh = await mcpgen(['validate', 'mcpgen.yaml', '--format', 'github'], dir);
    expect(gh.stderr).toMatch(/^::error file=mcpgen\.yaml,line=\d+,col=\d+,title=MCPGEN_OVER_BUDGET::.*the largest tools:%0A {2}- /m);
  });

  it("a warning in a minified spec (Asana's one-line JSON) is placed by JSON pointer, not column 375,401", async () => {
    const dir = petstore();
    cpSync(corpusSpec('asana.json'), path.join(dir, 'asana.json'));
    writeFileSync(path.join(dir, 'mcpgen.yaml'), 'name: asana\nversion: 1.0.0\nopenapi: ./asana.json\noutput: ./server\ninclude:\n  - tag: Tags\n');
    const text = await mcpgen(['validate', 'mcpgen.yaml'], dir);
    expect(text.code).toBe(0);
    expect(text.stderr.split('\n')[0]).toMatch(/^asana\.json#\/components\/securitySchemes\/oauth2 warning MCPGEN_AUTH_UNSUPPORTED_SCHEME /);
    expect(text.stderr).not.toMatch(/asana\.json:1:\d+/);
    const gh = await mcpgen(['validate', 'mcpgen.yaml', '--format', 'github'], dir);
    expect(gh.stderr).toMatch(
      /^::warning file=asana\.json,line=1,title=MCPGEN_AUTH_UNSUPPORTED_SCHEME::.* \(at \/components\/securitySchemes\/oauth2\) \(help: /,
    );
    const json = JSON.parse((await mcpgen(['validate', 'mcpgen.yaml', '--format', 'json'], dir)).stdout) as JsonReport;
    expect(json.diagnostics[0]!.location).toMatchObject({ file: 'asana.json', pointer: '/components/securitySchemes/oauth2', line: 1 });
    expect(json.diagnostics[0]!.location.col).toBeGreaterThan(200);
  });
});

describe('terminals', () => {
  it('without a TTY there is no escape code, and no progress, in any output', async () => {
    const dir = petstore();
    const runs = [
      await mcpgen(['build', 'mcpgen.yaml'], dir),
      await mcpgen(['build', 'nope.yaml'], dir),
      await mcpgen(['validate', 'mcpgen.yaml'], dir),
      await mcpgen(['biuld', 'mcpgen.yaml'], dir),
    ];
    for (const r of runs) {
      expect(r.stdout).not.toMatch(ESC);
      expect(r.stderr).not.toMatch(ESC);
    }
  });

  /** Runs the binary under a pseudo-terminal (util-linux `script`): stdout and stderr are TTYs. */
  function underPty(args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
    const command = [process.execPath, path.join(ROOT, 'bin/mcpgen.js'), ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    return new Promise((resolve, reject) => {
      const e: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm', ...env };
      delete e.CI;
      delete e.FORCE_COLOR;
      if (!('NO_COLOR' in env)) delete e.NO_COLOR;
      execFile('script', ['-qec', command, '/dev/null'], { cwd, env: e, timeout: 60_000 }, (err, stdout) =>
        err && err.killed ? reject(err) : resolve(stdout),
      );
    });
  }

  // The delay is set, so what is checked does not depend on how fast this machine builds.
  it('on a TTY: colours (not with NO_COLOR), a progress line once the delay has passed, none before it or with --quiet', async () => {
    const dir = petstore();
    const never = { MCPGEN_PROGRESS_DELAY_MS: '600000' };
    const coloured = await underPty(['build', 'mcpgen.yaml'], dir, never);
    expect(coloured).toMatch(/\u001b\[32mBuilt/);
    expect(coloured).not.toMatch(/Building/);
    const plain = await underPty(['build', 'mcpgen.yaml'], dir, { ...never, NO_COLOR: '1' });
    expect(plain).toMatch(/Built petstore/);
    expect(plain).not.toMatch(/\u001b\[3\dm/);

    // a delay of 0: the spinner appears (on stderr, the TTY here) with its stage and elapsed time
    const shown = await underPty(['build', 'mcpgen.yaml'], dir, { MCPGEN_PROGRESS_DELAY_MS: '0' });
    expect(shown).toMatch(/Building mcpgen\.yaml.*\(\d+\.\d s\)/);
    expect(shown).toMatch(/Built/);
    // --quiet: no spinner, whatever the delay
    const quiet = await underPty(['build', 'mcpgen.yaml', '--quiet'], dir, { MCPGEN_PROGRESS_DELAY_MS: '0' });
    expect(quiet).not.toMatch(/Building/);
  }, 120_000);
});

describe('did you mean', () => {
  it('suggests the command for a misspelt one', async () => {
    const res = await mcpgen(['biuld', 'mcpgen.yaml']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/Did you mean build\?/);
  });

  it('suggests the option for a misspelt one', async () => {
    const res = await mcpgen(['build', 'mcpgen.yaml', '--frmat', 'json']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/Unknown argument: frmat/);
    expect(res.stderr).toMatch(/Did you mean --format \(not --frmat\)\?/);
    const v = await mcpgen(['validate', 'mcpgen.yaml', '--qiuet']);
    expect(v.stderr).toMatch(/Did you mean --quiet/);
  });

  it('refuses --watch with --check as a usage error', async () => {
    const res = await mcpgen(['build', 'mcpgen.yaml', '--watch', '--check']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/mcpgen: --watch and --check cannot be used together/);
    expect(res.stderr).not.toMatch(/internal error/);
  });
});

/**
 * Words of mcpgen's own planning ("seed 002", "issue 21") mean nothing to a user. None may stand in
 * what users read: the README, docs/, the published manifest schema (its descriptions show in
 * editors), the templates of generated files and the runtime copied into every project, and the
 * compiler's sources (its messages). CONTRIBUTING.md, for mcpgen's developers, may keep them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const INTERNAL = /\bseed \d{3}\b|\bissue #?\d{1,3}\b/gi;

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => ext.test(f))
    .map((f) => path.join(dir, f));
}

const READ_BY_USERS = [
  'README.md',
  'schemas/manifest.schema.json',
  ...files('docs', /\.md$/),
  ...files('templates/project', /\.hbs$/),
  ...files('templates/runtime', /\.ts$/),
  ...files('src', /\.ts$/),
];

describe('no internal planning words where users read', () => {
  it('reads the files it means to (the check reads something)', () => {
    expect(READ_BY_USERS).toContain('docs/generated-server.md');
    expect(READ_BY_USERS.length).toBeGreaterThan(100);
  });

  it('finds none of "seed NNN" or "issue NN"', () => {
    const found = READ_BY_USERS.flatMap((file) =>
      readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => [...line.matchAll(INTERNAL)].map((m) => `${file}:${i + 1}: ${m[0]}`)),
    );
    expect(found, 'say what the feature is instead').toEqual([]);
  });

  it('would catch one', () => {
    expect('as seed 002 asks; see issue 21'.match(INTERNAL)).toEqual(['seed 002', 'issue 21']);
  });
});

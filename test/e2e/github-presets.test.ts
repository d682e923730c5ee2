/**
 * GitHub's REST API (the corpus spec) with concern presets, test/fixtures/github/mcpgen.yaml:
 * the code-review preset lists under 5% of the unfiltered tools/list bytes, and a preset budget
 * below its size fails the build with a located error naming the preset's largest tools.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import type { IrSurface } from '../../src/ir/types.js';
import { ROOT } from '../helpers/project.js';

const FIXTURE = path.join(ROOT, 'test/fixtures/github');
let surface: IrSurface;

beforeAll(async () => {
  const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: FIXTURE, emit: false });
  expect(res.diagnostics.items.filter((d) => d.severity === 'error')).toEqual([]);
  surface = res.ir!.surface!;
}, 300_000);

describe('GitHub with concern presets', () => {
  it('the code-review preset lists under 5% of the unfiltered bytes', () => {
    expect(surface.tools.length).toBe(1224);
    const review = surface.presets.find((p) => p.name === 'code-review')!;
    expect(review.tools).toContain('pulls_merge');
    expect(review.tools).not.toContain('issues_create');
    expect(review.listBytes / surface.listBytes).toBeLessThan(0.05);
  });

  it('a code-review budget below its size fails the build, naming its largest tools', async () => {
    const review = surface.presets.find((p) => p.name === 'code-review')!;
    const work = path.join(ROOT, '.cache/github-presets');
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    const manifest = readFileSync(path.join(FIXTURE, 'mcpgen.yaml'), 'utf8').replace(
      'openapi: ../../../.corpus/github-rest.json',
      `openapi: ${JSON.stringify(path.join(ROOT, '.corpus/github-rest.json'))}`,
    );
    writeFileSync(path.join(work, 'mcpgen.yaml'), `${manifest}budget:\n  presets:\n    code-review: { maxListBytes: ${review.listBytes - 10_000} }\n`);
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: work, emit: false });
    const errors = res.diagnostics.items.filter((d) => d.severity === 'error');
    expect(errors.map((e) => [e.code, e.location.pointer])).toEqual([['MCPGEN_OVER_BUDGET', '/budget/presets/code-review/maxListBytes']]);
    const largest = surface.tools.filter((t) => review.tools.includes(t.name)).sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : 1))[0]!;
    expect(errors[0]!.message).toContain(
      `over budget.presets.code-review.maxListBytes ${review.listBytes - 10_000}; the largest tools:\n  - ${largest.name} ${largest.bytes} bytes`,
    );
    expect(errors[0]!.message).toMatch(/cheapest ways to get under \(10000 bytes\):/);
    expect(errors[0]!.location.line).toBeGreaterThan(1000);
  });
});

/**
 * Every real-world spec of the corpus (corpus/corpus.json, fetched into .corpus/) builds, every tool
 * schema is portable and compiles with Ajv, and the generated project type-checks with tsc —
 * GitHub's 1,223 operations included. The cold build keeps its spec in the build cache, and a
 * second build from the cache gives the same bytes and diagnostics (issue 24).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { writeTree } from '../../src/write/tree.js';
import { CORPUS_SPECS, corpusSpec } from '../helpers/corpus.js';
import { portabilityProblems } from '../helpers/portability.js';
import { ROOT, typecheck } from '../helpers/project.js';

describe('corpus', () => {
  it.each(CORPUS_SPECS)(
    '%s builds, its schemas are portable and its project type-checks',
    async (file) => {
      const slug = file
        .replace(/\.[^.]+$/, '')
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-');
      const work = path.join(ROOT, '.cache/corpus', slug);
      rmSync(work, { recursive: true, force: true });
      mkdirSync(work, { recursive: true });
      const manifest = path.join(work, 'mcpgen.yaml');
      writeFileSync(manifest, `name: corpus-${slug}\nopenapi: ${path.relative(work, corpusSpec(file))}\noutput: ./server\n`);

      const res = await compile({ manifestPath: manifest, cwd: ROOT, emit: true, cache: true });
      expect(res.specCache).toBe('miss');
      expect(await res.saveCache!()).toBe(true);
      const cached = await compile({ manifestPath: manifest, cwd: ROOT, emit: true, cache: true });
      expect(cached.specCache).toBe('hit');
      expect(cached.diagnostics.items).toEqual(res.diagnostics.items);
      expect([...cached.files!.keys()]).toEqual([...res.files!.keys()]);
      for (const [file, text] of res.files!) expect(cached.files!.get(file) === text, `${file}: cached bytes`).toBe(true);
      const errors = res.diagnostics.items.filter((d) => d.severity === 'error');
      expect(errors).toEqual([]);
      const ir = res.ir!;
      expect(ir.tools.length).toBeGreaterThan(0);

      const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
      const names = new Set<string>();
      for (const t of ir.tools) {
        expect(t.name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
        names.add(t.name);
        expect(portabilityProblems(t.inputSchema), `${t.name} input`).toEqual([]);
        if (t.outputSchema) expect(portabilityProblems(t.outputSchema), `${t.name} output`).toEqual([]);
        expect(() => ajv.compile(t.inputSchema), `${t.name} input schema compiles`).not.toThrow();
      }
      expect(names.size).toBe(ir.tools.length);

      const report = await writeTree({ outDir: res.outDir!, displayDir: 'server', files: res.files!, check: false, diagnostics: res.diagnostics });
      expect(report).toBeDefined();
      const tsc = await typecheck(res.outDir!);
      expect(tsc.output).toBe('');
      expect(tsc.ok).toBe(true);
    },
    300_000,
  );
});

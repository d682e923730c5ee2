/**
 * The import graph of src/ and templates/runtime/: no cycle among their modules, and every import
 * from one folder into another allowed by the importing folder's README.md (its `May import:`
 * line lists the folders, as backticked repository paths, or says nothing). A module belongs to
 * the nearest folder above it that has such a README. Imports are read from the source text
 * (static `import`/`export … from`, side-effect imports, `import()` of a literal), type-only
 * imports included: a type can tie two modules as tightly as a value.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TREES = ['src', 'templates/runtime'];

const modules: string[] = TREES.flatMap((tree) =>
  readdirSync(path.join(ROOT, tree), { recursive: true, encoding: 'utf8' })
    .map((f) => path.posix.join(tree, f.split(path.sep).join('/')))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .sort(),
);
const known = new Set(modules);

const IMPORT =
  /(?:^|[\n;])\s*(?:import|export)\b[^'";]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** The repository paths of the modules `file` imports by relative specifier. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const out = new Set<string>();
  for (const m of text.matchAll(IMPORT)) {
    const spec = (m[1] ?? m[2] ?? m[3])!;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts');
    if (known.has(target)) out.add(target);
  }
  return [...out].sort();
}

const edges = new Map(modules.map((f) => [f, importsOf(f)]));

/** Folders with a README that states what they may import: folder -> allowed folders (repository paths, no trailing slash). */
const rules = new Map<string, Set<string>>();
const folders = new Set<string>();
for (const f of modules) for (let d = path.posix.dirname(f); !TREES.includes(d); d = path.posix.dirname(d)) folders.add(d);
for (const tree of TREES) folders.add(tree);
for (const folder of folders) {
  const readme = path.join(ROOT, folder, 'README.md');
  if (!existsSync(readme)) continue;
  const line = readFileSync(readme, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('May import:'));
  if (line === undefined) continue;
  rules.set(folder, new Set([...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, ''))));
}

/** The folder a module belongs to: the nearest one above it with a rule. */
function unitOf(file: string): string | undefined {
  for (let d = path.posix.dirname(file); d !== '.'; d = path.posix.dirname(d)) if (rules.has(d)) return d;
  return undefined;
}

describe('import directions', () => {
  it('reads the graph (a sanity check of the parser)', () => {
    expect(modules.length).toBeGreaterThan(200);
    expect(edges.get('templates/runtime/main.ts')).toContain('templates/runtime/server/server.ts');
    expect(edges.get('src/compile.ts')).toContain('src/ir/build.ts');
  });

  it('src/, templates/runtime/ and every folder directly in them have a README that says what they may import', () => {
    const missing = [...folders].filter((d) => (TREES.includes(d) || TREES.includes(path.posix.dirname(d))) && !rules.has(d));
    expect(missing).toEqual([]);
    for (const tree of TREES) expect(rules.has(tree)).toBe(true);
    for (const [folder, allowed] of rules)
      for (const a of allowed) expect(rules.has(a), `${folder}/README.md names ${a}, which has no README with a May import line`).toBe(true);
  });

  it('no module imports, directly or not, itself', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (f: string): void => {
      state.set(f, 'open');
      stack.push(f);
      for (const t of edges.get(f) ?? []) {
        if (state.get(t) === 'open') cycles.push([...stack.slice(stack.indexOf(t)), t].join(' -> '));
        else if (!state.has(t)) visit(t);
      }
      stack.pop();
      state.set(f, 'done');
    };
    for (const f of modules) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  it('every import across folders goes where the importing folder’s README allows', () => {
    const wrong: string[] = [];
    for (const [file, targets] of edges) {
      const from = unitOf(file)!;
      for (const t of targets) {
        const to = unitOf(t)!;
        if (to !== from && !rules.get(from)!.has(to)) wrong.push(`${file} -> ${t} (${from}/README.md does not allow ${to})`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

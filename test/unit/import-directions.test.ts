/**
 * The import graph of src/ and templates/runtime/: no cycle among their modules, and every import
 * from one folder into another allowed by the importing folder's README.md (its `May import:`
 * line lists the folders, as backticked repository paths, or says nothing). A module belongs to
 * the nearest folder above it that has such a README. Imports are read from the source text by
 * src/core/import-specifiers.ts (static `import`/`export … from`, side-effect imports, `import()`
 * of a literal), type-only imports included: a type can tie two modules as tightly as a value.
 *
 * The folders themselves form no cycle either (a folder's own modules and those of its
 * sub-folders may import each other: a folder's root holds its entry and shared types), and every
 * folder a README allows is one its modules import (a permission nothing uses is removed, so the
 * README says what the code does).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleSpecifiers } from '../../src/core/import-specifiers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TREES = ['src', 'templates/runtime'];

const modules: string[] = TREES.flatMap((tree) =>
  readdirSync(path.join(ROOT, tree), { recursive: true, encoding: 'utf8' })
    .map((f) => path.posix.join(tree, f.split(path.sep).join('/')))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .sort(),
);
const known = new Set(modules);

/** The repository paths of the modules `file` imports by relative specifier. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const out = new Set<string>();
  for (const { specifier: spec } of moduleSpecifiers(text)) {
    if (!spec.startsWith('./') && !spec.startsWith('../')) continue;
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

/**
 * Imports known to run against the folder order, each waiting for a move, and why. Each must
 * still exist (the test says when one is gone, so that it leaves this list too).
 */
const PENDING: ReadonlyMap<string, string> = new Map([]);

const isWithin = (folder: string, other: string): boolean => other === folder || other.startsWith(`${folder}/`);

/** Folder -> the folders its modules import (besides its own ancestors and sub-folders), with the imports that make each arrow. */
const folderEdges = new Map<string, Map<string, string[]>>();
for (const [file, targets] of edges) {
  const from = unitOf(file)!;
  for (const t of targets) {
    const to = unitOf(t)!;
    if (isWithin(from, to) || isWithin(to, from) || PENDING.has(`${file} -> ${t}`)) continue;
    const out = folderEdges.get(from) ?? new Map<string, string[]>();
    folderEdges.set(from, out);
    out.set(to, [...(out.get(to) ?? []), `${file} -> ${t}`]);
  }
}

/** Every cycle among `graph`'s nodes found by one depth-first walk, as `a -> b -> a`. */
function cyclesOf(graph: ReadonlyMap<string, Iterable<string>>, nodes: Iterable<string>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string): void => {
    state.set(n, 'open');
    stack.push(n);
    for (const t of graph.get(n) ?? []) {
      if (state.get(t) === 'open') cycles.push([...stack.slice(stack.indexOf(t)), t]);
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of nodes) if (!state.has(n)) visit(n);
  return cycles;
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
    expect(cyclesOf(edges, modules).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('no folder imports, directly or not, itself', () => {
    const graph = new Map([...folderEdges].map(([from, out]) => [from, [...out.keys()].sort()]));
    const cycles = cyclesOf(graph, [...rules.keys()].sort()).map((c) =>
      [c.join(' -> '), ...c.slice(1).map((to, i) => `  ${c[i]} -> ${to}: ${folderEdges.get(c[i]!)!.get(to)!.join('; ')}`)].join('\n'),
    );
    expect(cycles).toEqual([]);
  });

  it('no top-level folder imports, directly or not, itself through its own sub-folders', () => {
    // a folder and its sub-folders are one node here (src/ir with src/ir/tools …), so a loop through a
    // folder's root and its own sub-folder (src/ir/tools -> src/emit -> src/ir) is seen too; files at
    // a tree's root stay nodes of their own
    const top = (file: string): string => {
      const tree = TREES.find((t) => file.startsWith(`${t}/`))!;
      const rest = file.slice(tree.length + 1);
      return rest.includes('/') ? `${tree}/${rest.slice(0, rest.indexOf('/'))}` : file;
    };
    const graph = new Map<string, Set<string>>();
    for (const [file, targets] of edges)
      for (const t of targets) {
        const [a, b] = [top(file), top(t)];
        if (a === b || PENDING.has(`${file} -> ${t}`)) continue;
        graph.set(a, (graph.get(a) ?? new Set()).add(b));
      }
    expect(cyclesOf(graph, [...graph.keys()].sort()).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('every pending exception still names an import that exists', () => {
    const gone = [...PENDING.keys()].filter((e) => {
      const [file, target] = e.split(' -> ');
      return !edges.get(file!)?.includes(target!);
    });
    expect(gone).toEqual([]);
  });

  it('every folder a README allows is imported by that folder', () => {
    const used = new Map<string, Set<string>>();
    for (const [file, targets] of edges) {
      const from = unitOf(file)!;
      for (const t of targets) {
        const to = unitOf(t)!;
        if (to !== from) used.set(from, (used.get(from) ?? new Set()).add(to));
      }
    }
    const unused = [...rules].flatMap(([folder, allowed]) =>
      [...allowed].filter((a) => !used.get(folder)?.has(a)).map((a) => `${folder}/README.md allows ${a}, which none of its modules imports`),
    );
    expect(unused).toEqual([]);
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

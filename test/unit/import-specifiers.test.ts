/**
 * moduleSpecifiers (src/core/import-specifiers.ts), the one reader of import statements behind the
 * runtime copier (src/emit/runtime.ts), the handler-import warning (src/write/runtime-imports.ts)
 * and the import-direction test: each case is a quirk one of the three readers had to get right.
 */
import { describe, expect, it } from 'vitest';
import { moduleSpecifiers } from '../../src/core/import-specifiers.js';

const specs = (source: string): string[] => moduleSpecifiers(source).map((s) => (s.dynamic ? `import(${s.specifier})` : s.specifier));

describe('moduleSpecifiers', () => {
  it('reads every import form: value, type-only, namespace, side effect, re-exports, dynamic', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "import type * as C from './c.js';",
      "import './d.js';",
      "export { e } from './e.js';",
      "export * from './f.js';",
      "export type { G } from './g.js';",
      "const h = await import('./h.js');",
      'import { i } from "./i.js";',
      "import {\n  j,\n  k,\n} from './jk.js';",
      "import { z } from 'zod';",
    ].join('\n');
    expect(specs(source)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.js', './g.js', 'import(./h.js)', './i.js', './jk.js', 'zod']);
  });

  it('gives the offset of the opening quote', () => {
    const source = "// x\nimport type { A } from '../runtime/a.js';\n";
    const [s] = moduleSpecifiers(source);
    expect(source[s!.index]).toBe("'");
    expect(source.slice(s!.index + 1, s!.index + 1 + s!.specifier.length)).toBe('../runtime/a.js');
  });

  it('skips comments and strings that look like imports', () => {
    const source = [
      "// import { a } from './commented.js';",
      "/* import './block.js';",
      "   export * from './block2.js'; */",
      'const s = "from \'./in-string.js\'";',
      "const t = 'import ./x.js'; const u = `import { x } from './in-template.js'`;",
      "/**\n * import type { Doc } from './doc-comment.js';\n */",
      "import { real } from './real.js';",
    ].join('\n');
    expect(specs(source)).toEqual(['./real.js']);
  });

  it('two strings in a row: only the first follows from', () => {
    expect(specs("f(from, 'x'); import { a } from './a.js' './b.js';")).toEqual(['./a.js']);
  });

  it('a call named from or import is no import (Buffer.from, obj.import); a variable named from neither', () => {
    expect(specs("const b = Buffer.from('./x.js');\nconst c = loader.import('./y.js');\nconst from = './z.js';\nimport('./w.js');")).toEqual([
      'import(./w.js)',
    ]);
  });

  it('template literals, nested ones included, hide what they hold; what follows them is read', () => {
    const source = [
      "const a = `${doc(`the \\`${name}\\` tool`)} import { x } from './t1.js'`;",
      "const b = `${ { k: '}' }.k } from './t2.js'`;",
      "import { after } from './after.js';",
    ].join('\n');
    expect(specs(source)).toEqual(['./after.js']);
  });

  it('regular expression literals with quotes or comment openers are skipped', () => {
    const source = [
      'const q = /[\'"]/g;',
      'const c = /\\/\\*[\\s\\S]*?\\*\\//;',
      'const r = (s) => s.replace(/"/g, "\'");',
      "import { after } from './after.js';",
      "const half = a / b / c; import('./dyn.js');",
    ].join('\n');
    expect(specs(source)).toEqual(['./after.js', 'import(./dyn.js)']);
  });

  it('stays linear: an import after many strings is found', () => {
    expect(specs(`${"const s = 'x';\n".repeat(5000)}import type { X } from './x.js';\n`)).toEqual(['./x.js']);
  });
});

/**
 * staleRuntimeImports (src/write/runtime-imports.ts): which imports of a handler file point at a
 * flat runtime path that no longer exists, where they are, and what replaces them. Given the
 * handler file's path under src/ and its text, want each stale import as `line:col specifier -> replacement`.
 */
import { describe, expect, it } from 'vitest';
import { staleRuntimeImports } from '../../src/write/runtime-imports.js';

const cases: Array<{ name: string; file: string; source: string; want: string[] }> = [
  {
    name: 'type import of a flat path',
    file: 'handlers/a.ts',
    source: "import type { ExtraToolContext } from '../runtime/extra-tools.js';\n",
    want: ['1:39 ../runtime/extra-tools.js -> ../runtime/handlers.js'],
  },
  {
    name: 'value import, double quotes, second line',
    file: 'handlers/a.ts',
    source: '// mine\nimport { notifyListChanged } from "../runtime/list-changes.js";\n',
    want: ['2:35 ../runtime/list-changes.js -> ../runtime/handlers.js'],
  },
  {
    name: 're-export, side-effect import and dynamic import',
    file: 'handlers/a.ts',
    source: "export { x } from '../runtime/a.js';\nimport '../runtime/b.js';\nawait import('../runtime/c.js');\n",
    want: ['1:19 ../runtime/a.js -> ../runtime/handlers.js', '2:8 ../runtime/b.js -> ../runtime/handlers.js', '3:14 ../runtime/c.js -> ../runtime/handlers.js'],
  },
  {
    name: 'a file deeper down',
    file: 'handlers/deep/x.ts',
    source: "import type { RequestExtra } from '../../runtime/primitives.js';\n",
    want: ['1:35 ../../runtime/primitives.js -> ../../runtime/handlers.js'],
  },
  {
    name: 'a file right under src/',
    file: 'tools.ts',
    source: "import type { ResourceContent } from './runtime/resources.js';\n",
    want: ['1:38 ./runtime/resources.js -> ./runtime/handlers.js'],
  },
  {
    name: 'the stable module and the other top-level modules',
    file: 'handlers/a.ts',
    source: "import type { A } from '../runtime/handlers.js';\nimport { main } from '../runtime/main.js';\nimport type { L } from '../runtime/library.js';\n",
    want: [],
  },
  {
    name: 'folder paths that exist today (they compile; not this warning)',
    file: 'handlers/a.ts',
    source: "import type { ExtraToolContext } from '../runtime/tools/extra-tools.js';\n",
    want: [],
  },
  {
    name: 'packages, local files, and a folder named runtime elsewhere',
    file: 'handlers/a.ts',
    source: "import { z } from 'zod';\nimport { h } from './helpers.js';\nimport { r } from './runtime/extra-tools.js';\n",
    want: [],
  },
  {
    name: 'commented-out imports and specifier-like strings',
    file: 'handlers/a.ts',
    source:
      "// import type { X } from '../runtime/extra-tools.js';\n/* import '../runtime/x.js';\n*/\nconst s = \"from '../runtime/y.js'\";\nconst u = 'http://x' ; import type { Y } from '../runtime/z.js';\nconst t = `import '../runtime/q.js'`;\n",
    want: ['5:47 ../runtime/z.js -> ../runtime/handlers.js'],
  },
  {
    name: 'a call named from or import is no import (Buffer.from, obj.import)',
    file: 'handlers/a.ts',
    source: "const b = Buffer.from('../runtime/x.js');\nconst c = loader.import('../runtime/y.js');\nimport('../runtime/z.js');\n",
    want: ['3:8 ../runtime/z.js -> ../runtime/handlers.js'],
  },
  {
    name: 'an import after many strings is still found (only the end of the code is kept)',
    file: 'handlers/a.ts',
    source: `${"const s = 'x';\n".repeat(500)}import type { X } from '../runtime/extra-tools.js';\n`,
    want: ['501:24 ../runtime/extra-tools.js -> ../runtime/handlers.js'],
  },
];

describe('staleRuntimeImports', () => {
  for (const c of cases) {
    it(c.name, () => {
      expect(staleRuntimeImports(c.file, c.source).map((s) => `${s.line}:${s.col} ${s.specifier} -> ${s.replacement}`)).toEqual(c.want);
    });
  }
});

import { describe, expect, it } from 'vitest';
import { runtimeFiles } from '../../src/emit/runtime.js';

describe('runtimeFiles: the runtime modules generated code needs', () => {
  it('follows the imports of generated code and of the runtime modules they reach', () => {
    const files = runtimeFiles(["import { sessionOf } from './runtime/core/era.js';\nexport const x = 1;\n"]);
    expect([...files.keys()]).toContain('src/runtime/core/era.ts');
    expect([...files.keys()].every((f) => f.startsWith('src/runtime/'))).toBe(true);
  });

  it('finds an import written after a long body, and reads no string or comment that looks like one', () => {
    const body = `const big = ${JSON.stringify('y'.repeat(200_000))};\n`;
    const source = [
      "import type { Era } from './runtime/core/era.js';",
      body,
      "export { errorResult } from './runtime/core/error-result.js';",
      'const s = "import x from \'./runtime/nope.js\'";',
      "// import y from './runtime/nope-too.js'",
    ].join('\n');
    const names = [...runtimeFiles([source]).keys()];
    expect(names).toContain('src/runtime/core/era.ts');
    expect(names).toContain('src/runtime/core/error-result.ts');
    expect(names.some((n) => n.includes('nope'))).toBe(false);
  });

  it('reads no import inside a template literal that spans the last mention of ./runtime/', () => {
    const source = "import type { Era } from './runtime/core/era.js';\nconst t = `\nimport { x } from './runtime/nope.js';\n`;\n";
    expect([...runtimeFiles([source]).keys()]).toContain('src/runtime/core/era.ts');
    expect([...runtimeFiles([source]).keys()].some((n) => n.includes('nope'))).toBe(false);
  });

  it('copies nothing for code that names no runtime module', () => {
    expect(runtimeFiles(['export const x = "./runtime";\n']).size).toBe(0);
  });
});

// The Handlebars runtime that renders the precompiled project templates (core/lazy.ts) is the
// one-file build: one module to load instead of the 20 behind `handlebars/runtime`, with the same
// version and the same rendering.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { handlebarsRuntime, projectTemplates } from '../../src/core/lazy.js';

const require = createRequire(import.meta.url);

describe('handlebarsRuntime', () => {
  it('is the one-file runtime build, of the installed version', () => {
    const before = new Set(Object.keys(require.cache));
    const hb = handlebarsRuntime();
    const loaded = Object.keys(require.cache).filter((f) => !before.has(f) && f.includes('handlebars'));
    expect(loaded.every((f) => f.endsWith('handlebars.runtime.js'))).toBe(true);
    expect(hb.VERSION).toBe((require('handlebars/package.json') as { version: string }).version);
  });

  it('renders every precompiled project template as the multi-module runtime does', () => {
    const classic = (require('handlebars/runtime') as typeof import('handlebars')).create();
    const single = handlebarsRuntime().create();
    const context = { name: 'x', description: 'y', tools: [], env: [], deps: [], scripts: [] };
    for (const [file, spec] of Object.entries(projectTemplates())) {
      const render = (hb: typeof classic) => {
        try {
          return hb.template(spec)(context);
        } catch (e) {
          return `error: ${(e as Error).message}`;
        }
      };
      expect(render(single), file).toBe(render(classic));
    }
  });
});

/**
 * CommonJS modules loaded on first use, so a build loads only what it needs: Ajv's compiler only
 * to explain an invalid manifest or spec, or to check a schema written in the manifest; the
 * Handlebars compiler only to check prompt templates; the tokenizer only when something is
 * counted. The precompiled schema checks and project templates in `generated/`
 * (scripts/validators.mjs, scripts/templates.mjs) load as written.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { FormatsPlugin } from 'ajv-formats';
import type Handlebars from 'handlebars';
import { packageFile } from './paths.js';

const require = createRequire(import.meta.url);

function once<T>(load: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= load());
}

/** `ajv/dist/2020.js`. */
export const ajv2020 = once(() => require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js'));

/** ajv-formats' plugin function. */
export const ajvFormats = once((): FormatsPlugin => {
  const m = require('ajv-formats') as FormatsPlugin | { default: FormatsPlugin };
  return typeof m === 'function' ? m : m.default;
});

/** The full Handlebars (parser and compiler). */
export const handlebars = once(() => require('handlebars') as typeof import('handlebars'));

/**
 * The Handlebars runtime alone: renders precompiled templates. Its one-file build (the same
 * runtime as `handlebars/runtime`, which loads it as 20 CommonJS modules): one module to load.
 */
export const handlebarsRuntime = once(() => require('handlebars/dist/handlebars.runtime.js') as typeof import('handlebars'));

/**
 * The o200k tokenizer (about a sixth of a second to load): for the token budgets, the build
 * report, and calibrating result sizes on the spec's examples.
 */
export const o200k = once(() => require('gpt-tokenizer/cjs/encoding/o200k_base') as typeof import('gpt-tokenizer/encoding/o200k_base'));

/** A precompiled yes/no schema check: true when the value is valid (it reports no errors). */
export type SchemaCheck = (value: unknown) => boolean;

/** The precompiled check of a file in `generated/` (`manifest`, `openapi-3.0`, …). */
export function generatedCheck(name: 'manifest' | 'openapi-2.0' | 'openapi-3.0' | 'openapi-3.1'): SchemaCheck {
  return require(fileURLToPath(packageFile(`generated/${name}-check.cjs`))) as SchemaCheck;
}

/** The precompiled project templates: file name under templates/project ⇒ template. */
export const projectTemplates = once(
  () => require(fileURLToPath(packageFile('generated/templates.cjs'))) as Record<string, Parameters<typeof Handlebars.template>[0]>,
);

/**
 * CommonJS dependencies loaded on first use, so a build loads only what it needs: Ajv's compiler
 * only to explain an invalid manifest or spec, or to check a schema written in the manifest; the
 * Handlebars compiler only to check prompt templates (the project's own templates are
 * precompiled, see scripts/templates.mjs).
 */
import { createRequire } from 'node:module';
import type { FormatsPlugin } from 'ajv-formats';

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

/** The Handlebars runtime alone: renders precompiled templates. */
export const handlebarsRuntime = once(() => require('handlebars/runtime') as typeof import('handlebars'));

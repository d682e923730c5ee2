/**
 * The options of the Ajv instance that validates tool arguments and results (validate.ts). Kept
 * apart so scripts/meta-validator.mjs can generate meta-validator.ts with exactly these options.
 */
import type { Options } from 'ajv/dist/2020.js';
import { linearRegExp } from '../core/pattern.js';

/**
 * Decimal digits to which `multipleOf` is checked: a quotient within 1e-9 of a whole number
 * counts as whole, so decimal steps (0.1, 0.01) accept the values people write.
 */
export const MULTIPLE_OF_PRECISION = 9;

/**
 * - addUsedSchema: false keeps tools whose schemas share an `$id` from clashing in Ajv's registry.
 * - ownProperties: a schema property named `constructor` or `toString` must not be checked
 *   against what every object inherits from Object.prototype.
 * - code.regExp: patterns run on RE2, in linear time (pattern.ts), never on the backtracking engine.
 * - multipleOfPrecision: 0.3 is a multiple of 0.1 (in binary floating point 0.3 / 0.1 is 2.9999999999999996).
 */
export const AJV_OPTIONS = {
  allErrors: true,
  strict: false,
  logger: false,
  addUsedSchema: false,
  ownProperties: true,
  code: { regExp: linearRegExp },
  multipleOfPrecision: MULTIPLE_OF_PRECISION,
} as const satisfies Options;

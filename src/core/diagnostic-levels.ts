/**
 * The manifest's `diagnostics`: per code, `off` (drop its warnings), `warning` (the default) or
 * `error` (its warnings block the build). Errors cannot be lowered: a code that is never a
 * warning set to `off` or `warning` is itself an error, as is a code mcpgen does not have.
 */
import { CATALOG, type DiagnosticLevel, type Diagnostics, escapePointerToken, type Location, WARNING_CODES } from './diagnostics.js';
import { suggest } from './suggest.js';

const LEVELS: ReadonlySet<string> = new Set<DiagnosticLevel>(['off', 'warning', 'error']);
const WARNINGS: ReadonlySet<string> = new Set(WARNING_CODES);

/**
 * Reads `diagnostics` as written (anything that is not an object of known levels is left to the
 * schema check), reports the entries that cannot apply, and returns the levels that can.
 *
 * @example
 * // diagnostics: { MCPGEN_NO_BASE_URL: off, MCPGEN_UNKNOWN_TAG: off }
 * diagnosticLevels({ value, locate, diagnostics });
 * // Map { 'MCPGEN_NO_BASE_URL' => 'off' }, and an MCPGEN_DIAGNOSTIC_LEVEL_INVALID error at MCPGEN_UNKNOWN_TAG
 */
export function diagnosticLevels(opts: {
  value: unknown;
  locate: (pointer: string, o?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
}): Map<string, DiagnosticLevel> {
  const levels = new Map<string, DiagnosticLevel>();
  const { value } = opts;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return levels;
  for (const [code, level] of Object.entries(value as Record<string, unknown>)) {
    // the schema reports these (a value that is not a level, a name that is not MCPGEN_…)
    if (typeof level !== 'string' || !LEVELS.has(level) || !/^MCPGEN_[A-Z0-9_]+$/.test(code)) continue;
    const at = opts.locate(`/diagnostics/${escapePointerToken(code)}`, { key: true });
    if (!Object.hasOwn(CATALOG, code)) {
      const near = suggest(code, Object.keys(CATALOG));
      opts.diagnostics.error(
        'MCPGEN_DIAGNOSTIC_LEVEL_INVALID',
        `diagnostics names ${code}, which is not an mcpgen diagnostic code`,
        near !== undefined ? `did you mean "${near}"?` : 'use a code from docs/diagnostics.md, as printed after the severity',
        at,
      );
      continue;
    }
    if (level !== 'error' && !WARNINGS.has(code)) {
      opts.diagnostics.error(
        'MCPGEN_DIAGNOSTIC_LEVEL_INVALID',
        `diagnostics sets ${code} to ${level}, but ${code} is always an error and cannot be lowered`,
        `fix what ${code} reports, or remove this entry; only warnings can be set to off`,
        at,
      );
      continue;
    }
    levels.set(code, level as DiagnosticLevel);
  }
  return levels;
}

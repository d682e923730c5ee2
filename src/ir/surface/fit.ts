/**
 * Fitting the tool surface before it is measured (measure.ts) and judged (judge.ts): every
 * operation tool's input schema slimmed and made portable, its output schema made portable and
 * dropped when over its cap; and the defaults of the size settings.
 */
import type { Diagnostics, Location } from '../../core/diagnostics.js';
import { jsonFits } from '../../core/json-size.js';
import { portable } from '../schema/portable.js';
import { slimInput } from '../schema/slim-input.js';
import type { IrOperationTool } from '../types.js';

/** Defaults of the size settings (the manifest schema documents the same values). */
export const DEFAULT_LIMITS = {
  maxInputBytes: 4096,
  maxArgumentDescriptionLength: 160,
  maxOutputBytes: 768,
  maxListBytes: 10_485_760,
} as const;

const bytes = (v: unknown): number => (v === undefined ? 0 : Buffer.byteLength(JSON.stringify(v)));

/** What {@link fitTools} changed, for the surface report. */
export type FitReport = { dropped: string[]; cut: string[]; describedResults: number };

/**
 * Makes every operation tool's schemas fit, in place: input schemas slimmed towards
 * `maxInputBytes` and made portable; output schemas made portable and dropped (one warning
 * naming the tools) when larger than `maxOutputBytes`.
 */
export function fitTools(
  tools: IrOperationTool[],
  opts: { maxInputBytes: number; maxArgumentDescriptionLength: number; maxOutputBytes: number; locate: () => Location; diagnostics: Diagnostics },
): FitReport {
  const report: FitReport = { dropped: [], cut: [], describedResults: 0 };
  // the size of the largest dropped schema: the `outputSchemaMaxBytes` that would keep them all
  let needed = 0;
  for (const t of tools) {
    const slim = slimInput(t.inputSchema, { maxBytes: opts.maxInputBytes, maxArgumentDescriptionLength: opts.maxArgumentDescriptionLength });
    t.inputSchema = portable(slim.schema);
    if (slim.cutAt !== undefined) report.cut.push(t.name);
    if (t.outputSchema) {
      // a JSON schema for the 2xx body: the object itself, or the wrapper's `data`
      if (t.resultShape === 'object' || Object.hasOwn((t.outputSchema.properties ?? {}) as object, 'data')) report.describedResults++;
      const out = portable(t.outputSchema);
      if (t.outputMode !== 'strict' && !jsonFits(out, opts.maxOutputBytes)) {
        delete t.outputSchema;
        report.dropped.push(t.name);
        needed = Math.max(needed, bytes(out));
      } else t.outputSchema = out;
    }
  }
  if (report.dropped.length > 0) {
    const shown = report.dropped.slice(0, 20).join(', ') + (report.dropped.length > 20 ? ` and ${report.dropped.length - 20} more` : '');
    opts.diagnostics.warn(
      'MCPGEN_OUTPUT_SCHEMA_DROPPED',
      `${report.dropped.length} tool(s) publish no output schema because theirs is larger than outputSchemaMaxBytes ${opts.maxOutputBytes}: ${shown}`,
      `their results still come back as text; \`outputSchemaMaxBytes: ${needed}\` keeps ${report.dropped.length === 1 ? 'its schema' : 'all of them'}; or lower \`outputSchemaDepth\`, or set \`outputSchemas: none\` on ${report.dropped.length === 1 ? 'that tool' : 'those tools'} (overrides) to silence this`,
      opts.locate(),
    );
  }
  return report;
}

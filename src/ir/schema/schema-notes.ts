/**
 * Warnings for what the published schemas leave out of the spec's, so that nothing is dropped
 * silently: patterns the generated server cannot enforce in linear time (one warning per
 * pattern, naming the tools), and schemas cut for depth (one warning naming the tools).
 */
import type { Diagnostics, Location } from '../../core/diagnostics.js';
import type { ConversionNotes } from '../../openapi/schema.js';
import { MAX_SCHEMA_DEPTH } from '../../openapi/schema-depth.js';

/** The notes of one tool, and where its operation is. */
export type ToolSchemaNotes = { tool: string; notes: ConversionNotes; location: Location };

const listed = (names: readonly string[]): string => names.slice(0, 10).join(', ') + (names.length > 10 ? ` and ${names.length - 10} more` : '');

/** A pattern on one line: control characters (a pattern may contain a line break) escaped. */
const printable = (pattern: string): string => pattern.replace(/[\u0000-\u001f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Reports the notes of every tool (in tool order): MCPGEN_PATTERN_DROPPED, MCPGEN_SCHEMA_TOO_DEEP. */
export function reportSchemaNotes(all: readonly ToolSchemaNotes[], diagnostics: Diagnostics): void {
  const patterns = new Map<string, { problem: string; tools: string[]; location: Location }>();
  for (const { tool, notes, location } of all) {
    for (const [pattern, problem] of notes.patterns) {
      const entry = patterns.get(pattern) ?? { problem, tools: [], location };
      if (!entry.tools.includes(tool)) entry.tools.push(tool);
      patterns.set(pattern, entry);
    }
  }
  for (const [pattern, { problem, tools, location }] of patterns) {
    diagnostics.warn(
      'MCPGEN_PATTERN_DROPPED',
      `pattern \`${printable(pattern)}\` is left out of the input schema of ${tools.length === 1 ? 'tool' : 'tools'} ${listed(tools)}: ${problem}`,
      'the server does not check it and the API still does; to have it checked, rewrite it without lookaround or backreferences, or else acknowledge this with `diagnostics: { MCPGEN_PATTERN_DROPPED: off }`',
      location,
    );
  }
  const deep = all.filter((n) => n.notes.cut);
  if (deep.length > 0) {
    diagnostics.warn(
      'MCPGEN_SCHEMA_TOO_DEEP',
      `${deep.length === 1 ? 'tool' : `${deep.length} tools`} ${listed(deep.map((n) => n.tool))} ${deep.length === 1 ? 'has a schema' : 'have schemas'} nested deeper than ${MAX_SCHEMA_DEPTH} levels; below that, values are checked for their type only`,
      'the API still checks the full schema; flatten the schema in the spec to have the server check it all, or else acknowledge this with `diagnostics: { MCPGEN_SCHEMA_TOO_DEEP: off }`',
      deep[0]!.location,
    );
  }
}

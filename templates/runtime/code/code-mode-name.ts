/**
 * The name code calls an operation by in code mode: `api.<name>`. Pure, with no imports: mcpgen
 * writes the signatures with it at build time, and the server maps names back with it.
 *
 * This file is copied into generated projects that use code mode.
 */

/** The tool name with every character that cannot be in an identifier replaced by `_` (`pulls_list-reviews` ⇒ `pulls_list_reviews`). */
export function codeName(tool: string): string {
  const id = tool.replace(/[^A-Za-z0-9_$]/g, '_');
  return /^[0-9]/.test(id) ? `_${id}` : id;
}

/**
 * Shared schema definitions. A large API repeats the same definitions (Kubernetes' ObjectMeta,
 * GitHub's repository) in hundreds of tool schemas; the generated tool table stores each one
 * once and every tool picks the ones it uses, so the published schema is self-contained while
 * the generated source stays small.
 */
import type { JsonSchema } from './types.js';

/** `schema` with a `$defs` holding the named entries of `table`, in the given order. */
export function withDefs(schema: JsonSchema, table: Readonly<Record<string, JsonSchema>>, names: readonly string[]): JsonSchema {
  const entries = names.map((name): [string, JsonSchema] => {
    if (!Object.hasOwn(table, name)) throw new Error(`schema definition "${name}" is missing from the generated table`);
    return [name, table[name]!];
  });
  // Object.fromEntries creates own properties even for a definition named "__proto__"
  return { ...schema, $defs: Object.fromEntries(entries) };
}

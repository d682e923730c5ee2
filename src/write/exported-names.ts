/**
 * The names a TypeScript module exports, read from its source text, not a TypeScript program
 * (cheap, and independent of whether the project compiles yet): `export [async] function NAME`,
 * `export const|let|var NAME` and `export { …, x as NAME, … }` count. Used on user handler files
 * (handlers.ts) and the user's entry (user-entry.ts); `tsc` then checks the signatures.
 */

/** Names a TypeScript module's source exports, by the patterns above. */
export function exportedNames(source: string): Set<string> {
  const names = new Set<string>();
  const id = '[A-Za-z_$][A-Za-z0-9_$]*';
  for (const m of source.matchAll(new RegExp(`\\bexport\\s+(?:declare\\s+)?(?:async\\s+)?function\\s*\\*?\\s*(${id})`, 'g'))) names.add(m[1]!);
  for (const m of source.matchAll(new RegExp(`\\bexport\\s+(?:declare\\s+)?(?:const|let|var)\\s+(${id})`, 'g'))) names.add(m[1]!);
  for (const m of source.matchAll(/\bexport\s*\{([^}]*)\}/g)) {
    for (const spec of m[1]!.split(',')) {
      const parts = spec
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/);
      const name = parts[parts.length - 1]!.trim();
      if (name !== '') names.add(name);
    }
  }
  return names;
}

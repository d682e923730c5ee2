/**
 * The runtime's import graph remembered across builds, in the build cache
 * (`.cache/mcpgen/runtime-imports.entry`): for each runtime module copied into a project, the
 * runtime modules it imports, found by the sha256 of its source and read from the entry only when
 * the entry was written by this same mcpgen (../core/code-fingerprint.ts). Reading the imports of
 * ~100 modules with ../core/import-specifiers.ts costs ~0.07 s a build; a hash of their text ~3 ms.
 * A module whose source changed, or that the entry lacks, is read anew (and the entry rewritten);
 * a partial or corrupted entry is read as none (../core/cache-entry.ts).
 */
import { readCacheEntry, writeCacheEntry } from '../core/cache-entry.js';
import { codeFingerprint } from '../core/code-fingerprint.js';

const FORMAT = 2;
const FILE = 'runtime-imports.entry';

/** What the memo holds per module path (`server/server.ts`): the sha256 of its source and the module paths it imports. */
export type RuntimeImports = { sha256: string; imports: string[] };

/** The remembered imports, and whether this build added or replaced any. */
export type RuntimeImportMemo = { known: Map<string, RuntimeImports>; changed: boolean };

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** The memo kept in `cacheDir`; an empty one when there is none, or it is partial, corrupted, of another mcpgen or of another shape. */
export async function readRuntimeImportMemo(cacheDir: string): Promise<RuntimeImportMemo> {
  const memo: RuntimeImportMemo = { known: new Map(), changed: false };
  const entry = await readCacheEntry(cacheDir, FILE);
  if (!entry || entry.header.format !== FORMAT || entry.header.mcpgen !== codeFingerprint()) return memo;
  try {
    const body = JSON.parse(entry.body) as unknown;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return memo;
    for (const [name, v] of Object.entries(body)) {
      const r = v as Partial<RuntimeImports> | null;
      if (r === null || typeof r !== 'object' || typeof r.sha256 !== 'string' || !isStrings(r.imports)) return { known: new Map(), changed: false };
      memo.known.set(name, { sha256: r.sha256, imports: r.imports });
    }
  } catch {
    memo.known.clear();
  }
  return memo;
}

/** Writes the memo when this build changed it (whole or not at all); resolves to whether it wrote. */
export async function saveRuntimeImportMemo(cacheDir: string, memo: RuntimeImportMemo): Promise<boolean> {
  if (!memo.changed) return false;
  const body = JSON.stringify(Object.fromEntries([...memo.known].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
  return writeCacheEntry(cacheDir, FILE, { format: FORMAT, mcpgen: codeFingerprint() }, body);
}

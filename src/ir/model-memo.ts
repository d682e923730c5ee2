/**
 * The operation tools' part of the model (./operations-model.ts) kept in the build cache
 * (`.cache/mcpgen/operations-<manifest>.entry`, one slot per manifest): a rebuild after a change
 * that does not reach that part (the description, prompts, resources, concerns, policy …) reuses
 * the tools, with every diagnostic the part reported, instead of modelling GitHub's 1,100
 * operations again (~0.4 s).
 *
 * An entry is used only when all of these hold, else the part is modelled as without a cache and
 * the entry replaced:
 * - its key matches: a sha256 of the spec's content key (../openapi/cache.ts: the spec's bytes and
 *   every file a `$ref` read, the loading options), this mcpgen (../core/code-fingerprint.ts: its
 *   version, every file of its code, its dependencies' versions), `--report` (which counts the
 *   examples' tokens), the manifest's `diagnostics` levels, whether it has prompts, resources,
 *   resource templates or preprocessors, and the JSON of the resolved manifest in its order (the
 *   tools copy some objects as written, so their key order shows in the output) with only the
 *   settings this part never reads left out ({@link NOT_READ}: a new setting is in the key until
 *   someone shows it is not read here);
 * - every place in the manifest the part located (for a diagnostic or an origin) is still where it
 *   was: the manifest's text may have moved under an unchanged setting;
 * - the entry is whole (the length and hash of its header and body, ../core/cache-entry.ts) and of
 *   the right shape.
 * The diagnostics are replayed in their place, those of the argument rules' report (made at the end
 * of the model) at the end.
 */

import { readCacheEntry, sha256, writeCacheEntry } from '../core/cache-entry.js';
import { codeFingerprint } from '../core/code-fingerprint.js';
import type { Diagnostic, Location } from '../core/diagnostics.js';
import { share, sharing } from '../core/json-sharing.js';
import type { BuildInput, BuildManifest, OperationModel, OperationPart } from './build-input.js';
import { specParameterEnum } from './operations-model.js';
import type { IrArgumentRuleUse } from './types.js';

const FORMAT = 3;

/**
 * Settings of the resolved manifest that the operation part never reads (checked against
 * ./operations-model.ts and what it calls): they are left out of the key, so changing one reuses
 * the entry. Every other setting is in the key.
 */
const NOT_READ = new Set([
  'version',
  'description',
  'package',
  'output',
  'outputDir',
  'baseUrl',
  'timeoutMs',
  'budget',
  'prompts',
  'resources',
  'resourceTemplates',
  'preprocessors',
  'concerns',
  'concernMappings',
  'concernPresets',
  'exposeInMeta',
  'enforce',
  'reflection',
  'discovery',
  'discoveryPresets',
  'resultPresets',
  'entry',
  'deploy',
  'httpAuth',
  'policy',
]);

/** The key of the operation part of a build; see the module comment for what is in it. */
export function operationMemoKey(input: { specKey: string; manifest: BuildManifest; levels: unknown; exampleTokens: boolean }): string {
  const settings = Object.fromEntries(Object.entries(input.manifest).filter(([k]) => !NOT_READ.has(k)));
  // the part warns "no tool" or errs depending on whether the manifest has other primitives
  const others = ['prompts', 'resources', 'resourceTemplates', 'preprocessors'].some(
    (k) => ((input.manifest as unknown as Record<string, unknown[] | undefined>)[k]?.length ?? 0) > 0,
  );
  // the settings' JSON as resolved, in their order: the tools copy some objects as written (an
  // override's `annotations`, a hidden argument's `value`), so a change of key order is a change
  return sha256(
    JSON.stringify({
      format: FORMAT,
      mcpgen: codeFingerprint(),
      spec: input.specKey,
      settings,
      others,
      levels: input.levels ?? null,
      exampleTokens: input.exampleTokens,
    }),
  );
}

/** The slot of a manifest's entry in the cache folder. */
export const operationMemoFile = (manifestPath: string) => `operations-${sha256(manifestPath).slice(0, 32)}.entry`;

/** Entry header. */
type Header = {
  format: number;
  key: string;
  /** Every place in the manifest the part located: pointer, whether the key was asked for, and where it was. */
  located: Array<[string, boolean, Location]>;
  /** What the part reported, in order, at the manifest's levels. */
  diagnostics: Diagnostic[];
  /** The argument rules' report: its uses and warnings (`null`: the manifest has no `arguments`, never asked). */
  finish: { uses: IrArgumentRuleUse[]; diagnostics: Diagnostic[] } | null;
  /** Where the model holds one object at several places ../core/json-sharing.ts. */
  shared: Array<[string[], string[]]>;
};

/** The memo of one build: {@link OperationMemo.operations} answers from the entry or models and records. */
export type OperationMemo = {
  /** The operation part for `input`: the entry's when it holds it for the same inputs, else `compute(input)`, recorded for {@link OperationMemo.save}. */
  operations(input: BuildInput, compute: (input: BuildInput) => OperationPart): OperationPart;
  /** Whether the part came from the entry (known once `operations` ran). */
  readonly hit: boolean;
  /**
   * Whether `operations` will answer from the entry for this manifest (asked before the spec's
   * document is read: a build that gets its tools from here reads it only if something asks).
   * `operations` must then be given the same manifest and locator.
   */
  usable(input: Pick<BuildInput, 'manifest' | 'locateManifest'>): boolean;
  /** Writes what was recorded (a miss whose model is plain JSON data); called once the build has written its project. Resolves to whether it wrote. */
  save(): Promise<boolean>;
};

/**
 * Starts reading the entry of `manifestPath` (while the spec loads); `withKey` answers as the memo
 * of a build whose key is `key` ({@link operationMemoKey}).
 */
export function readOperationMemo(opts: { cacheDir: string; manifestPath: string }): { withKey(key: string): Promise<OperationMemo> } {
  const file = operationMemoFile(opts.manifestPath);
  const reading = readCacheEntry(opts.cacheDir, file);
  return { withKey: async (key) => memoOf({ ...opts, file, key, entry: await reading }) };
}

function memoOf(opts: { cacheDir: string; file: string; key: string; entry: Awaited<ReturnType<typeof readCacheEntry>> }): OperationMemo {
  const { file, entry } = opts;
  const header = entry?.header.format === FORMAT && entry.header.key === opts.key ? (entry.header as unknown as Header) : undefined;
  let hit = false;
  let record: (() => { header: Header; body: string } | undefined) | undefined;
  // the entry's model, once checked against the manifest (null: not usable)
  let prepared: OperationModel | null | undefined;
  const prepare = (input: Pick<BuildInput, 'manifest' | 'locateManifest'>) =>
    (prepared ??= header && entry ? (usableModel(input, header, entry.body) ?? null) : null);
  return {
    get hit() {
      return hit;
    },
    usable: (input) => prepare(input) !== null,
    operations(input, compute) {
      const model = prepare(input);
      if (model && header) {
        hit = true;
        return replay(input, header, model);
      }
      return recordPart(input, compute, opts.key, (r) => (record = r));
    },
    save: async () => {
      const made = record?.();
      if (!made) return false;
      return writeCacheEntry(opts.cacheDir, file, made.header as unknown as Record<string, unknown>, made.body);
    },
  };
}

/** The entry's model when it fits this manifest (same places located, the right shape); `undefined` otherwise. No side effects. */
function usableModel(input: Pick<BuildInput, 'manifest' | 'locateManifest'>, header: Header, body: string): OperationModel | undefined {
  try {
    if (!Array.isArray(header.located) || !Array.isArray(header.diagnostics) || !Array.isArray(header.shared)) return undefined;
    // the argument rules' report is made exactly when the manifest has `arguments` (in the key too)
    if ((header.finish === null) !== (input.manifest.argumentRules === undefined)) return undefined;
    for (const [pointer, key, at] of header.located) {
      if (JSON.stringify(input.locateManifest(pointer, key ? { key: true } : undefined)) !== JSON.stringify(at)) return undefined;
    }
    const model = JSON.parse(body) as unknown;
    return isModel(model) && share(model, header.shared) ? model : undefined;
  } catch {
    return undefined;
  }
}

/** The part from the entry's model, its diagnostics added to the build's. */
function replay(input: BuildInput, header: Header, model: OperationModel): OperationPart {
  for (const d of header.diagnostics) input.diagnostics.add(d);
  const finish = header.finish;
  let lookup: OperationPart['parameterEnum'] | undefined;
  return {
    model,
    finishRules: () => {
      for (const d of finish?.diagnostics ?? []) input.diagnostics.add(d);
      return finish?.uses ?? [];
    },
    // completions look parameters up in the spec's operations, listed only when one asks
    parameterEnum: (binding) => (lookup ??= specParameterEnum(input.spec))(binding),
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isArrays = (o: Record<string, unknown>, keys: string[]) => keys.every((k) => Array.isArray(o[k]));

/** Whether `v` has the shape of an {@link OperationModel} at its top (the entry's body was written by this mcpgen, so its insides are). */
function isModel(v: unknown): v is OperationModel {
  return (
    isRecord(v) &&
    isArrays(v, ['tools', 'apiOperations', 'extraToolIds', 'toolNames', 'usesByTool', 'resultExamples', 'securitySchemes']) &&
    (v.tools as unknown[]).every((t) => isRecord(t) && t.kind === 'operation-tool') &&
    isRecord(v.fitted) &&
    isArrays(v.fitted, ['dropped', 'cut']) &&
    typeof v.fitted.describedResults === 'number' &&
    isRecord(v.excluded) &&
    isArrays(v.excluded, ['toolNames', 'entries']) &&
    (v.specBaseUrl === undefined || typeof v.specBaseUrl === 'string')
  );
}

/** Models the part with the manifest's places and the diagnostics recorded; `done` receives how to make the entry once the build is over. */
function recordPart(
  input: BuildInput,
  compute: (input: BuildInput) => OperationPart,
  key: string,
  done: (make: () => { header: Header; body: string } | undefined) => void,
): OperationPart {
  const located = new Map<string, [string, boolean, Location]>();
  const locateManifest: BuildInput['locateManifest'] = (pointer, o) => {
    const at = input.locateManifest(pointer, o);
    const k = `${o?.key === true ? 1 : 0}${pointer}`;
    if (!located.has(k)) located.set(k, [pointer, o?.key === true, at]);
    return at;
  };
  const before = input.diagnostics.items.length;
  const part = compute({ ...input, locateManifest });
  const diagnostics = input.diagnostics.items.slice(before);
  // kept now: the rest of the model adds to the tools (their `$defs` type names …)
  const shared = sharing(part.model);
  const body = shared === undefined ? undefined : JSON.stringify(part.model);
  let finish: Header['finish'] = null;
  done(() =>
    body === undefined || shared === undefined
      ? undefined
      : { header: { format: FORMAT, key, located: [...located.values()], diagnostics, finish, shared }, body },
  );
  return {
    ...part,
    finishRules: () => {
      const from = input.diagnostics.items.length;
      const uses = part.finishRules();
      finish = { uses: JSON.parse(JSON.stringify(uses)) as IrArgumentRuleUse[], diagnostics: input.diagnostics.items.slice(from) };
      return uses;
    },
  };
}

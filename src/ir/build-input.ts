/**
 * What the IR builder (./build.ts) reads: the manifest's settings, the loaded spec, where problems
 * go. A file of its own so that the builder's parts (./operations-model.ts, ./model-memo.ts) share
 * it without importing the builder.
 */
import type { Diagnostics, Location } from '../core/diagnostics.js';
import type { ResolvedManifest } from '../manifest/load.js';
import type { ArgumentRule, Override, Policy } from '../manifest/types.gen.js';
import type { LoadedSpec } from '../openapi/load.js';
import type { ParameterEnumLookup } from './features/completions.js';
import type { FitReport } from './surface/fit.js';
import type { ExcludedReference } from './tools/excluded.js';
import type { SelectorInput } from './tools/select.js';
import type { IrArgumentRuleUse, IrOperationTool, IrResultExample, IrServer } from './types.js';

/**
 * The manifest settings the IR builder reads (defaults applied); selectors as written, so that
 * diagnostics point at the exact value.
 */
export type BuildManifest = Pick<
  ResolvedManifest,
  | 'name'
  | 'version'
  | 'description'
  | 'baseUrl'
  | 'envPrefix'
  | 'maxToolNameLength'
  | 'maxDescriptionLength'
  | 'timeoutMs'
  | 'maxResponseBytes'
  | 'auth'
  | 'uploads'
> &
  Partial<Pick<ResolvedManifest, 'scopeMap' | 'httpAuth'>> &
  Partial<Pick<ResolvedManifest, 'entry' | 'deploy'>> &
  Partial<
    Pick<
      ResolvedManifest,
      | 'package'
      | 'outputSchemas'
      | 'outputSchemaDepth'
      | 'outputSchemaMaxBytes'
      | 'inputSchemaMaxBytes'
      | 'maxArgumentDescriptionLength'
      | 'budget'
      | 'results'
      | 'resultPresets'
    >
  > &
  Partial<
    Pick<
      ResolvedManifest,
      | 'maxInFlightBytes'
      | 'dir'
      | 'extraTools'
      | 'prompts'
      | 'resources'
      | 'resourceTemplates'
      | 'concerns'
      | 'concernMappings'
      | 'concernPresets'
      | 'exposeInMeta'
      | 'enforce'
      | 'preprocessors'
      | 'reflection'
      | 'discovery'
      | 'discoveryPresets'
    >
  > & {
    include?: SelectorInput[];
    exclude?: SelectorInput[];
    overrides?: Record<string, Override>;
    /** `arguments` (argument rules) as written. */
    argumentRules?: ArgumentRule[];
    /** `policy` as written. */
    policy?: Policy;
  };

/** Inputs of {@link buildIr}. */
export type BuildInput = {
  manifest: BuildManifest;
  /** Locates a pointer in the manifest (`key: true` for the key of a mapping entry). */
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
  spec: LoadedSpec;
  diagnostics: Diagnostics;
  /** Count the tokens of each tool's documented JSON response examples, as documented and compacted (`build --report`: {@link IrServer.resultExamples}). */
  exampleTokens?: boolean;
  /** The build cache's memo of the operation tools (./model-memo.ts): the same IR and diagnostics with it as without. */
  memo?: { operations(input: BuildInput, compute: (input: BuildInput) => OperationPart): OperationPart };
};

/** The part's data, what the rest of the model reads of it (all of it plain JSON data, kept by ./model-memo.ts). */
export type OperationModel = {
  /** The listed operation tools, fitted, in spec order. */
  tools: IrOperationTool[];
  /** Operations extra tools call through `ctx.api` that are not tools. */
  apiOperations: IrOperationTool[];
  /** What fitting the tools' schemas did. */
  fitted: FitReport;
  /** The final names and TS identifiers of the extra tools, in manifest order. */
  extraToolIds: Array<{ name: string; argsTypeName: string; constName: string; resultTypeName: string }>;
  /** The names of the listed tools and of the extra tools. */
  toolNames: string[];
  /** Names of left-out operations, and the stale manifest entries found so far (./tools/excluded.ts). */
  excluded: { toolNames: string[]; entries: ExcludedReference[] };
  securitySchemes: IrServer['securitySchemes'];
  /** Per extra tool, the operationIds it uses that exist. */
  usesByTool: ReadonlyArray<readonly string[]>;
  /** With `exampleTokens`: the token counts of the tools' documented result examples. */
  resultExamples: IrResultExample[];
  /** The spec's own absolute base URL, if it gives one (./base-url.ts): the model then needs the spec's document only for completions. */
  specBaseUrl?: string;
};

/** {@link modelOperations}' answer: the data, and the two things the rest of the model asks of it later. */
export type OperationPart = {
  model: OperationModel;
  /** The argument rules' report (unmatched and conflicting rules, warned here) and their uses; called where the IR's `argumentRules` is set. */
  finishRules: () => IrArgumentRuleUse[];
  /** Enum values of a parameter of the spec's operations, for completions. */
  parameterEnum: ParameterEnumLookup;
};

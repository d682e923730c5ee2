/**
 * The operation tools' part of the model (./build.ts): the spec's operations selected, named and
 * made into tools, their schemas fitted, with every diagnostic that work reports, in order. It
 * reads the spec and only the manifest settings listed in ./model-memo.ts's key, so the build
 * cache can keep what it gives (./model-memo.ts) and a manifest change elsewhere reuses it.
 */
import { escapePointerToken, type Location } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';
import { type ResolvedResults, resolveResults } from '../manifest/load.js';
import type { LoadedSpec } from '../openapi/load.js';
import { knownTags, listOperations, type RawOperation } from '../openapi/operations.js';
import { SchemaConverter } from '../openapi/schema.js';
import { specBaseUrl } from './base-url.js';
import type { BuildInput, OperationPart } from './build-input.js';
import { usedOperations } from './features/api-uses.js';
import type { ParameterEnumLookup } from './features/completions.js';
import { parameterEnumLookup } from './features/completions.js';
import { reportSchemaNotes, type ToolSchemaNotes } from './schema/schema-notes.js';
import { DEFAULT_LIMITS, fitTools } from './surface/fit.js';
import { plainLinks, truncateDescription } from './text.js';
import { ArgumentRules, bodyFieldNames, hideBodyFields } from './tools/argument-rules.js';
import { applyArgumentOverrides } from './tools/arguments.js';
import { synthesizeDescription } from './tools/describe.js';
import { ExcludedReferences, entryLabel, excludedToolNames } from './tools/excluded.js';
import { longRunning } from './tools/long-running.js';
import { mcpScopes } from './tools/mcp-scopes.js';
import { assignIdentifiers, assignToolNames, type NameRequest } from './tools/names.js';
import { operationParts } from './tools/operation-tool.js';
import { checkDuplicateOperationIds, resolveOverrides } from './tools/overrides.js';
import {
  type Calibration,
  countCalibrations,
  policyDifference,
  projectionArgName,
  ResultCalibrator,
  toolResultSettings,
  withProjectionArgument,
} from './tools/results.js';
import { buildSecurity, reservedVariables } from './tools/security.js';
import { selectOperations } from './tools/select.js';
import type { IrOperationTool, IrResultExample } from './types.js';

/** Enum values of the spec's operations' parameters, for completions (what {@link modelOperations} gives as `parameterEnum`, without modelling). */
export function specParameterEnum(spec: LoadedSpec): ParameterEnumLookup {
  const conv = new SchemaConverter(spec.document);
  return parameterEnumLookup(listOperations(spec.document), (n) => conv.deref(n));
}

/** Models the operation tools; problems go to `input.diagnostics`. */
export function modelOperations(input: BuildInput): OperationPart {
  const { manifest, spec, diagnostics, locateManifest } = input;
  const doc = spec.document;
  const file = spec.source.file;
  const ops = listOperations(doc);

  checkDuplicateOperationIds(ops, input);
  const errorsBefore = diagnostics.items.filter((d) => d.severity === 'error').length;
  const selected = selectOperations({
    ops,
    tags: knownTags(doc, ops),
    ...(manifest.include ? { include: manifest.include } : {}),
    ...(manifest.exclude ? { exclude: manifest.exclude } : {}),
    locate: (p) => locateManifest(p),
    diagnostics,
  });
  // a selector naming a tag or operation that does not exist already explains an empty selection
  const selectorErrors = diagnostics.items.filter((d) => d.severity === 'error').length > errorsBefore;
  if (selected.length === 0 && !selectorErrors) {
    // with custom primitives a server without operation tools is legitimate, but likely a slip
    const others = [manifest.extraTools, manifest.prompts, manifest.resources, manifest.resourceTemplates, manifest.preprocessors].some(
      (l) => (l?.length ?? 0) > 0,
    );
    const report = others ? diagnostics.warn.bind(diagnostics) : diagnostics.error.bind(diagnostics);
    report(
      'MCPGEN_NO_TOOLS',
      'no operation is left to become a tool',
      ops.length ? 'loosen `include` or `exclude` in the manifest' : 'the OpenAPI document has no operations',
      locateManifest(manifest.include ? '/include' : manifest.exclude ? '/exclude' : ''),
    );
  }

  const overrides = resolveOverrides(ops, input);
  const requestOf = (op: RawOperation): NameRequest => {
    const r: NameRequest = { key: `${op.httpMethod} ${op.path}`, derived: op.operationId ?? `${op.method} ${op.path}` };
    const ov = overrides.get(op);
    if (ov?.override.name !== undefined) r.explicit = ov.override.name;
    return r;
  };
  const requests: NameRequest[] = selected.map(requestOf);
  const extras = manifest.extraTools ?? [];
  // extra tools take part in naming as explicit names: a clash with any other tool is an error
  const extraRequests = extras.map((t, i): NameRequest => ({ key: `extraTools[${i}]`, derived: t.name, explicit: t.name }));
  requests.push(...extraRequests);
  // operations extra tools call through ctx.api that are not tools: named after every tool (api-uses.ts)
  const used = usedOperations({ extras, ops, selected, locateManifest: (p) => locateManifest(p), diagnostics });
  requests.push(...used.only.map(requestOf));
  const { names, problems } = assignToolNames(requests, manifest.maxToolNameLength);
  const toolNames = names.slice(0, selected.length + extras.length);
  // entries naming operations include/exclude leave out: one warning at the end, not an error each
  const excluded = new ExcludedReferences(
    excludedToolNames({ ops, selected, request: requestOf, extras: extraRequests, maxToolNameLength: manifest.maxToolNameLength, names: toolNames }),
  );
  const kept = new Set([...selected, ...used.only]);
  for (const [op, { key }] of overrides) if (!kept.has(op)) excluded.add(`/overrides/${escapePointerToken(key)}`, entryLabel('overrides', key));
  const locateKey = (key: string): Location => {
    const extra = /^extraTools\[(\d+)\]$/.exec(key);
    if (extra) return locateManifest(`/extraTools/${extra[1]}/name`);
    const op = [...selected, ...used.only].find((o) => `${o.httpMethod} ${o.path}` === key)!;
    const ov = overrides.get(op);
    return ov ? locateManifest(`/overrides/${escapePointerToken(ov.key)}/name`) : spec.source.locate(op.pointer);
  };
  for (const p of problems) {
    if (p.kind === 'too-long') {
      diagnostics.error(
        'MCPGEN_INVALID_TOOL_NAME',
        `tool name "${p.name}" is ${p.name.length} characters, longer than maxToolNameLength ${p.max}`,
        `shorten the name or raise \`maxToolNameLength\` (at most 128)`,
        locateKey(p.key),
      );
    } else {
      for (const key of p.keys) {
        const others = p.keys.filter((k) => k !== key);
        const help = key.startsWith('extraTools[') ? 'give the extra tool another `name`' : 'give one of them a different `name` in `overrides`';
        diagnostics.error('MCPGEN_DUPLICATE_TOOL_NAME', `tool name "${p.name}" of ${key} is also used by ${others.join(', ')}`, help, locateKey(key));
      }
    }
  }
  const ids = assignIdentifiers(names);
  const conv = new SchemaConverter(doc);
  const security = buildSecurity({
    spec,
    ops: [...selected, ...used.only],
    ...(manifest.auth ? { auth: manifest.auth } : {}),
    envPrefix: manifest.envPrefix,
    deref: (n) => conv.deref(n),
    locateManifest,
    diagnostics,
  });
  const toolScopes = mcpScopes({
    spec,
    ops: [...selected, ...used.only],
    deref: (n) => conv.deref(n),
    ...(manifest.scopeMap ? { scopeMap: manifest.scopeMap } : {}),
    locateManifest,
    diagnostics,
  }).scopes;
  if (manifest.maxInFlightBytes !== undefined && manifest.maxInFlightBytes < manifest.maxResponseBytes) {
    diagnostics.error(
      'MCPGEN_MANIFEST_INVALID',
      `maxInFlightBytes ${manifest.maxInFlightBytes} is less than maxResponseBytes ${manifest.maxResponseBytes}: no response could be read`,
      'raise `maxInFlightBytes` to at least `maxResponseBytes` (the default is 67108864)',
      locateManifest('/maxInFlightBytes'),
    );
  }
  const reserved = reservedVariables(manifest.envPrefix);
  const rules = new ArgumentRules({ rules: manifest.argumentRules ?? [], ops, tags: knownTags(doc, ops), reserved, locateManifest, diagnostics });
  const schemaNotes: ToolSchemaNotes[] = [];
  const results = manifest.results ?? resolveResults(undefined);
  const calibrator = new ResultCalibrator();
  // every tool's calibration, finished after all tools are made: their texts counted in one batch
  const calibrations: Array<{ tool: IrOperationTool; calibration: Calibration }> = [];
  const resultExamples: IrResultExample[] = [];
  /** The tool of `op`, named `names[i]`; `listed`: a tool the server lists (its schema notes and examples are reported). */
  const operationTool = (op: RawOperation, i: number, listed: boolean): IrOperationTool => {
    const outputSchemas = overrides.get(op)?.override.outputSchemas ?? manifest.outputSchemas ?? 'lenient';
    let parts = operationParts({
      op,
      doc,
      version: spec.version,
      conv,
      file,
      localFiles: manifest.uploads?.localFiles === true,
      outputSchemas,
      ...(manifest.outputSchemaDepth !== undefined ? { outputDepth: manifest.outputSchemaDepth } : {}),
      outputMaxBytes: manifest.outputSchemaMaxBytes ?? DEFAULT_LIMITS.maxOutputBytes,
    });
    if (parts.schemaNotes && listed) schemaNotes.push({ tool: names[i]!, notes: parts.schemaNotes, location: spec.source.locate(op.pointer) });
    const entry = overrides.get(op);
    const ov = entry?.override;
    const args = [...parts.params.map((p) => p.arg), ...(parts.body ? [parts.body.arg] : [])];
    const merged = rules.forTool({ op, name: names[i]!, args, bodyFields: bodyFieldNames(parts), own: isObject(ov?.arguments) ? ov.arguments : undefined });
    if (merged)
      parts = hideBodyFields(
        applyArgumentOverrides({
          parts,
          overrides: merged.overrides,
          sources: merged.sources,
          operation: `${op.httpMethod} ${op.path}`,
          at: `/overrides/${escapePointerToken(entry?.key ?? '')}/arguments`,
          reserved,
          locateManifest,
          diagnostics,
        }),
        merged.bodyFields,
      );
    const tool: IrOperationTool = {
      kind: 'operation-tool',
      name: names[i]!,
      argsTypeName: ids[i]!.argsTypeName,
      constName: ids[i]!.constName,
      resultTypeName: ids[i]!.resultTypeName,
      inputSchema: parts.inputSchema,
      resultShape: parts.resultShape,
      outputMode: outputSchemas,
      annotations: { ...parts.annotations, ...(ov?.annotations ?? {}) },
      method: op.httpMethod,
      path: op.path,
      params: parts.params,
      tags: op.tags,
      security: security.requirements.get(op) ?? [],
      origin: { file, pointer: op.pointer },
    };
    // the manifest's own list wins (`[]`: none)
    const scopes = ov?.scopes !== undefined ? [...new Set(ov.scopes)].sort() : toolScopes.get(op);
    if (scopes !== undefined && scopes.length > 0) tool.scopes = scopes;
    const title = ov?.title ?? parts.title;
    const description =
      ov?.description ?? (parts.description === undefined ? undefined : truncateDescription(plainLinks(parts.description), manifest.maxDescriptionLength));
    if (title !== undefined) tool.title = title;
    if (description !== undefined) tool.description = description;
    if (parts.outputSchema) tool.outputSchema = parts.outputSchema;
    if (parts.body) tool.body = parts.body;
    if (op.operationId) tool.operationId = op.operationId;
    const lro = longRunning(op, ops, (n) => conv.deref(n));
    if (lro) tool.longRunning = lro;
    const settings = toolResultSettings(results, ov?.results);
    applyResultSettings({ tool, parts, global: results, settings, calibrator, calibrations });
    const counted = input.exampleTokens && listed ? calibrator.exampleTokens(parts.resultExamples, settings) : undefined;
    if (counted) resultExamples.push({ tool: tool.name, ...counted, maxTokens: settings.maxTokens });
    return tool;
  };
  const tools: IrOperationTool[] = selected.map((op, i) => operationTool(op, i, true));
  const apiOperations = used.only.map((op, j) => operationTool(op, selected.length + extras.length + j, false));
  countCalibrations(calibrations.map((c) => c.calibration));
  for (const { tool, calibration } of calibrations) {
    const bytesPerToken = calibration.finish();
    if (bytesPerToken !== undefined) tool.bytesPerToken = bytesPerToken;
  }

  reportSchemaNotes(schemaNotes, diagnostics);
  const fitted = fitTools(tools, {
    maxInputBytes: manifest.inputSchemaMaxBytes ?? DEFAULT_LIMITS.maxInputBytes,
    maxArgumentDescriptionLength: manifest.maxArgumentDescriptionLength ?? DEFAULT_LIMITS.maxArgumentDescriptionLength,
    maxOutputBytes: manifest.outputSchemaMaxBytes ?? DEFAULT_LIMITS.maxOutputBytes,
    locate: () => outputCapAt(locateManifest),
    diagnostics,
  });

  // an operation with neither summary nor description still tells the model what it does
  for (const [i, t] of tools.entries()) {
    if (t.description === undefined)
      t.description = synthesizeDescription({ ...t, deprecated: selected[i]!.deprecated, maxLength: manifest.maxDescriptionLength });
  }
  const base = specBaseUrl(doc, spec.version);
  return {
    model: {
      tools,
      apiOperations,
      fitted,
      extraToolIds: extras.map((_, i) => ({ name: names[selected.length + i]!, ...ids[selected.length + i]! })),
      toolNames,
      excluded: { toolNames: [...excluded.toolNames], entries: [...excluded.entries] },
      securitySchemes: security.schemes,
      usesByTool: used.byTool,
      resultExamples,
      ...(base !== undefined ? { specBaseUrl: base } : {}),
    },
    finishRules: () => rules.finish(),
    parameterEnum: parameterEnumLookup(ops, (n) => conv.deref(n)),
  };
}

/**
 * Sets a tool's result settings where they differ from the server's, its calibrated
 * `bytesPerToken`, and, with projection on and a result that can be JSON, its projection
 * argument (named clear of every argument it has, hidden ones included).
 */
function applyResultSettings(input: {
  tool: IrOperationTool;
  parts: { jsonResult: boolean; resultExamples: unknown[] };
  global: ResolvedResults;
  settings: ResolvedResults;
  calibrator: ResultCalibrator;
  calibrations: Array<{ tool: IrOperationTool; calibration: Calibration }>;
}): void {
  const { tool, parts, settings } = input;
  const differs = policyDifference(settings, input.global);
  if (differs) tool.results = differs;
  // its bytesPerToken is set once every tool's examples are counted (buildIr)
  const calibration = input.calibrator.calibration(parts.resultExamples, settings);
  if (calibration) input.calibrations.push({ tool, calibration });
  if (settings.projection && parts.jsonResult) {
    const properties = typeof tool.inputSchema.properties === 'object' && tool.inputSchema.properties !== null ? Object.keys(tool.inputSchema.properties) : [];
    const arg = projectionArgName(new Set([...properties, ...tool.params.map((p) => p.arg), ...(tool.body ? [tool.body.arg] : [])]));
    tool.inputSchema = withProjectionArgument(tool.inputSchema, arg);
    tool.projection = { arg };
  }
}

/**
 * Where MCPGEN_OUTPUT_SCHEMA_DROPPED points: the manifest's `outputSchemaMaxBytes` when it is
 * written there, else the manifest file as a whole, with no line (the resolved manifest always
 * has a value, so only the file can tell: a key that is not written resolves to the root's
 * position, the first key's line).
 */
function outputCapAt(locateManifest: BuildInput['locateManifest']): Location {
  const value = locateManifest('/outputSchemaMaxBytes');
  const root = locateManifest('');
  return value.line === root.line && value.col === root.col
    ? { file: root.file, pointer: '', line: 0, col: 0 }
    : locateManifest('/outputSchemaMaxBytes', { key: true });
}

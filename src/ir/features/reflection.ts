/**
 * The reflection gate of the manifest → IR, with the checks a schema cannot express:
 * gated tools exist; gate domains are declared; gate prompts do not clash with other prompts and
 * one prompt name has one template; templates parse and use only the gate's prompt arguments;
 * prompt-argument templates parse and read only the tool's arguments; `persist_justification`
 * is free as a tool name when the host flow needs it; the justification schema compiles.
 */
import { type Diagnostics, escapePointerToken, type Location } from '../../core/diagnostics.js';
import { suggest } from '../../core/suggest.js';
import type { ResolvedManifest } from '../../manifest/load.js';
import type { ReflectionGate } from '../../manifest/types.gen.js';
import { type ExcludedReferences, entryLabel } from '../tools/excluded.js';
import type { IrGate, IrReflection, JsonSchema } from '../types.js';
import { checkPromptTemplate } from './prompt-template.js';

/** Name of the tool that stores a host-written justification (runtime/reflection/reflection-config.ts). */
export const PERSIST_TOOL_NAME = 'persist_justification';

/** Store directory when the manifest sets none. */
export const DEFAULT_STORE_DIR = '.preflight/justifications';

/** Inputs of {@link buildReflection}. */
export type ReflectionInput = {
  manifest: Pick<ResolvedManifest, 'reflection' | 'prompts'>;
  /** Every tool (operation and extra) by final name. */
  tools: ReadonlyArray<{ name: string; kind: string; inputSchema: JsonSchema; outputSchema?: JsonSchema; outputMode?: string }>;
  /** Prompt names the server has besides gate prompts (manifest prompts, `with_context`). */
  promptNames: readonly string[];
  /** Checks an object-rooted JSON Schema at a manifest pointer, reporting problems. */
  checkSchema: (schema: JsonSchema, pointer: string, which: string) => void;
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
  /** Collects gates of tools whose operations include/exclude leave out (not errors). */
  excluded?: ExcludedReferences;
  /** `entry: custom`: a gate may name a tool registered at run time (src/main.ts), which the build cannot see. */
  runTimeTools?: boolean;
};

/** Builds the reflection IR; `undefined` without `reflection`. Problems go to `diagnostics`. */
export function buildReflection(input: ReflectionInput): IrReflection | undefined {
  const r = input.manifest.reflection;
  if (r === undefined) return undefined;
  const { diagnostics, locateManifest } = input;
  const file = locateManifest('').file;
  const mode = r.mode ?? 'auto';
  const byName = new Map(input.tools.map((t) => [t.name, t]));
  const toolNames = [...byName.keys()];

  if (r.justificationSchema !== undefined) input.checkSchema(r.justificationSchema, '/reflection/justificationSchema', 'justification schema');
  // the host flow (and its tool) exists when some gate may fall back to it
  const gateModes = Object.values(r.gates ?? {}).flatMap((v) => (Array.isArray(v) ? v : [v]).map((g) => g.mode ?? mode));
  if ([mode, ...gateModes].some((m) => m !== 'sampling') && byName.has(PERSIST_TOOL_NAME)) {
    diagnostics.error(
      'MCPGEN_DUPLICATE_TOOL_NAME',
      `tool name "${PERSIST_TOOL_NAME}" is taken by the reflection gate's host flow`,
      `rename that tool, or set \`reflection.mode: sampling\` (no ${PERSIST_TOOL_NAME} tool then)`,
      locateManifest('/reflection'),
    );
  }

  const declared = r.domains;
  declared?.forEach((d, i) => {
    if (declared.indexOf(d) !== i)
      diagnostics.error(
        'MCPGEN_DUPLICATE_PRIMITIVE',
        `reflection domain ${JSON.stringify(d)} is declared twice`,
        'list each domain once',
        locateManifest(`/reflection/domains/${i}`),
      );
  });
  const used: string[] = [];
  const prompts = new Map<string, { template: string; args: Set<string>; at: string }>();
  const otherPrompts = new Set(input.promptNames);
  const gates: Record<string, IrGate[]> = {};
  if (Object.keys(r.gates ?? {}).length === 0) {
    diagnostics.warn(
      'MCPGEN_REFLECTION_NO_GATES',
      'the reflection gate has no gates, so it gates nothing',
      'add `gates` (tool name ⇒ gate), or remove `reflection`',
      locateManifest('/reflection'),
    );
  }

  for (const [tool, value] of Object.entries(r.gates ?? {})) {
    const base = `/reflection/gates/${escapePointerToken(tool)}`;
    // a tool registered at run time: its arguments are unknown here, so its gates' templates are checked for syntax only
    const target = byName.get(tool) ?? (input.runTimeTools === true && !input.excluded?.toolNames.has(tool) ? { inputSchema: {} } : undefined);
    if (target === undefined && input.excluded?.toolNames.has(tool)) {
      input.excluded.add(base, entryLabel('reflection.gates', tool));
      continue;
    }
    if (target === undefined) {
      const near = suggest(tool, [...toolNames, ...(input.excluded?.toolNames ?? [])]);
      const left = near !== undefined && !byName.has(near) ? ' (include/exclude leave it out)' : '';
      diagnostics.error(
        'MCPGEN_UNKNOWN_PRIMITIVE',
        `gated tool ${JSON.stringify(tool)} does not exist`,
        near ? `did you mean "${near}"?${left}` : 'key gates by the final tool name (after overrides)',
        locateManifest(base, { key: true }),
      );
      continue;
    }
    const list: Array<[ReflectionGate, string]> = Array.isArray(value) ? value.map((g, k) => [g, `${base}/${k}`]) : [[value, base]];
    const toolArgs = topLevelProperties(target.inputSchema);
    const report = toolArgs?.open ? diagnostics.warn.bind(diagnostics) : diagnostics.error.bind(diagnostics);
    gates[tool] = list.map(([g, at]) => {
      if (declared !== undefined && !declared.includes(g.domain)) {
        const near = suggest(g.domain, declared);
        diagnostics.error(
          'MCPGEN_REFLECTION_UNKNOWN_DOMAIN',
          `domain ${JSON.stringify(g.domain)} is not declared in \`reflection.domains\``,
          near ? `did you mean "${near}"?` : `declare it under \`reflection.domains\` (${declared.length > 0 ? `now: ${declared.join(', ')}` : 'empty now'})`,
          locateManifest(`${at}/domain`),
        );
      }
      if (!used.includes(g.domain)) used.push(g.domain);
      const promptArgs = g.promptArgs ?? {};
      for (const [name, src] of Object.entries(promptArgs)) {
        const check = checkPromptTemplate(src, toolArgs?.names ?? [], { inlineHelpers: ['json'] });
        const where = locateManifest(`${at}/promptArgs/${escapePointerToken(name)}`);
        if (check.error !== undefined) {
          diagnostics.error(
            'MCPGEN_PROMPT_TEMPLATE_INVALID',
            `prompt argument ${JSON.stringify(name)} of a gate of ${tool} is not a valid template: ${check.error}`,
            'write it as a Handlebars template over the tool arguments, e.g. `"{{petId}}"` or `"{{json body}}"`',
            where,
          );
        } else if (toolArgs !== undefined) {
          // an unknown variable renders empty: every call would share one key, so one justification would unlock them all
          for (const v of check.unknownVariables) {
            const near = suggest(v, toolArgs.names);
            const declared = `declared arguments of ${tool}: ${toolArgs.names.join(', ') || 'none'}`;
            report(
              'MCPGEN_REFLECTION_PROMPT_ARGUMENT',
              `prompt argument ${JSON.stringify(name)} of a gate of ${tool} reads {{${v}}}, which is not ${toolArgs.open ? 'a declared' : 'an'} argument of ${tool}`,
              near ? `did you mean "${near}"?` : declared,
              where,
            );
          }
        }
      }
      const seen = prompts.get(g.prompt);
      if (otherPrompts.has(g.prompt)) {
        diagnostics.error(
          'MCPGEN_DUPLICATE_PRIMITIVE',
          `gate prompt name ${JSON.stringify(g.prompt)} is also the name of another prompt`,
          'give the gate prompt a name of its own',
          locateManifest(`${at}/prompt`),
        );
      } else if (seen !== undefined && seen.template !== g.template) {
        diagnostics.error(
          'MCPGEN_DUPLICATE_PRIMITIVE',
          `gate prompt ${JSON.stringify(g.prompt)} is used with two different templates`,
          'give this gate another prompt name, or the same template',
          locateManifest(`${at}/template`),
        );
      } else if (seen !== undefined) {
        for (const k of Object.keys(promptArgs)) seen.args.add(k);
      } else prompts.set(g.prompt, { template: g.template, args: new Set(Object.keys(promptArgs)), at });
      const gate: IrGate = { domain: g.domain, prompt: g.prompt, template: g.template, promptArgs: { ...promptArgs }, origin: { file, pointer: at } };
      if (g.scope !== undefined) gate.scope = g.scope;
      if (g.mode !== undefined) gate.mode = g.mode;
      if (g.description !== undefined) gate.description = g.description;
      return gate;
    });
  }

  // templates are checked once per prompt, against every argument any gate gives it
  for (const [name, p] of prompts) {
    const check = checkPromptTemplate(p.template, [...p.args]);
    const where = locateManifest(`${p.at}/template`);
    if (check.error !== undefined) {
      diagnostics.error(
        'MCPGEN_PROMPT_TEMPLATE_INVALID',
        `the template of gate prompt ${JSON.stringify(name)} is not valid: ${check.error}`,
        'fix the Handlebars template; use `{{argument}}` and the built-in `if`, `unless`, `each`, `with`, `lookup` helpers only',
        where,
      );
      continue;
    }
    for (const v of check.unknownVariables) {
      const args = [...p.args];
      diagnostics.error(
        'MCPGEN_REFLECTION_PROMPT_ARGUMENT',
        `the template of gate prompt ${JSON.stringify(name)} uses {{${v}}}, which no gate gives it under \`promptArgs\``,
        args.length > 0 ? `add \`${v}\` to \`promptArgs\` (now: ${args.join(', ')})` : `add \`promptArgs: { ${v}: "{{…}}" }\` to the gate`,
        where,
      );
    }
  }

  const out: IrReflection = {
    storeDir: r.storeDir ?? DEFAULT_STORE_DIR,
    mode,
    scope: r.scope ?? 'domain',
    domains: declared !== undefined ? declared.filter((d, i) => declared.indexOf(d) === i) : used,
    gates,
    toolsWithOutputSchema: Object.keys(gates).filter((t) => hintWouldBeRejected(byName.get(t))),
  };
  if (r.justificationSchema !== undefined) out.justificationSchema = r.justificationSchema;
  if (r.maxJustificationBytes !== undefined) out.maxJustificationBytes = r.maxJustificationBytes;
  if (r.sampling !== undefined) out.sampling = { ...r.sampling };
  return out;
}

/**
 * Names of the root `properties` of an object schema (undefined when it has none), and whether
 * it admits others (`additionalProperties` true or a schema): then an unknown name is only a
 * warning, since the argument may exist.
 */
function topLevelProperties(schema: JsonSchema): { names: string[]; open: boolean } | undefined {
  const props = schema.properties;
  if (typeof props !== 'object' || props === null) return undefined;
  return { names: Object.keys(props), open: schema.additionalProperties !== undefined && schema.additionalProperties !== false };
}

const HINT_KEYS = ['prompt', 'prompt_args', 'hash', 'domain', 'remaining'];

/**
 * Whether a gate hint (`{prompt, prompt_args, hash, domain, remaining}`) as `structuredContent`
 * could fail the tool's output schema, which clients check even on `isError` results: a strict or
 * hand-written schema may require other fields; a lenient one (nothing required, anything else
 * allowed) only when it types one of the hint's own keys.
 */
function hintWouldBeRejected(tool: { outputSchema?: Record<string, unknown>; kind: string; outputMode?: string } | undefined): boolean {
  if (tool?.outputSchema === undefined) return false;
  if (tool.kind !== 'operation-tool' || tool.outputMode !== 'lenient') return true;
  const props = tool.outputSchema.properties;
  return typeof props === 'object' && props !== null && HINT_KEYS.some((k) => Object.hasOwn(props, k));
}

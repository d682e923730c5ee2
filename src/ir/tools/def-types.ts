/**
 * TypeScript type names of schema definitions (`$defs`), decided once for the whole server.
 *
 * Every `$defs` entry becomes an exported type in the generated project, so its name has to be
 * a valid identifier that no other declaration of the file uses. Definition names are free
 * text (`a-b`, `a_b`, `a.b` all sanitise to `a_b`): two of them in one schema used to give a
 * duplicate identifier and a project that did not compile. Here each sanitised name is
 * checked against every name already given, and a clash gets a numbered suffix.
 *
 * Operation tools store a definition shared by many schemas once per generated file (one table
 * for input schemas, one for output schemas); a schema whose definition names clash with
 * different bodies in that table keeps its own `$defs`, typed under its own names. Extra tools
 * always keep their own `$defs`.
 */
import { identifier } from '../../core/identifiers.js';
import type { IrDefTypes, IrExtraTool, IrOperationTool, IrSharedDef, IrSharedDefs, JsonSchema } from '../types.js';

/** The tools whose schemas get type names (the IR's tools, final schemas). */
export type DefTypesInput = { tools: IrOperationTool[]; extraTools: IrExtraTool[] };

const MODES = ['input', 'output'] as const;
const TABLE_PREFIX = { input: 'InputDef', output: 'OutputDef' } as const;

/** The `$defs` of a schema, when it has any. */
export function schemaDefs(schema: JsonSchema | undefined): Record<string, unknown> | undefined {
  const defs = schema?.$defs;
  return typeof defs === 'object' && defs !== null && !Array.isArray(defs) && Object.keys(defs).length > 0 ? (defs as Record<string, unknown>) : undefined;
}

/**
 * Sets `inputDefTypes` / `outputDefTypes` on every tool whose schema has `$defs` and returns the
 * shared tables of the operation tools. Identifiers never collide with each other nor with the
 * tools' own identifiers (`argsTypeName`, `resultTypeName`, `constName`).
 */
export function assignDefTypes(input: DefTypesInput): IrSharedDefs {
  const used = new Set<string>();
  for (const t of [...input.tools, ...input.extraTools]) for (const id of [t.argsTypeName, t.resultTypeName, t.constName]) used.add(id);

  // 1. which operation-tool schemas share the table of their mode (first come, first served)
  const bodies = { input: new Map<string, { json: string; schema: unknown }>(), output: new Map<string, { json: string; schema: unknown }>() };
  const sharing = new Map<JsonSchema, (typeof MODES)[number]>();
  for (const t of input.tools) {
    for (const mode of MODES) {
      const schema = mode === 'input' ? t.inputSchema : t.outputSchema;
      const defs = schemaDefs(schema);
      if (!schema || !defs) continue;
      const table = bodies[mode];
      const entries = Object.entries(defs).map(([name, body]) => [name, body, JSON.stringify(body)] as const);
      if (entries.some(([name, , json]) => table.has(name) && table.get(name)!.json !== json)) continue;
      for (const [name, body, json] of entries) if (!table.has(name)) table.set(name, { json, schema: body });
      sharing.set(schema, mode);
    }
  }

  // 2. names of the shared tables, then of every schema that keeps its own definitions
  const shared: IrSharedDefs = { input: [], output: [] };
  for (const mode of MODES) {
    const names = allocate(TABLE_PREFIX[mode], [...bodies[mode].keys()], used);
    shared[mode] = [...bodies[mode]].map(([name, { schema }]): IrSharedDef => ({ name, typeName: names.get(name)!, schema }));
  }
  const sharedNames = { input: new Map(shared.input.map((d) => [d.name, d.typeName])), output: new Map(shared.output.map((d) => [d.name, d.typeName])) };
  for (const t of [...input.tools, ...input.extraTools]) {
    for (const mode of MODES) {
      const schema = mode === 'input' ? t.inputSchema : t.outputSchema;
      const defs = schemaDefs(schema);
      if (!schema || !defs) continue;
      const sharedMode = sharing.get(schema);
      const types: IrDefTypes =
        sharedMode !== undefined
          ? { shared: true, names: Object.fromEntries(Object.keys(defs).map((d) => [d, sharedNames[sharedMode].get(d)!])) }
          : { shared: false, names: Object.fromEntries(allocate(mode === 'input' ? t.argsTypeName : t.resultTypeName, Object.keys(defs), used)) };
      if (mode === 'input') t.inputDefTypes = types;
      else t.outputDefTypes = types;
    }
  }
  return shared;
}

/**
 * `<prefix>$<definition>` identifiers for `names`, none in `used` (which receives them). Names
 * that are already identifiers keep the plain form; the others follow in code-unit order and
 * get `_2`, `_3`, … when their sanitised form is taken, so the result does not depend on the
 * order of the `$defs` keys. The result is in the order of `names`.
 */
export function allocate(prefix: string, names: readonly string[], used: Set<string>): Map<string, string> {
  const base = (name: string) => identifier(`${prefix}$${name}`);
  const exact = names.filter((n) => base(n) === `${prefix}$${n}`);
  const rest = names.filter((n) => base(n) !== `${prefix}$${n}`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const given = new Map<string, string>();
  for (const name of [...exact, ...rest]) {
    let id = base(name);
    for (let n = 2; used.has(id); n++) id = `${base(name)}_${n}`;
    used.add(id);
    given.set(name, id);
  }
  return new Map(names.map((n) => [n, given.get(n)!]));
}

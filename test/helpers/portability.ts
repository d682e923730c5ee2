/** The schema-portability rules of DESIGN §4, as a checker used by tests. */

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Problems that would make a tool schema non-portable across the major clients. */
export function portabilityProblems(schema: unknown): string[] {
  const problems: string[] = [];
  if (!isObj(schema)) return ['root is not an object schema'];
  if (schema.type !== 'object') problems.push(`root type is ${JSON.stringify(schema.type)}, not "object"`);
  for (const k of ['anyOf', 'oneOf', 'allOf']) if (k in schema) problems.push(`root has ${k}`);
  const defs = isObj(schema.$defs) ? schema.$defs : {};
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}/${i}`));
    if (!isObj(node)) return;
    const types = Array.isArray(node.type) ? node.type : [node.type];
    if (types.includes('array') && node.items === undefined && node.prefixItems === undefined) problems.push(`${at}: array without items`);
    if (typeof node.$ref === 'string') {
      const m = /^#\/\$defs\/(.+)$/.exec(node.$ref);
      if (!m || !(decodeURIComponent(m[1]!).replace(/~1/g, '/').replace(/~0/g, '~') in defs)) problems.push(`${at}: dangling $ref ${node.$ref}`);
    }
    for (const [k, v] of Object.entries(node)) {
      // enum/const/default/examples hold data, not schemas
      if (k === 'enum' || k === 'const' || k === 'default' || k === 'examples') continue;
      walk(v, `${at}/${k}`);
    }
  };
  walk(schema, '');
  return problems;
}

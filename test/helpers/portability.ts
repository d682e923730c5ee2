/**
 * The schema-portability rules of DESIGN §4 plus those of the official MCP Inspector's strict
 * schema lint (2.12.0: `type-union`, `untyped-schema`, `boolean-schema`, `remote-ref`), as a
 * checker used by tests.
 */

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions']);
const LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SINGLE_KEYWORDS = new Set([
  'items',
  'contains',
  'not',
  'propertyNames',
  'if',
  'then',
  'else',
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
  'contentSchema',
]);
/** Where a bare `true`/`false` is fine. */
const BOOLEAN_OK = new Set(['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems']);
/** Keywords that constrain a value; a schema with none accepts anything (`untyped-schema`). */
const CONSTRAINING = new Set([
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'maxProperties',
  'minProperties',
  'required',
  'dependentRequired',
  'format',
  'contentMediaType',
  'contentEncoding',
  'contentSchema',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'items',
  'prefixItems',
  'contains',
  'properties',
  'patternProperties',
  'additionalProperties',
  'propertyNames',
  'dependentSchemas',
  'dependencies',
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
]);

/** Problems that would make a tool schema non-portable across the major clients. */
export function portabilityProblems(schema: unknown): string[] {
  const problems: string[] = [];
  if (!isObj(schema)) return ['root is not an object schema'];
  if (schema.type !== 'object') problems.push(`root type is ${JSON.stringify(schema.type)}, not "object"`);
  for (const k of ['anyOf', 'oneOf', 'allOf']) if (k in schema) problems.push(`root has ${k}`);
  const defs = isObj(schema.$defs) ? schema.$defs : {};
  const visit = (node: unknown, at: string, keyword: string | undefined): void => {
    if (typeof node === 'boolean') {
      if (keyword === undefined || !BOOLEAN_OK.has(keyword)) problems.push(`${at}: bare ${node} where a schema object is expected`);
      return;
    }
    if (!isObj(node)) return;
    if (Array.isArray(node.type)) problems.push(`${at}: type is an array (${JSON.stringify(node.type)}); use anyOf`);
    const types = Array.isArray(node.type) ? node.type : [node.type];
    if (types.includes('array') && node.items === undefined && node.prefixItems === undefined) problems.push(`${at}: array without items`);
    const constrained = Object.keys(node).some((k) => CONSTRAINING.has(k) && (k !== 'if' || 'then' in node || 'else' in node));
    if (!constrained && keyword !== 'not') problems.push(`${at}: schema constrains nothing (${JSON.stringify(node).slice(0, 60)})`);
    if (typeof node.$ref === 'string') {
      const m = /^#\/\$defs\/(.+)$/.exec(node.$ref);
      if (!node.$ref.startsWith('#')) problems.push(`${at}: remote $ref ${node.$ref}`);
      else if (!m || !(decodeURIComponent(m[1]!).replace(/~1/g, '/').replace(/~0/g, '~') in defs)) problems.push(`${at}: dangling $ref ${node.$ref}`);
    }
    for (const [k, v] of Object.entries(node)) {
      if (MAP_KEYWORDS.has(k) && isObj(v)) for (const [name, s] of Object.entries(v)) visit(s, `${at}/${k}/${name}`, k);
      else if (LIST_KEYWORDS.has(k) && Array.isArray(v)) v.forEach((s, i) => visit(s, `${at}/${k}/${i}`, k));
      else if (SINGLE_KEYWORDS.has(k)) {
        if (Array.isArray(v)) v.forEach((s, i) => visit(s, `${at}/${k}/${i}`, k));
        else visit(v, `${at}/${k}`, k);
      }
    }
  };
  visit(schema, '', undefined);
  return problems;
}

/**
 * TypeScript identifiers made from names in a spec or a manifest: what the IR builder decides
 * names with (tool modules, handler aliases, definition types) and the emitters print. Each
 * result is a valid, non-reserved identifier, so no spec text can become code through a name.
 */

const RESERVED = new Set([
  // ECMAScript keywords, future reserved words and literals
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'import',
  'in',
  'instanceof',
  'new',
  'null',
  'return',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'var',
  'void',
  'while',
  'with',
  'yield',
  'let',
  'static',
  'implements',
  'interface',
  'package',
  'private',
  'protected',
  'public',
  'await',
  'arguments',
  'eval',
  'undefined',
  'NaN',
  'Infinity',
  // TypeScript type keywords that cannot name a type
  'any',
  'boolean',
  'never',
  'number',
  'object',
  'string',
  'symbol',
  'unknown',
  'bigint',
  'type',
  'as',
  'is',
  'keyof',
  'readonly',
  'declare',
  'namespace',
  'module',
  'require',
  'global',
  'infer',
  'satisfies',
  'asserts',
  'accessor',
  // names the generated files import or declare themselves
  'OperationTool',
  'JsonSchema',
  'ServerConfig',
  'tools',
  'config',
  'runStdio',
  'createServer',
]);

/**
 * A valid TS identifier from any text: characters outside `[A-Za-z0-9_$]` become `_`, a leading
 * digit gets a `_` prefix, and reserved words (and mcpgen's own imported names) get a `_` suffix.
 */
export function identifier(value: string): string {
  let id = value.replace(/[^A-Za-z0-9_$]/g, '_');
  if (id === '') id = '_';
  if (/^[0-9]/.test(id)) id = '_' + id;
  if (RESERVED.has(id)) id += '_';
  return id;
}

/** True when `value` can be used as an unquoted property name. */
export function isIdentifierName(value: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(value);
}

/** PascalCase words of a name: `get-pet_byID` → `GetPetByID`. Non-alphanumerics split words. */
export function pascalCase(value: string): string {
  return value
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}

/** camelCase form of {@link pascalCase}. */
export function camelCase(value: string): string {
  const p = pascalCase(value);
  return p ? p[0]!.toLowerCase() + p.slice(1) : p;
}

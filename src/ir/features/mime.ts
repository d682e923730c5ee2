/**
 * MIME types of embedded resource files: a guess from the extension when the manifest gives
 * none, and whether a type is text (served as `text`) or not (served as a base64 `blob`).
 */

const BY_EXTENSION: Readonly<Record<string, string>> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.ts': 'text/plain',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
};

/** MIME type for a file name (by extension, case-insensitive); `application/octet-stream` when unknown. */
export function guessMimeType(file: string): string {
  const dot = file.lastIndexOf('.');
  const ext = dot >= 0 ? file.slice(dot).toLowerCase() : '';
  return BY_EXTENSION[ext] ?? 'application/octet-stream';
}

/** Whether content of this MIME type is text: `text/*`, JSON, YAML, XML and their `+json`/`+xml` kinds, JavaScript. */
export function isTextualMime(mime: string): boolean {
  const m = mime.toLowerCase().split(';')[0]!.trim();
  return m.startsWith('text/') || /^application\/(json|yaml|x-yaml|xml|javascript|ecmascript)$/.test(m) || /\+(json|xml|yaml)$/.test(m);
}

/** The base URL a spec names for its API (a Swagger 2 `host`, or the first OpenAPI 3 server). */
import { isObject } from '../core/json.js';

/** The spec's own absolute base URL, when it has one. */
export function specBaseUrl(doc: Record<string, unknown>, version: string): string | undefined {
  if (version === '2.0') {
    if (typeof doc.host !== 'string' || doc.host === '') return undefined;
    const schemes = Array.isArray(doc.schemes) ? doc.schemes : [];
    const scheme = schemes.includes('https') ? 'https' : schemes.includes('http') ? 'http' : 'https';
    const basePath = typeof doc.basePath === 'string' ? doc.basePath : '';
    return absolute(`${scheme}://${doc.host}${basePath}`);
  }
  const first = Array.isArray(doc.servers) ? doc.servers[0] : undefined;
  if (!isObject(first) || typeof first.url !== 'string') return undefined;
  let url = first.url;
  const vars = isObject(first.variables) ? first.variables : {};
  url = url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const v = vars[name];
    return isObject(v) && typeof v.default === 'string' ? v.default : whole;
  });
  return absolute(url);
}

function absolute(url: string): string | undefined {
  if (/[{}\s]/.test(url)) return undefined;
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    return url.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
}

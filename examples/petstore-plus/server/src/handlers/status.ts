// Handler of the `petstore://server/status` resource (manifest `resources`): computed each time
// the resource is read. Yours to edit: mcpgen never overwrites it.
import type { RequestExtra, ResourceContent } from '../runtime/handlers.js';

/** Uptime and memory of this server process, as JSON. */
export async function serverStatus(_uri: URL, _extra: RequestExtra): Promise<ResourceContent> {
  return JSON.stringify({ uptimeSeconds: Math.round(process.uptime()), rssBytes: process.memoryUsage().rss, node: process.version });
}

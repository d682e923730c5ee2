// Handlers of the content fixtures of the MCP conformance suite (manifest `extraTools`).
// Yours to edit: mcpgen never overwrites them. Each returns a whole `CallToolResult`, which the
// generated server passes through unchanged. No SDK import, so the file does not depend on
// which SDK major version the generated project uses.

/** A 1x1 red PNG (the same bytes as fixtures/red-pixel.png). */
export const RED_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';

/** A WAV of 8 silent samples (8 kHz, mono, 8-bit). */
export const SILENT_WAV = 'UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==';

/** tools-call-simple-text */
export function simpleText() {
  return { content: [{ type: 'text' as const, text: 'This is a simple text response for testing.' }] };
}

/** tools-call-image */
export function imageContent() {
  return { content: [{ type: 'image' as const, data: RED_PIXEL_PNG, mimeType: 'image/png' }] };
}

/** tools-call-audio */
export function audioContent() {
  return { content: [{ type: 'audio' as const, data: SILENT_WAV, mimeType: 'audio/wav' }] };
}

/** tools-call-embedded-resource */
export function embeddedResource() {
  return {
    content: [
      {
        type: 'resource' as const,
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
      },
    ],
  };
}

/** tools-call-mixed-content */
export function multipleContentTypes() {
  return {
    content: [
      { type: 'text' as const, text: 'Multiple content types test:' },
      { type: 'image' as const, data: RED_PIXEL_PNG, mimeType: 'image/png' },
      {
        type: 'resource' as const,
        resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) },
      },
    ],
  };
}

/** tools-call-error: a tool result with `isError: true` (not a JSON-RPC error). */
export function errorHandling() {
  return { isError: true, content: [{ type: 'text' as const, text: 'This tool intentionally returns an error for testing' }] };
}

/** json-schema-2020-12: the scenario only lists the tool; a call echoes its (validated) arguments. */
export function jsonSchemaTool(args: unknown) {
  return { content: [{ type: 'text' as const, text: `JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}` }] };
}

/** `test_header_param`: echoes the region (its value also travels as the Mcp-Param-Region header). */
export function headerParam(args: { region: string }) {
  return `region: ${args.region}`;
}

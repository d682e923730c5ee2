// Handler of the `suite_notes` preprocessor (manifest `preprocessors`). Yours to edit: mcpgen
// never overwrites it. It is here so that the generated server declares the `logging`
// capability (see mcpgen.yaml); the conformance suite never runs it.

/** Context for a user message: which suite this server is a fixture of. */
export function suiteNotes(request: { input: string }) {
  return `This server holds the fixtures of @modelcontextprotocol/conformance 0.1.16 (message of ${request.input.length} characters).`;
}

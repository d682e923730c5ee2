// Handler of the `test://template/{id}/data` resource template, a conformance fixture
// (manifest `resourceTemplates`). Yours to edit: mcpgen never overwrites it.

/** `{"id":"123","templateTest":true,"data":"Data for ID: 123"}` for `test://template/123/data`. */
export function templateData(_uri: URL, variables: Record<string, string | string[] | undefined>) {
  const id = String(variables.id ?? '');
  return { text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }), mimeType: 'application/json' };
}

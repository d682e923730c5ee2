// Handler of the `test://watched-resource` conformance fixture (manifest `resources`, with
// `refreshMs`). Yours to edit: mcpgen never overwrites it.

/** The resource's text: it does not change, so a subscriber is never notified (the suites only subscribe and unsubscribe). */
export function watchedResource() {
  return 'Watched resource content.';
}

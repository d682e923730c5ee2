/**
 * Media types of request and response bodies, read one way everywhere: the base type, lower case,
 * without parameters, and which of them are JSON.
 */

/** Base media type, lower case, without parameters (`''` when absent). */
export function mediaType(contentType: string | null | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** True for `application/json` and any `+json` type. */
export function isJsonMedia(contentType: string | null | undefined): boolean {
  const t = mediaType(contentType);
  return t === 'application/json' || t.endsWith('+json');
}

/** Text helpers of the model stage. */

/**
 * Cuts a description to `max` characters at the last sentence end, else word boundary, in the
 * second half of the allowed length, and marks the cut with `…`. An override's description is
 * the user's own choice and is never cut.
 */
export function truncateDescription(text: string, max: number): string {
  if (text.length <= max) return text;
  const room = text.slice(0, max - 1);
  const sentence = Math.max(room.lastIndexOf('. '), room.lastIndexOf('.\n'), room.lastIndexOf('\n\n'));
  const word = room.search(/\s\S*$/);
  const cut = sentence >= max / 2 ? sentence + 1 : word >= max / 2 ? word : room.length;
  return room.slice(0, cut).trimEnd() + '…';
}

/** Markdown links reduced to their text: the URLs (mostly to the API's docs) mean nothing to a model. */
export function plainLinks(text: string): string {
  return text.replace(/\[([^\]\n]{1,200})\]\((?:https?:\/\/|\/)[^\s)]{1,500}\)/g, '$1');
}

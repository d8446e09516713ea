// Pure: a short, bounded sample of model ids for a log line. A listing may hold thousands of ids of
// any length (a node chooses them), so a log line names a few, each cut short, next to the counts.

/** Ids named in one log field. */
export const SAMPLE_IDS = 10;
/** Characters kept of each sampled id. */
export const SAMPLE_ID_CHARS = 64;

/** The first `size` ids, each cut to `maxChars` (marked with "…" when cut). */
export function sampleIds(ids: Iterable<string>, size = SAMPLE_IDS, maxChars = SAMPLE_ID_CHARS): string[] {
  const sample: string[] = [];
  if (size <= 0) return sample;
  for (const id of ids) {
    sample.push(cutTo(id, maxChars));
    if (sample.length >= size) break;
  }
  return sample;
}

/** `text` cut to at most `maxChars` UTF-16 units, never splitting a surrogate pair. */
export function cutTo(text: string, maxChars: number, marker = '…'): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars - marker.length);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end) + marker;
}

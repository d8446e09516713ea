// The "want" message: UTF-8 JSON {"want": "<site id>"} on the sites topic asks that site to
// publish its full record now (a receiver that holds no list for a heartbeat's digest sends it).

/** Wants are tiny; anything larger is not one (it goes to the record judgement instead). */
const MAX_WANT_BYTES = 512;

export function encodeWant(site: string): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ want: site }));
}

/** The site a want message asks for, or undefined when the message is not a want. */
export function parseWant(data: Uint8Array): string | undefined {
  if (data.byteLength > MAX_WANT_BYTES) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const keys = Object.keys(parsed);
  const want = (parsed as { want?: unknown }).want;
  return keys.length === 1 && typeof want === 'string' && want.length > 0 ? want : undefined;
}

/** Pure: whether a want for `site` may go out now (at most one per site per `intervalMs`). */
export function mayWant(lastSentAt: number | undefined, now: number, intervalMs: number): boolean {
  return lastSentAt === undefined || now - lastSentAt >= intervalMs;
}

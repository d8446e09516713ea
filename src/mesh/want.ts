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

/** Wants sent for one site since it last got through in full. */
export interface WantHistory {
  readonly lastSentAt: number;
  /** Consecutive wants without an accepted full record in between. */
  readonly streak: number;
}

/** The longest pause between wants for one site, in heartbeats. */
const MAX_WANT_BACKOFF = 32;

/**
 * Pure: whether a want for a site may go out now. At most one per heartbeat; while wants bring no
 * acceptable full record (say the sender is over this receiver's model cap), the pause doubles up
 * to 32 heartbeats, so a mismatch costs one full record now and then, not one per heartbeat.
 */
export function mayWant(history: WantHistory | undefined, now: number, heartbeatMs: number): boolean {
  if (history === undefined) return true;
  const pause = heartbeatMs * Math.min(MAX_WANT_BACKOFF, 2 ** Math.max(0, history.streak - 1));
  return now - history.lastSentAt >= pause;
}

// When a receiver asks for a site's full record (a "want", encoded by record-codec.ts): after a
// heartbeat whose digest names a list it does not hold.

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

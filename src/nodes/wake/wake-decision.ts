// Pure: whether to send a wake now. At most one wake per node is in flight, and none is sent again
// inside the wake window (the node's wake_timeout since the last one), whoever asks: a request
// waiting for the node or an operator's POST /admin/wake. A lost packet is resent once the window
// has passed.

export type WakeDecision = 'send' | 'in_window';

/** About a node that has a wake configured. */
export interface WakeFacts {
  /** A wake to this node is being delivered right now (a command may run for seconds). */
  readonly inFlight: boolean;
  /** When the last wake was sent (epoch ms), if ever. */
  readonly lastSentAt: number | undefined;
  readonly windowMs: number;
  readonly now: number;
}

export function decideWake(facts: WakeFacts): WakeDecision {
  if (facts.inFlight) return 'in_window';
  if (facts.lastSentAt !== undefined && facts.now < facts.lastSentAt + facts.windowMs) return 'in_window';
  return 'send';
}

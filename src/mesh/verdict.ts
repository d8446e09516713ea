// Pure: what the transport does with a judged gossip message (docs/federation-gossip.md,
// "Validation"). A message that cannot be a good record from a pinned site — unreadable, too
// large, naming no pinned site, forged, over the cap, or naming a url other than the pinned one —
// is rejected: not delivered, not relayed, and the peer that passed it on loses score (a trust
// failure). A record that is genuine but of no use now (a replay, a stale one, one from a clock
// too far ahead, a heartbeat naming a list this site does not hold) is ignored: dropped without a
// penalty, since an honest relay may pass such records on (an ordering rejection). The two
// classes are rejection-class.ts's.

import type { Judgement } from './judgement.ts';
import { rejectionClass } from './rejection-class.ts';
import type { MessageVerdict } from './transport.ts';

export function verdictOf(judgement: Judgement): MessageVerdict {
  if (judgement.kind === 'accepted') return 'accept';
  return rejectionClass(judgement.reason) === 'ordering' ? 'ignore' : 'reject';
}

/** Several judges of one message — one rejection rejects, else one ignore ignores; no judge at all ignores (nothing to deliver to). */
export function worstVerdict(verdicts: readonly MessageVerdict[]): MessageVerdict {
  if (verdicts.includes('reject')) return 'reject';
  if (verdicts.includes('ignore') || verdicts.length === 0) return 'ignore';
  return 'accept';
}

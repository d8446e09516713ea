// Pure: what a record rejection says about the peer that passed it on, and how long it is shown.
// An ordering rejection is a genuine record of no use now: a heartbeat naming a model list this
// site does not hold yet (the start-up race a want resolves), a revision not newer than the one
// held, a record too old or from a clock too far ahead. It is harmless — dropped without a
// penalty — and shown briefly. A trust failure is a message that cannot be a good record from a
// pinned site: unreadable, too large, naming no pinned site, forged, over the cap, or naming
// another url than the pinned one. It costs the relay its score and stays on show far longer.
// Records of either class age out by the receiver's monotonic clock (the caller's `nowMs`).

import type { RecordRejection } from './judgement.ts';

export type RejectionClass = 'ordering' | 'trust';

const CLASS_OF: Readonly<Record<RecordRejection, RejectionClass>> = Object.freeze({
  malformed: 'trust',
  oversized: 'trust',
  not_pinned: 'trust',
  bad_signature: 'trust',
  url_mismatch: 'trust',
  over_cap: 'trust',
  replay: 'ordering',
  unknown_digest: 'ordering',
  stale_record: 'ordering',
  future: 'ordering',
});

/** How long a site's last rejection of each class is shown (/admin/sites, the Sites view) after it happened. */
export const REJECTION_HELD_MS: Readonly<Record<RejectionClass, number>> = Object.freeze({
  ordering: 60_000,
  trust: 3_600_000,
});

export function rejectionClass(reason: RecordRejection): RejectionClass {
  return CLASS_OF[reason];
}

/** Whether a rejection noted at `atMs` is still shown at `nowMs` (same clock; a clock that went back keeps it). */
export function rejectionHeld(reason: RecordRejection, atMs: number, nowMs: number): boolean {
  return nowMs - atMs < REJECTION_HELD_MS[rejectionClass(reason)];
}

// Pure: when a forward's signature can be accepted, and whether an earlier run of this gateway
// could already have accepted it. A receiver takes a signature while its clock reads within
// `max_clock_skew` of `created` either way and `expires` has not passed, so the window is
// [created - skew, min(expires, created + skew)] — it opens up to `skew` BEFORE `created` (a
// sender's clock ahead of the receiver's). A run that started at S knows nothing of what the run
// before it accepted, and that run could have taken any signature whose window opened before S,
// wherever its `created` lies (created = S + skew/2 was acceptable from S - skew/2): such a
// signature is refused as `replayed`. A fresh signature is taken again from S + skew on
// (docs/federation-forwarding.md, "Replays").

/** When a signature can be accepted, wall-clock ms, both ends included. */
export interface AcceptanceWindow {
  readonly fromMs: number;
  readonly untilMs: number;
}

/** The window of a signature with `created` and `expires` (ms) at a receiver allowing `skewMs` either way. */
export function acceptanceWindow(createdMs: number, expiresMs: number, skewMs: number): AcceptanceWindow {
  return { fromMs: createdMs - skewMs, untilMs: Math.min(expiresMs, createdMs + skewMs) };
}

/** Whether a run that ended before `startedMs` could have accepted a signature with this window. */
export function earlierRunCouldAccept(window: Pick<AcceptanceWindow, 'fromMs'>, startedMs: number): boolean {
  return window.fromMs < startedMs;
}

/** The first `created` (ms, whole seconds as RFC 9421 states it) a run that started at `startedMs` takes. */
export function firstAcceptedCreatedMs(startedMs: number, skewMs: number): number {
  return Math.ceil((startedMs + skewMs) / 1000) * 1000;
}

/**
 * Each pinned site's share of the replay memory: the capacity split evenly over the remote sites
 * pinned now (at least one entry each), so that no site's forwards can take another's room.
 */
export function replayShare(capacity: number, remoteSites: number): number {
  return Math.max(1, Math.floor(capacity / Math.max(1, remoteSites)));
}

// The revision a site stamps on each record it publishes: a hybrid logical clock,
// max(last + 1, wallMs × 1024). Receivers keep only the highest revision per site (last writer
// wins), so revisions must rise on every publication, heartbeats included, and across restarts.
//
// Why no file: a restarted site starts from its wall clock × 1024, which is above every revision it
// issued before, as long as (a) the wall clock has not stepped back past the last publication and
// (b) it published fewer than 1024 records per millisecond of wall time (it publishes a few per
// heartbeat). If the wall clock steps back while running, `last + 1` keeps revisions rising; a
// restart during such a step would reuse revisions, and receivers would ignore the site as a replay
// until its clock passes the old value — the safe direction (stale, then fail closed), never a
// forged or rolled-back set. wallMs × 1024 stays a safe integer until the year 2248.

/** Revisions per millisecond of wall time: headroom for bursts within one millisecond. */
export const REVISIONS_PER_MS = 1024;

export class RevisionClock {
  #last: number;

  /** `last` is the highest revision already issued, when known (0 when not). */
  constructor(last = 0) {
    if (!Number.isSafeInteger(last) || last < 0)
      throw new Error(`revision clock: last must be a non-negative safe integer, got ${last}`);
    this.#last = last;
  }

  /** The next revision: higher than every one this clock issued, and at least wallMs × 1024. */
  next(wallMs: number): number {
    const fromWall = Math.floor(wallMs) * REVISIONS_PER_MS;
    const candidate = Number.isSafeInteger(fromWall) && fromWall > this.#last ? fromWall : this.#last + 1;
    if (!Number.isSafeInteger(candidate)) throw new Error('revision clock: revision would exceed the largest safe integer');
    this.#last = candidate;
    return candidate;
  }
}

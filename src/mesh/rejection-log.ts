// Which rejected gossip messages earn a log line (and a dashboard transition), with bounded
// memory: a line at most once per (peer, reason) — the pairs held in an LRU of MAX_PAIRS, so a
// flood of fresh author keys cannot grow it — and at most LINES_PER_WINDOW lines per reason per
// WINDOW_MS; the lines held back are counted and reported by the next line of that reason.
// Every rejection is still counted by reason in the metrics. Time is given by the caller.

const MAX_PAIRS = 1_024;
export const REJECTION_LINES_PER_WINDOW = 5;
export const REJECTION_WINDOW_MS = 60_000;

export interface RejectionNote {
  /** Write a line for this one. */
  readonly log: boolean;
  /** Lines of this reason held back since the last one written (reported on this line). */
  readonly suppressed: number;
}

interface ReasonWindow {
  start: number;
  lines: number;
  suppressed: number;
}

export class RejectionLog {
  /** `peer\nreason` pairs already logged, least recently seen first. */
  readonly #pairs = new Map<string, true>();
  readonly #reasons = new Map<string, ReasonWindow>();

  note(peer: string, reason: string, nowMs: number): RejectionNote {
    const pair = `${peer}\n${reason}`;
    const seen = this.#pairs.delete(pair);
    this.#pairs.set(pair, true);
    if (this.#pairs.size > MAX_PAIRS) this.#pairs.delete(this.#pairs.keys().next().value ?? pair);
    if (seen) return { log: false, suppressed: 0 };
    const window = this.#window(reason, nowMs);
    if (window.lines >= REJECTION_LINES_PER_WINDOW) {
      window.suppressed += 1;
      return { log: false, suppressed: 0 };
    }
    window.lines += 1;
    const suppressed = window.suppressed;
    window.suppressed = 0;
    return { log: true, suppressed };
  }

  /** Pairs held (for tests: bounded by MAX_PAIRS). */
  size(): number {
    return this.#pairs.size;
  }

  #window(reason: string, nowMs: number): ReasonWindow {
    const held = this.#reasons.get(reason);
    if (held !== undefined && nowMs - held.start < REJECTION_WINDOW_MS && nowMs >= held.start) return held;
    // A new window carries the count held back in the last one, so the next line reports it.
    const fresh = { start: nowMs, lines: 0, suppressed: held?.suppressed ?? 0 };
    this.#reasons.set(reason, fresh);
    return fresh;
  }
}

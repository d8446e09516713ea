// Pure: how long a model operation that failed is held off: 5 s, doubling per failure in a row, at
// most 5 minutes. The reason is kept to be shown.

export interface FailedOp {
  readonly reason: string;
  readonly failures: number;
  /** Monotonic ms until which the reconciler does not try again. */
  readonly untilMs: number;
}

export const FIRST_BACKOFF_MS = 5_000;
export const MAX_BACKOFF_MS = 300_000;

export function backoffAfter(previous: FailedOp | undefined, reason: string, nowMs: number): FailedOp {
  const failures = (previous?.failures ?? 0) + 1;
  const wait = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.min(failures - 1, 16));
  return { reason, failures, untilMs: nowMs + wait };
}

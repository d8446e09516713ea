// A running job's next step (pure), from its status and its lines' states: OpenAI's lifecycle
// validating → in_progress → finalizing → completed | expired | cancelled (cancelling between; a
// job whose input does not pass its check while `validating` is `failed`, batch-create.ts). The completion window passing
// fails the lines still waiting (`batch_expired`) and the job ends `expired` once its lines in
// flight are answered; a cancel fails them at once (`batch_cancelled`) and ends `cancelled` the
// same way.

import type { BatchRow, Ending, LineState } from './batch-rows.ts';

export type { Ending };

export type JobStep =
  | { readonly kind: 'validate' }
  | { readonly kind: 'run' }
  | { readonly kind: 'expire' }
  | { readonly kind: 'wait' }
  | { readonly kind: 'finalize'; readonly ending: Ending };

export function jobStep(
  job: Pick<BatchRow, 'status' | 'expiresMs' | 'cancellingMs' | 'ending'>,
  /** Its lines waiting and sent (only whether any: > 0). */
  counts: Readonly<Pick<Record<LineState, number>, 'waiting' | 'sent'>>,
  nowMs: number,
): JobStep {
  // Set by the step that decided it (an expiry, a cancel); else the lines all ran.
  const ending: Ending = job.ending ?? (job.cancellingMs !== null ? 'cancelled' : 'completed');
  // Its input is read and checked against the job (batch-create.ts) before any line runs.
  if (job.status === 'validating') return { kind: 'validate' };
  if (job.status === 'finalizing') return { kind: 'finalize', ending };
  if (job.status === 'in_progress' && nowMs >= job.expiresMs && counts.waiting > 0) return { kind: 'expire' };
  if (job.status === 'in_progress' && counts.waiting > 0) return { kind: 'run' };
  if (counts.sent > 0) return { kind: 'wait' };
  return { kind: 'finalize', ending };
}

/** OpenAI's completion windows this gateway takes, by name, in ms. */
export function completionWindowMs(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const match = /^([1-9]\d{0,3})(m|h|d)$/.exec(text);
  if (match === null) return undefined;
  const unit = match[2] === 'm' ? 60_000 : match[2] === 'h' ? 3_600_000 : 86_400_000;
  const ms = Number(match[1]) * unit;
  return ms <= 30 * 86_400_000 ? ms : undefined;
}

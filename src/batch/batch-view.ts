// GET /admin/batches (pure): every tenant's latest jobs as the operator sees them — status,
// progress, the lines waiting and in flight, the rate since the job started and the time left at
// that rate — for the dashboard and `switchyard batches`.

import type { BatchRow, LineState } from './batch-rows.ts';

/** How many jobs the view shows (newest first). */
export const VIEW_JOBS = 100;

export interface BatchViewRow {
  readonly id: string;
  readonly tenant: string;
  readonly status: string;
  readonly endpoint: string;
  readonly total: number;
  readonly completed: number;
  readonly failed: number;
  readonly retried: number;
  readonly waiting: number;
  readonly in_flight: number;
  readonly created_at: string;
  readonly expires_at: string;
  /** Lines answered per second since the job started; null before any. */
  readonly lines_per_second: number | null;
  /** Seconds left at that rate; null when not running or no rate yet. */
  readonly eta_seconds: number | null;
}

export function batchViewRow(job: BatchRow, counts: Readonly<Record<LineState, number>>, nowMs: number): BatchViewRow {
  const answered = job.completed + job.failed;
  const elapsed = job.inProgressMs === null ? 0 : (Math.min(nowMs, job.finalizingMs ?? nowMs) - job.inProgressMs) / 1000;
  const rate = answered > 0 && elapsed > 0 ? answered / elapsed : null;
  const left = counts.waiting + counts.sent;
  const running = job.status === 'in_progress' || job.status === 'cancelling';
  return {
    id: job.id,
    tenant: job.tenant,
    status: job.status,
    endpoint: job.endpoint,
    total: job.total,
    completed: job.completed,
    failed: job.failed,
    retried: job.retried,
    waiting: counts.waiting,
    in_flight: counts.sent,
    created_at: new Date(job.createdMs).toISOString(),
    expires_at: new Date(job.expiresMs).toISOString(),
    lines_per_second: rate === null ? null : Math.round(rate * 100) / 100,
    eta_seconds: running && rate !== null ? Math.ceil(left / rate) : null,
  };
}

// The rows of the batch file (batch-db.ts) as the feature reads them: plain data.

/** OpenAI's batch statuses, in their lifecycle (batch-lifecycle.ts). */
export const BATCH_STATUSES = [
  'validating',
  'failed',
  'in_progress',
  'finalizing',
  'completed',
  'expired',
  'cancelling',
  'cancelled',
] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** How a job that ran ends (decided as it enters `finalizing`, kept across a restart). */
export type Ending = 'completed' | 'expired' | 'cancelled';

export interface FileRow {
  readonly id: string;
  /** The tenant that owns it: only its own requests see it. */
  readonly tenant: string;
  /** `batch` (an upload), `batch_output` (a job's output or error file). */
  readonly purpose: string;
  readonly filename: string;
  readonly bytes: number;
  readonly lines: number;
  readonly createdMs: number;
  /** When it is deleted (the retention). */
  readonly expiresMs: number;
}

/** One problem of a job, in OpenAI's `errors.data` shape (`line` = the input's line number). */
export interface BatchProblem {
  readonly code: string;
  readonly message: string;
  readonly param?: string | null;
  readonly line?: number | null;
}

export interface BatchRow {
  readonly id: string;
  readonly tenant: string;
  readonly inputFileId: string;
  readonly endpoint: string;
  readonly completionWindow: string;
  readonly metadata: Readonly<Record<string, string>> | null;
  readonly status: BatchStatus;
  readonly createdMs: number;
  /** The end of the completion window. */
  readonly expiresMs: number;
  readonly inProgressMs: number | null;
  readonly finalizingMs: number | null;
  readonly completedMs: number | null;
  readonly failedMs: number | null;
  readonly expiredMs: number | null;
  readonly cancellingMs: number | null;
  readonly cancelledMs: number | null;
  readonly outputFileId: string | null;
  readonly errorFileId: string | null;
  readonly errors: readonly BatchProblem[] | null;
  readonly total: number;
  readonly completed: number;
  readonly failed: number;
  /** Lines sent again because their first answer was never kept (a crash while they were sent). */
  readonly retried: number;
  /** Decided as it enters `finalizing`; null before. */
  readonly ending: Ending | null;
}

/** What a new job is made of; the rest of its row starts empty (no times past creation, no counts, no files). */
export type NewBatch = Pick<
  BatchRow,
  'id' | 'tenant' | 'inputFileId' | 'endpoint' | 'completionWindow' | 'metadata' | 'status' | 'createdMs' | 'expiresMs' | 'total'
>;

/** A new job's row: `in_progress` from its creation on, or `validating` until its input is checked. */
export function newBatchRow(job: NewBatch): BatchRow {
  return {
    ...job,
    inProgressMs: job.status === 'in_progress' ? job.createdMs : null,
    finalizingMs: null,
    completedMs: null,
    failedMs: null,
    expiredMs: null,
    cancellingMs: null,
    cancelledMs: null,
    outputFileId: null,
    errorFileId: null,
    errors: null,
    completed: 0,
    failed: 0,
    retried: 0,
    ending: null,
  };
}

export type LineState = 'waiting' | 'sent' | 'done' | 'failed';

/** One input line of a job, as it stands. */
export interface LineRow {
  readonly batchId: string;
  /** Its line number in the input file (from 1). */
  readonly lineNo: number;
  readonly customId: string;
  readonly model: string;
  /** The request body (JSON text). */
  readonly body: string;
  readonly state: LineState;
  readonly retried: boolean;
  readonly statusCode: number | null;
  readonly requestId: string | null;
  /** The answer's body as the node (or the gateway) gave it (JSON text, or text). */
  readonly answer: string | null;
  /** A line that got no answer: OpenAI's `error` {code, message} as JSON text. */
  readonly error: string | null;
}

/** What a line's request came to, to be kept: an answer (any status), or an error without one. */
export type LineResult =
  | {
      readonly kind: 'answer';
      readonly statusCode: number;
      readonly requestId: string;
      readonly body: string;
    }
  | { readonly kind: 'error'; readonly code: string; readonly message: string };

/** Anthropic's Message Batches (message-batches.ts) are jobs of the same runner; their ids say so. */
export const MESSAGE_BATCH_PREFIX = 'msgbatch_';

export const isMessageBatchId = (id: string): boolean => id.startsWith(MESSAGE_BATCH_PREFIX);

/** What a line came to, in Anthropic's words (a Message Batch's result types; `processing` before it settles). */
export type LineOutcome = 'processing' | 'succeeded' | 'errored' | 'canceled' | 'expired';

/** The error codes of lines that got no answer because the job ended first (batch-store.ts writes them). */
export const CANCELLED_CODE = 'batch_cancelled';
export const EXPIRED_CODE = 'batch_expired';

/** Pure: a line's outcome from its state, its answer's status and its error's code. */
export function lineOutcome(line: {
  readonly state: LineState;
  readonly statusCode: number | null;
  readonly errorCode: string | null;
}): LineOutcome {
  if (line.state === 'waiting' || line.state === 'sent') return 'processing';
  if (line.state === 'done' && line.statusCode !== null && line.statusCode >= 200 && line.statusCode < 300) return 'succeeded';
  if (line.statusCode === null && line.errorCode === CANCELLED_CODE) return 'canceled';
  if (line.statusCode === null && line.errorCode === EXPIRED_CODE) return 'expired';
  return 'errored';
}

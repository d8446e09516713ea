// Reports one inference request (`proxy:request-finished`) exactly once, however it ends: answered,
// refused, cut short, or thrown out by an internal error.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { RequestSpan } from '#src/core/tracing.ts';
import type { AnswerUsage } from '../attempt/answer-usage.ts';
import type { ForwardedFor, ProxyEvents } from './proxy-events.ts';
import { MAX_ATTEMPT_RECORDS, type AttemptRecord } from './attempt-record.ts';
import type { LoggedPrompt } from './logged-prompt.ts';

/** Longest model name kept for the request log (a client may name anything). */
const MAX_LOGGED_MODEL = 256;

/** The stream's token timing (stream-timing.ts), carried to the report's detail. */
export interface TokenTiming {
  readonly firstTokenMs?: number | undefined;
  readonly interTokenMs?: number | undefined;
}

type Finished = ProxyEvents['proxy:request-finished'];
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** What the answer reports beyond the request's own figures (failover's AnswerFigures; a refusal's client abort). */
export type FinishFigures = Partial<Pick<Finished, 'firstByteMs' | 'brokenError' | 'clientAborted' | 'usage'>> & TokenTiming;

export type Finish = (node: string | undefined, status: number, extra?: FinishFigures) => void;

/** What one request has got to so far; `finish` reports it once (later calls do nothing). */
export interface RequestReport {
  /** When the request arrived (monotonic ms). */
  readonly startedMs: number;
  /** The model as resolved from the body ('' until then). */
  model: string;
  /** The node of the attempt in progress, if any. */
  node: string | undefined;
  /** The tokens the delivered (or cut-short) answer used, once known. */
  usage: AnswerUsage | undefined;
  /** The tenant the request was admitted as, once it is (undefined: none, a forward from a site without a tenant). */
  tenant: string | undefined;
  /** A forwarded request's sending site and stated tenant. */
  peer: ForwardedFor | undefined;
  /** Runs once as the request ends, before it is reported (a tenant's reservation is settled here). */
  onFinish: ((status: number) => void) | undefined;
  /** The request log's particulars, filled in as the request goes (RequestDetail). */
  requestId: string;
  requestedModel: string;
  readonly attempts: AttemptRecord[];
  queueWaitMs: number;
  bytesIn: number;
  refusal: string | undefined;
  /** The request's span ([tracing]); undefined = tracing off. Ended by `finish`. */
  trace: RequestSpan | undefined;
  /** `[log] bodies = true`: the prompt's text for the line. */
  prompt: LoggedPrompt | undefined;
  readonly finish: Finish;
}

/** Keeps one more attempt (the first MAX_ATTEMPT_RECORDS). */
export function noteAttempt(report: RequestReport, record: AttemptRecord): void {
  if (report.attempts.length < MAX_ATTEMPT_RECORDS) report.attempts.push(record);
}

export interface ReportDeps {
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
  readonly modelLabel: (model: string) => string;
}

/**
 * `socket`: the client's connection. The bytes written to the client are what it wrote from now
 * until the request is reported (head and body).
 */
export function startRequestReport(
  deps: ReportDeps,
  endpoint: string,
  startedMs: number,
  socket: { readonly bytesWritten: number },
): RequestReport {
  let finished = false;
  const writtenBefore = socket.bytesWritten;
  const report: RequestReport = {
    startedMs,
    model: '',
    node: undefined,
    usage: undefined,
    tenant: undefined,
    peer: undefined,
    onFinish: undefined,
    requestId: '',
    requestedModel: '',
    attempts: [],
    queueWaitMs: 0,
    bytesIn: 0,
    refusal: undefined,
    trace: undefined,
    prompt: undefined,
    // One event object and one detail, built in place: every request runs this.
    finish: (node, status, extra) => {
      if (finished) return;
      finished = true;
      // What the answer used, as the attempt that answered read it (usage-reader.ts), kept on the report
      // before the tenant's reservation is settled from it.
      report.usage ??= extra?.usage;
      report.onFinish?.(status);
      const brokenError = extra?.brokenError;
      report.trace?.end({
        status,
        target: node,
        requestedModel: report.requestedModel,
        model: report.model,
        tenant: report.tenant,
        refusal: report.refusal,
        error: brokenError,
        inputTokens: report.usage?.promptTokens,
        outputTokens: report.usage?.completionTokens,
        attempts: report.attempts.length,
      });
      const detail: Mutable<NonNullable<Finished['detail']>> = {
        requestId: report.requestId,
        endedAt: deps.clock.now(),
        requestedModel: report.requestedModel.slice(0, MAX_LOGGED_MODEL),
        servedModel: report.model.slice(0, MAX_LOGGED_MODEL),
        attempts: report.attempts,
        queueWaitMs: report.queueWaitMs,
        bytesIn: report.bytesIn,
        bytesOut: Math.max(0, socket.bytesWritten - writtenBefore),
        refusal: report.refusal,
        firstTokenMs: extra?.firstTokenMs,
        interTokenMs: extra?.interTokenMs,
      };
      if (report.prompt !== undefined) detail.prompt = report.prompt;
      const event: Mutable<Finished> = {
        endpoint,
        model: deps.modelLabel(report.model),
        node,
        status,
        durationMs: deps.clock.monotonicMs() - startedMs,
        firstByteMs: extra?.firstByteMs,
        brokenError,
        clientAborted: extra?.clientAborted ?? false,
        usage: report.usage,
        detail,
      };
      // Absent, not undefined, when unset (as the event has always been).
      if (report.tenant !== undefined) event.tenant = report.tenant;
      if (report.peer !== undefined) event.peer = report.peer;
      deps.events.emit('proxy:request-finished', event);
    },
  };
  return report;
}

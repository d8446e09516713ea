// Reports one inference request (`proxy:request-finished`) exactly once, however it ends: answered,
// refused, cut short, or thrown out by an internal error.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { AnswerUsage } from '../attempt/answer-usage.ts';
import type { ForwardedFor, ProxyEvents } from './proxy-events.ts';

export type Finish = (node: string | undefined, status: number, extra?: Partial<ProxyEvents['proxy:request-finished']>) => void;

/** What one request has got to so far; `finish` reports it once (later calls do nothing). */
export interface RequestReport {
  /** The model as resolved from the body ('' until then). */
  model: string;
  /** The node of the attempt in progress, if any. */
  node: string | undefined;
  /** The tokens the delivered (or cut-short) answer used, once known. */
  usage: AnswerUsage | undefined;
  /** The tenant the request is admitted as, once known. */
  tenant: string | undefined;
  /** A forwarded request's sending site and stated tenant. */
  peer: ForwardedFor | undefined;
  readonly finish: Finish;
}

export interface ReportDeps {
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
  readonly modelLabel: (model: string) => string;
}

export function startRequestReport(deps: ReportDeps, endpoint: string, startedMs: number): RequestReport {
  let finished = false;
  const report: RequestReport = {
    model: '',
    node: undefined,
    usage: undefined,
    tenant: undefined,
    peer: undefined,
    finish: (node, status, extra = {}) => {
      if (finished) return;
      finished = true;
      deps.events.emit('proxy:request-finished', {
        endpoint,
        model: deps.modelLabel(report.model),
        node,
        status,
        durationMs: deps.clock.monotonicMs() - startedMs,
        firstByteMs: undefined,
        brokenError: undefined,
        clientAborted: false,
        ...(report.tenant === undefined ? {} : { tenant: report.tenant }),
        ...(report.peer === undefined ? {} : { peer: report.peer }),
        ...extra,
      });
    },
  };
  return report;
}

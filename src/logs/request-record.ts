// Pure: one finished request as the dashboard's Requests view keeps it (GET /admin/requests) — the request log's line
// (src/logs/request-line.ts, the same fields, built the same way whether or not [log] requests is
// on) with each node attempt's routing decision (policy, reason, every candidate's score and every
// exclusion, bounded by routing/route.ts's routeSummary), and the ring's sequence number.

import type { ReportsTable } from '#src/core/request-fields.ts';
import { requestLine, type LineAttempt, type RequestLine } from './request-line.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';

type Finished = ProxyEvents['proxy:request-finished'];
/** The routing decision a node attempt carries (routing/route.ts, routeSummary). */
type RouteSummary = NonNullable<NonNullable<Finished['detail']>['attempts'][number]['route']>;

export interface RecordAttempt extends LineAttempt {
  readonly route?: RouteSummary;
}

export interface RequestRecord extends Omit<RequestLine, 'attempts'> {
  /** Increases by one per request the gateway finished (the live view asks for those after the last it has). */
  readonly seq: number;
  readonly attempts: readonly RecordAttempt[];
}

export function requestRecord(e: Finished, seq: number, nowMs: number, reports?: () => ReportsTable): RequestRecord {
  const line = requestLine(e, nowMs, reports);
  const detailed = e.detail?.attempts ?? [];
  const attempts = line.attempts.map((a, i): RecordAttempt => {
    const route = detailed[i]?.route;
    return route === undefined ? a : { ...a, route };
  });
  return { seq, ...line, attempts };
}

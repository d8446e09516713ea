// One attempt of a request as its report keeps it: where it went and how it ended, in plain data
// (it crosses from a worker thread to the owner inside `proxy:request-finished`).

import type { RouteSummary } from '#src/routing/index.ts';

export interface AttemptRecord {
  /** The node's name, or the site's id. */
  readonly target: string;
  readonly kind: 'node' | 'site';
  /** The attempt's result as `proxy:attempt` names it (success, connect_error, http_5xx, …). */
  readonly outcome: string;
  readonly status: number | undefined;
  /** A node's attempt: the routing decision that chose it (bounded; the dashboard's Requests view shows it). */
  readonly route?: RouteSummary | undefined;
}

/** Attempts kept per request: a failover loop is bounded by the fleet; this bounds the log line too. */
export const MAX_ATTEMPT_RECORDS = 16;

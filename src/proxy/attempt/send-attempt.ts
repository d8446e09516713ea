// The first phase of an attempt: the buffered request sent (forward.ts, on an UpstreamCall), and
// what it means when the node's status line and headers never come. A node that never answers is a
// failure another node may make good; an abort is the client leaving, the total timeout or the
// first-token deadline, told apart by the exchange. Only an attempt whose head never came runs this file.

import type { Dispatcher } from 'undici';
import { classify } from './attempt-result.ts';
import type { AttemptExchange } from './attempt-exchange.ts';
import type { AttemptOutcome } from './attempt-outcome.ts';
import type { UpstreamRequestLine } from './upstream-call.ts';

export interface UpstreamRequest extends UpstreamRequestLine {
  readonly pool: Dispatcher;
  /** routing.load_timeout when this attempt loads its model: the bound on waiting for the answer's head. */
  readonly headersTimeoutMs?: number;
}

/** What an attempt whose head never came (`error`: why, as the call rejected it or sending threw) means. */
export function unanswered(error: unknown, request: UpstreamRequest, exchange: AttemptExchange): AttemptOutcome {
  if (exchange.loadTimedOut()) {
    return {
      kind: 'failed',
      result: 'load_timeout',
      error: `the model did not load within ${request.headersTimeoutMs}ms (routing.load_timeout)`,
    };
  }
  const silent = exchange.firstTokenTimeout();
  if (silent !== undefined) return { kind: 'failed', result: 'timeout', error: silent };
  if (exchange.timedOut()) return { kind: 'failed', result: 'timeout', error: `no answer within ${exchange.totalTimeoutMs}ms` };
  if (exchange.signal.aborted) return { kind: 'client_gone', status: undefined };
  return { kind: 'failed', ...classify(error) };
}

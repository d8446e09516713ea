// The first phase of an attempt: send the buffered request and wait for the node's status line and
// headers. A node that never answers is a failure another node may make good; an abort is the
// client leaving or the total timeout, told apart by the exchange.

import type { Dispatcher } from 'undici';
import { classify } from './attempt-result.ts';
import type { AttemptExchange } from './attempt-exchange.ts';
import type { AttemptOutcome } from './attempt-outcome.ts';
import { UpstreamCall, type UpstreamHead, type UpstreamRequestLine } from './upstream-call.ts';

export interface UpstreamRequest extends UpstreamRequestLine {
  readonly pool: Dispatcher;
  /** routing.load_timeout when this attempt loads its model: the bound on waiting for the answer's head. */
  readonly headersTimeoutMs?: number;
}

export type Sent =
  | { readonly kind: 'answered'; readonly head: UpstreamHead; readonly call: UpstreamCall }
  | { readonly kind: 'unanswered'; readonly outcome: AttemptOutcome };

export async function sendAttempt(request: UpstreamRequest, exchange: AttemptExchange): Promise<Sent> {
  const call = new UpstreamCall(exchange);
  try {
    call.send(request.pool, request);
    const head = await call.head;
    exchange.headersArrived();
    return { kind: 'answered', head, call };
  } catch (error) {
    if (exchange.loadTimedOut()) {
      return {
        kind: 'unanswered',
        outcome: {
          kind: 'failed',
          result: 'load_timeout',
          error: `the model did not load within ${request.headersTimeoutMs}ms (routing.load_timeout)`,
        },
      };
    }
    if (exchange.timedOut()) {
      return {
        kind: 'unanswered',
        outcome: { kind: 'failed', result: 'timeout', error: `no answer within ${exchange.totalTimeoutMs}ms` },
      };
    }
    if (exchange.signal.aborted) return { kind: 'unanswered', outcome: { kind: 'client_gone', status: undefined } };
    return { kind: 'unanswered', outcome: { kind: 'failed', ...classify(error) } };
  }
}

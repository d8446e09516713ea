// The two ends of holding an answer in memory: sending it whole once it is complete (with its exact
// length), and what a body that broke off while held means for the attempt.

import type { AnswerUsage } from './answer-usage.ts';
import { classify } from './attempt-result.ts';
import type { AttemptExchange } from './attempt-exchange.ts';
import type { AttemptOutcome } from './attempt-outcome.ts';
import { clientHead, type ClientSide, type UpstreamAnswer } from './upstream-answer.ts';

/**
 * `usage`: what a 2xx answer stated it used (read from its parsed body by the caller). A client that
 * left while the whole answer was held is charged what the node says it did.
 */
export function deliverHeld(answer: UpstreamAnswer, bytes: Buffer, client: ClientSide, usage?: AnswerUsage): AttemptOutcome {
  const { res } = client;
  if (res.destroyed) return { kind: 'client_gone', status: answer.status, usage };
  res.writeHead(answer.status, clientHead(answer, client, bytes.length));
  client.exchange.heldBytesWritten();
  res.end(bytes);
  const now = client.clock.monotonicMs();
  // A whole answer comes once generated: its tokens over the time since sending (prompt included: errs low).
  const decode =
    answer.status === 200 && usage?.counted === 'usage' && usage.completionTokens !== undefined
      ? { tokens: usage.completionTokens, decodeMs: now - client.sentMs }
      : undefined;
  return { kind: 'delivered', status: answer.status, firstByteMs: now - client.startedMs, usage, decode };
}

/** Nothing reached the client yet, so a body that broke off can still be failed over. */
export function heldBodyBrokeOff(status: number, error: unknown, exchange: AttemptExchange): AttemptOutcome {
  if (exchange.clientLeft()) return { kind: 'client_gone', status };
  if (exchange.timedOut())
    return { kind: 'failed', result: 'timeout', error: `no whole answer within ${exchange.totalTimeoutMs}ms`, status };
  const cause = classify(error);
  return { kind: 'failed', result: cause.result, error: `the node's ${status} answer broke off: ${cause.error}`, status };
}

// One upstream attempt, in phases (after undici's dispatch handler and Caddy's reverseProxy /
// finalizeResponse): send the buffered body and wait for the node's head (send-attempt.ts); judge
// the head (response-policy.ts); then answer the client with one strategy: inspect a refusal, hold
// a whole JSON answer, or stream through. Each phase returns an AttemptOutcome. Before anything
// reaches the client a failure is reported for failover; after that the response is ended.

import type { ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import { estimatedWork, type WorkAsk } from './answer-usage.ts';
import { AttemptExchange } from './attempt-exchange.ts';
import type { AttemptOutcome } from './attempt-outcome.ts';
import { decodedBody } from './decode.ts';
import type { HeldBytesBudget } from './held-budget.ts';
import { holdJson } from './hold-json.ts';
import { clientResponseHeaders } from '../http/hop-headers.ts';
import { inspectRefusal } from './inspect-refusal.ts';
import { bodyCoding, planResponse } from './response-policy.ts';
import { sendAttempt, unanswered, type UpstreamRequest } from './send-attempt.ts';
import { streamThrough } from './stream-through.ts';
import type { UsageAsked } from './usage-strip.ts';
import type { UpstreamCall, UpstreamHead } from './upstream-call.ts';
import type { ClientSide, UpstreamAnswer } from './upstream-answer.ts';
import type { ErrorDialect } from '../http/error-dialect.ts';

export type { AttemptOutcome } from './attempt-outcome.ts';

export interface AttemptInput extends UpstreamRequest {
  readonly res: ServerResponse;
  readonly nodeName: string;
  readonly extraResponseHeaders: Readonly<Record<string, string>>;
  /** Asked when the node answers 5xx: true means hide it and fail over, false means pass it on. */
  readonly canFailOver: () => boolean;
  /** False for a remote site: none of its error answers reaches the client (response-policy.ts). Default true. */
  readonly passOnErrors?: boolean;
  /** The endpoint answers other media than JSON and SSE (the audio routes): passed through. */
  readonly anyMedia?: boolean | undefined;
  /** The endpoint's error dialect: a 400/404 passed on is worded in it (absent = as the node sent it). */
  readonly errorDialect?: ErrorDialect | undefined;
  readonly startedMs: number;
  /** Bound on the whole exchange, streaming included; 0 = none. */
  readonly totalTimeoutMs: number;
  /** Schedules the total-timeout timer, and times the first byte. */
  readonly clock: Clock;
  /**
   * Largest whole (non-SSE) JSON answer held back until it is complete and parses, so that a node
   * answering garbage or breaking off mid-body can still be failed over; bigger ones stream through.
   */
  readonly maxHeldBodyBytes: number;
  /** Shared by all requests: what cannot be reserved from it streams through unchecked. */
  readonly heldBudget: HeldBytesBudget;
  /** The body sent asks for the stream's usage the client did not ask for: taken out of the answer again. */
  readonly usageAsked?: UsageAsked | undefined;
  /**
   * The request's work as the gateway knows it (the prompt as sized, the most it may generate, the
   * node's learned speed): what the node is charged with, estimated, when it was sent the request
   * and the client left before anything of the answer stating its usage could be read
   * (answer-usage.ts, estimatedWork). undefined = nothing to charge.
   */
  readonly work?: WorkAsk | undefined;
}

/**
 * How long a whole answer whose head came is still read after its client left, to charge what the
 * node says it used (its body follows its head at once: the node has generated it). Past this, or
 * past the held-answer bound in bytes, the call is cut and the work estimated.
 */
export const WHOLE_ANSWER_GRACE_MS = 2_000;

export async function forwardAttempt(input: AttemptInput): Promise<AttemptOutcome> {
  const { res } = input;
  const exchange = new AttemptExchange(res, input.clock, input.totalTimeoutMs, input.heldBudget, input.headersTimeoutMs);
  let upstream: UpstreamCall | undefined;
  try {
    if (res.destroyed) return { kind: 'client_gone', status: undefined };
    const sentMs = input.clock.monotonicMs();
    const workDone = (outcome: AttemptOutcome): AttemptOutcome =>
      withWorkDone(outcome, input.work, (exchange.abortedAtMs ?? input.clock.monotonicMs()) - sentMs);
    let head: UpstreamHead;
    try {
      const call = sendAttempt(input, exchange);
      head = await call.head;
      upstream = call;
    } catch (error) {
      return workDone(unanswered(error, input, exchange));
    }
    exchange.headersArrived();
    const status = head.status;
    const headers = clientResponseHeaders(head.headers);
    const coding = bodyCoding(head.headers['content-encoding']);
    const plan = planResponse({
      status,
      contentType: String(headers['content-type'] ?? ''),
      coding,
      canFailOver: input.canFailOver,
      passOnErrors: input.passOnErrors,
      anyMedia: input.anyMedia,
    });
    if (plan.kind === 'fail') {
      upstream.destroy(new Error(plan.error));
      return { kind: 'failed', result: plan.result, error: plan.error, status };
    }
    if (res.destroyed) {
      upstream.destroy(CLIENT_GONE);
      return workDone({ kind: 'client_gone', status });
    }
    // Compressed although asked for identity: the client gets the decoded bytes (planResponse failed unknown codings).
    const body = decodedBody(upstream, coding);
    if (body !== upstream) delete headers['content-encoding'];
    const answer: UpstreamAnswer = { status, headers, body };
    const client: ClientSide = {
      res,
      exchange,
      extraResponseHeaders: input.extraResponseHeaders,
      clock: input.clock,
      startedMs: input.startedMs,
      sentMs,
    };
    switch (plan.kind) {
      case 'inspect_error':
        return await inspectRefusal(answer, client, input.passOnErrors !== false, input.errorDialect);
      case 'hold_json':
        exchange.readingWholeAnswer(WHOLE_ANSWER_GRACE_MS);
        return workDone(await holdJson(answer, client, input.maxHeldBodyBytes));
      case 'stream':
        return workDone(
          await streamThrough(answer, client, {
            eventStream: plan.eventStream,
            ndjson: plan.ndjson,
            usageAsked: input.usageAsked,
          }),
        );
    }
  } catch (error) {
    // Anything that throws between sending and pumping (a header node:http refuses, a bug) must
    // not leave the node generating for nobody.
    exchange.abort(error);
    upstream?.destroy(error instanceof Error ? error : new Error(String(error)));
    throw error;
  } finally {
    exchange.close();
  }
}

/**
 * A client that left after the node was sent the request, with nothing read of a successful answer
 * that says what it used: the node is charged what it is known to have done in the `elapsedMs` it
 * had the request, estimated (answer-usage.ts). An error answer the node gave used nothing to count.
 */
function withWorkDone(outcome: AttemptOutcome, work: WorkAsk | undefined, elapsedMs: number): AttemptOutcome {
  if (outcome.kind !== 'client_gone' || outcome.usage !== undefined || work === undefined) return outcome;
  if (outcome.status !== undefined && (outcome.status < 200 || outcome.status >= 300)) return outcome;
  const usage = estimatedWork(work, elapsedMs);
  return usage === undefined ? outcome : { kind: 'client_gone', status: outcome.status, usage };
}

/** Why a node's answer is dropped when the client left before it: one error for all, never thrown. */
const CLIENT_GONE = new Error('client closed the connection');

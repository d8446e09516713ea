// One upstream attempt, in phases (after undici's dispatch handler and Caddy's reverseProxy /
// finalizeResponse): send the buffered body (the call, below) and, when the node's head comes,
// judge it (response-policy.ts); then answer the client with one strategy: inspect a refusal, hold
// a whole JSON answer, or stream through. The call's callbacks drive the attempt: a whole JSON
// answer is held and sent from undici's own calls, with no promise. Each phase ends in an
// AttemptOutcome. Before anything reaches the client a failure is reported for failover; after
// that the response is ended.
//
// The call: one request to a node on undici's dispatch API (the v7+ handler: onRequestStart,
// onResponseStart, onResponseData, onResponseEnd, onResponseError). Instead of `Pool.request`,
// which wraps every answer in a Readable and a promise chain, the handler tells the attempt the
// head (a callback, no promise: the attempt runs on from undici's own call) and then pushes the
// body's chunks straight to the strategy reading them (the body feed: attempt-exchange.ts); the
// reader's pause pauses the parser on the node's socket. The attempt's abort signal (client gone,
// total timeout, load timeout) aborts the request wherever it is: waiting in the connection gate
// (the interceptor in upstream-pools.ts, which reads the signal from the dispatch options), waiting
// for its socket (queued-abort.ts), or mid-answer.
//
// A head that never came: a node that never answers is a failure another node may make good; an
// abort is the client leaving, the total timeout or the first-token deadline, told apart by the
// exchange (unanswered, at the end of this file).

import type { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Clock } from '#src/core/clock.ts';
import { errors } from '#src/core/undici-parts.ts';
import type { AbortSource } from './abort-source.ts';
import type { AnswerRewrite } from './answer-rewrite.ts';
import { estimatedWork, type WorkAsk } from './answer-usage.ts';
import { AttemptExchange, BodyFeed, type ClientSide, type UpstreamAnswer } from './attempt-exchange.ts';
import type { AttemptOutcome, OutcomeListener } from './attempt-outcome.ts';
import { classify } from './attempt-result.ts';
import { decodedBody } from './decode.ts';
import type { FirstTokenDeadline } from './first-token-deadline.ts';
import { heldJsonOutcome, readHeld, type HeldBody, type HeldBytesBudget, type HeldListener } from './held-answer.ts';
import { inspectRefusal } from './inspect-refusal.ts';
import { QUEUED_ABORT, type QueuedAbortHook } from './queued-abort.ts';
import { bodyCoding, planResponse } from './response-policy.ts';
import { streamOn } from './stream-through.ts';
import type { UsageAsked } from './usage-strip.ts';
import type { ErrorDialect } from '../http/error-dialect.ts';
import { clientResponseHeaders } from '../http/hop-headers.ts';

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
  /** Told a streamed answer's id from its first event (stream-through.ts); undefined = not read. */
  readonly learnAnswerId?: ((id: string) => void) | undefined;
  /**
   * The request's work as the gateway knows it (the prompt as sized, the most it may generate, the
   * node's learned speed): what the node is charged with, estimated, when it was sent the request
   * and the client left before anything of the answer stating its usage could be read
   * (answer-usage.ts, estimatedWork). undefined = nothing to charge.
   */
  readonly work?: WorkAsk | undefined;
  /** The client gets the answer in another API than the node's (a translation: answer-rewrite.ts); undefined = as it came. */
  readonly rewrite?: AnswerRewrite | undefined;
  /** A streamed answer's first-token deadline (first-token-deadline.ts); undefined = none. */
  readonly firstToken?: FirstTokenDeadline | undefined;
}

/**
 * How long a whole answer whose head came is still read after its client left, to charge what the
 * node says it used (its body follows its head at once: the node has generated it). Past this, or
 * past the held-answer bound in bytes, the call is cut and the work estimated.
 */
export const WHOLE_ANSWER_GRACE_MS = 2_000;

/** Where an attempt's end is told, once (attempt-outcome.ts). */
export type AttemptEnd = OutcomeListener;

/** One attempt as a promise (for callers that await one); the failover loop uses `startAttempt`. */
export function forwardAttempt(input: AttemptInput): Promise<AttemptOutcome> {
  return new Promise((ended, threw) => startAttempt(input, { ended, threw }));
}

/**
 * Starts one attempt, driven to its end by the call's own callbacks (undici's dispatch handler,
 * then the body's producer): no promise of its own, unless a strategy that streams or inspects
 * answers through one. `end` is told once.
 */
export function startAttempt(input: AttemptInput, end: AttemptEnd): void {
  new Attempt(input, end).start();
}

/** One attempt: the head's and the held body's listener, and the client side the strategies write to. */
class Attempt implements HeadListener, HeldListener, OutcomeListener, ClientSide {
  readonly res: ServerResponse;
  readonly exchange: AttemptExchange;
  readonly extraResponseHeaders: Readonly<Record<string, string>>;
  readonly clock: Clock;
  readonly startedMs: number;
  /** Set when the request is sent. */
  sentMs = 0;
  readonly #input: AttemptInput;
  readonly #end: AttemptEnd;
  #call: UpstreamCall | undefined;
  /** The head came: the call has an answer to cut should anything throw. */
  #headCame = false;
  /** The whole JSON answer being held (hold_json). */
  #answer: UpstreamAnswer | undefined;
  #over = false;

  constructor(input: AttemptInput, end: AttemptEnd) {
    this.#input = input;
    this.#end = end;
    this.res = input.res;
    this.clock = input.clock;
    this.startedMs = input.startedMs;
    this.extraResponseHeaders = input.extraResponseHeaders;
    this.exchange = new AttemptExchange(
      input.res,
      input.clock,
      input.totalTimeoutMs,
      input.heldBudget,
      input.headersTimeoutMs,
      input.firstToken,
    );
  }

  start(): void {
    const input = this.#input;
    if (this.res.destroyed) {
      this.#done({ kind: 'client_gone', status: undefined });
      return;
    }
    this.sentMs = input.clock.monotonicMs();
    try {
      const call = new UpstreamCall(this.exchange, this);
      this.#call = call;
      call.send(input.pool, input);
    } catch (error) {
      this.onNoHead(error);
    }
  }

  /** The head never came (`error`: why, as the call failed or sending threw). */
  onNoHead(error: unknown): void {
    try {
      this.#done(this.#workDone(unanswered(error, this.#input, this.exchange)));
    } catch (thrown) {
      this.#threw(thrown);
    }
  }

  /** The head came (inside undici's own call): judge it, then answer the client with one strategy. */
  onHead(status: number, rawHeaders: UpstreamHead['headers']): void {
    try {
      this.#answerWith(status, rawHeaders);
    } catch (error) {
      this.#threw(error);
    }
  }

  #answerWith(status: number, rawHeaders: UpstreamHead['headers']): void {
    const input = this.#input;
    const exchange = this.exchange;
    const upstream = this.#call as UpstreamCall;
    this.#headCame = true;
    exchange.headersArrived();
    const headers = clientResponseHeaders(rawHeaders);
    const coding = bodyCoding(rawHeaders['content-encoding']);
    const plan = planResponse({
      status,
      contentType: String(headers['content-type'] ?? ''),
      coding,
      canFailOver: input.canFailOver,
      passOnErrors: input.passOnErrors,
      anyMedia: input.anyMedia,
      rewordsErrors: input.rewrite !== undefined,
    });
    if (plan.kind === 'fail') {
      upstream.destroy(new Error(plan.error));
      this.#done({ kind: 'failed', result: plan.result, error: plan.error, status });
      return;
    }
    if (this.res.destroyed) {
      upstream.destroy(CLIENT_GONE);
      this.#done(this.#workDone({ kind: 'client_gone', status }));
      return;
    }
    // Compressed although asked for identity: the client gets the decoded bytes (planResponse failed unknown codings).
    let body: BodyFeed = upstream;
    if (coding.kind === 'encoded') {
      body = decodedBody(upstream, coding);
      delete headers['content-encoding'];
    }
    const answer: UpstreamAnswer = { status, headers, body };
    // Only a stream waits for its first token (stream-through.ts): any other answer is the node's, now.
    if (plan.kind !== 'stream') exchange.firstTokenCame();
    switch (plan.kind) {
      case 'inspect_error':
        this.#settleWith(inspectRefusal(answer, this, input.passOnErrors !== false, input.errorDialect), false);
        return;
      case 'hold_json':
        exchange.readingWholeAnswer(WHOLE_ANSWER_GRACE_MS);
        this.#answer = answer;
        readHeld(body, input.maxHeldBodyBytes, exchange.reservation, this);
        return;
      case 'stream':
        streamOn(
          answer,
          this,
          {
            eventStream: plan.eventStream,
            ndjson: plan.ndjson,
            usageAsked: input.usageAsked,
            learnAnswerId: input.learnAnswerId,
            rewrite: input.rewrite,
            errorDialect: input.errorDialect,
          },
          this,
        );
        return;
    }
  }

  /** The whole JSON answer was held (or broke off, or outgrew its bounds): what it means. */
  onHeld(held: HeldBody): void {
    try {
      const outcome = heldJsonOutcome(this.#answer as UpstreamAnswer, this, held, this.#input.rewrite);
      if (outcome instanceof Promise) this.#settleWith(outcome, true);
      else this.#done(this.#workDone(outcome));
    } catch (error) {
      this.#threw(error);
    }
  }

  /** The streamed answer's end (stream-through.ts): a client gone is charged its work. */
  ended(outcome: AttemptOutcome): void {
    try {
      this.#done(this.#workDone(outcome));
    } catch (error) {
      this.#threw(error);
    }
  }

  threw(error: unknown): void {
    this.#threw(error);
  }

  /** A strategy that answers through a promise (streaming, an inspected refusal); `charged`: a client gone is charged its work. */
  #settleWith(answering: Promise<AttemptOutcome>, charged: boolean): void {
    answering.then(
      (outcome) => {
        try {
          this.#done(charged ? this.#workDone(outcome) : outcome);
        } catch (error) {
          this.#threw(error);
        }
      },
      (error: unknown) => this.#threw(error),
    );
  }

  #workDone(outcome: AttemptOutcome): AttemptOutcome {
    const now = this.exchange.abortedAtMs ?? this.clock.monotonicMs();
    return withWorkDone(outcome, this.#input.work, now - this.sentMs);
  }

  #done(outcome: AttemptOutcome): void {
    if (this.#over) return;
    this.#over = true;
    this.exchange.close();
    this.#end.ended(outcome);
  }

  #threw(error: unknown): void {
    if (this.#over) return;
    this.#over = true;
    this.exchange.abort(error);
    if (this.#headCame) this.#call?.destroy(error instanceof Error ? error : new Error(String(error)));
    this.exchange.close();
    this.#end.threw(error);
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

// ---- the call: one request on undici's dispatch API -------------------------------------------

export interface UpstreamHead {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** What is sent: the gateway's POST, with its headers built once per attempt. */
export interface UpstreamRequestLine {
  /** The pool's origin (upstream-pools.ts, `dispatchTo`); undefined = undici adds it, copying the options. */
  readonly origin?: string | undefined;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/** What is told how the head went, once: it came (its body follows through the call), or none came and why. */
export interface HeadListener {
  onHead(status: number, headers: UpstreamHead['headers']): void;
  onNoHead(error: Error): void;
}

/** undici's own dispatch options plus the signal the connection gate reads (upstream-pools.ts). */
type GatedDispatchOptions = Dispatcher.DispatchOptions & { readonly signal: AbortSignal };

export class UpstreamCall extends BodyFeed implements Dispatcher.DispatchHandler {
  readonly #abort: AbortSource;
  readonly #signal: AbortSignal;
  /** Told the head, or why none came. */
  readonly #listener: HeadListener;
  #controller: Dispatcher.DispatchController | undefined;
  /** Takes the request out of undici's queue while it waits for a connection. */
  #cancelQueued: ((reason: Error) => void) | undefined;
  #headSettled = false;
  #finished = false;

  constructor(abort: AbortSource, listener: HeadListener) {
    super();
    this.#listener = listener;
    this.#abort = abort;
    this.#signal = abort.signal;
  }

  /** Sends the request; the head and the body come back through this handler. */
  send(pool: Dispatcher, request: UpstreamRequestLine): void {
    const signal = this.#signal;
    if (signal.aborted) {
      this.onResponseError(undefined, abortReason(signal));
      return;
    }
    this.#abort.onAbort(this);
    const options: GatedDispatchOptions = {
      origin: request.origin,
      path: request.path,
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal,
    };
    if (QUEUED_ABORT !== undefined) {
      const hook: QueuedAbortHook = (cancel) => this.#queued(cancel);
      (options as unknown as Record<symbol, QueuedAbortHook>)[QUEUED_ABORT] = hook;
    }
    pool.dispatch(options, this);
  }

  /** The attempt's signal fired: abort the request wherever it is. */
  handleEvent(): void {
    const reason = abortReason(this.#signal);
    if (this.#controller !== undefined) this.#controller.abort(reason);
    else this.#cancelQueued?.(reason);
  }

  #queued(cancel: (reason: Error) => void): void {
    if (this.#signal.aborted) cancel(abortReason(this.#signal));
    else this.#cancelQueued = cancel;
  }

  override pause(): void {
    this.#controller?.pause();
  }

  override resume(): void {
    this.#controller?.resume();
  }

  override destroy(reason: Error): void {
    if (this.#finished) return;
    this.#controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    this.#cancelQueued = undefined;
    if (this.#signal.aborted) controller.abort(abortReason(this.#signal));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: UpstreamHead['headers']): void {
    // An interim answer (103 Early Hints) precedes the real one, as undici's request API skips it.
    if (status < 200) return;
    this.#headSettled = true;
    this.#listener.onHead(status, headers);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.pushChunk(chunk);
  }

  onResponseEnd(): void {
    this.#finish();
    this.pushEnd();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.#finish();
    if (this.#headSettled) this.pushError(error);
    else {
      this.#headSettled = true;
      this.#listener.onNoHead(error);
    }
  }

  #finish(): void {
    this.#finished = true;
    this.#abort.onAbort(undefined);
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new errors.RequestAbortedError();
}

// ---- a head that never came ----------------------------------------------------------------------

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

// The one failover loop: try the targets of each source in turn — the local nodes the scheduler
// admits, then the remote sites chooseSite picks — while nothing has reached the client. Every
// attempt goes the same way: prepare the call (a site's is signed), send it with the one attempt
// strategy (forward.ts), release the target, let it conclude (feedback, and what the outcome
// means), then either finish the report or fail over with what was learned (the failover state: attempt-feedback.ts).
// The loop is driven by the attempts' callbacks and tells its end to a receiver (the request's
// spine): no promise of its own (runFailover wraps one round it for a caller that awaits the end).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import type { AttemptEndNote, AttemptSpan } from '#src/core/tracing.ts';
import type { AnswerRewrite } from '../attempt/answer-rewrite.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import { afterFailure, attemptEvent, withFailure, type FailoverState } from './attempt-feedback.ts';
import { startAttempt, type AttemptEnd, type AttemptInput } from '../attempt/forward.ts';
import type { HeldBytesBudget } from '../attempt/held-answer.ts';
import type { Finish, RequestObserver } from '../request/request-report.ts';
import type { ResolvedRequest } from '../request/request-model.ts';
import type { RequestSettings } from '../request/request-settings.ts';
import type { Prepared, Target, TargetCall, TargetFailure } from './target.ts';

/** The request as every target source sees it. */
export interface RequestAsk {
  readonly settings: RequestSettings;
  readonly endpoint: string;
  /** The client's request: its headers (filtered per target) and address. */
  readonly req: IncomingMessage;
  readonly resolved: ResolvedRequest;
  readonly requestId: string;
  /** Aborted when the client leaves. */
  readonly signal: AbortSignal;
  /** Told each time the request waited in its model's queue (the request log's queue wait). */
  readonly onQueueWait?: ((waitedMs: number) => void) | undefined;
  /** What watches the request (a feature's); undefined = nothing. Sources note their routing decisions to it. */
  readonly observer?: RequestObserver | undefined;
}

export type NextTarget =
  | { readonly kind: 'target'; readonly target: Target }
  /**
   * This source has no (further) target. `stop`: none of the later sources may be tried either
   * (the client left). `failure`: a target chosen but not sent, listed with why.
   */
  | { readonly kind: 'none'; readonly stop: boolean; readonly failure?: TargetFailure | undefined };

/** Where targets come from, in the order they are tried; asked again after every failed attempt. */
export interface TargetSource {
  /** At once when the source knows (a node admitted without a wait), else a promise. */
  next(state: FailoverState): NextTarget | Promise<NextTarget>;
  /**
   * Whether this source may have a target for the request as it stands, asked (without side effects)
   * when an earlier source's target answers a 5xx and has no sibling left: a later source that may
   * serve makes that answer worth failing over from. Absent: never asked.
   */
  mayServe?(state: FailoverState): boolean;
}

/** What every attempt shares, whatever its target. */
export interface AttemptSetting {
  readonly res: ServerResponse;
  readonly body: Buffer;
  readonly startedMs: number;
  readonly totalTimeoutMs: number;
  readonly clock: Clock;
  readonly maxHeldBodyBytes: number;
  readonly heldBudget: HeldBytesBudget;
  readonly finish: Finish;
  /** Told the target of each attempt before it is sent (the report names it if the attempt throws). */
  readonly onAttempt: (target: Target) => void;
  /** Told how each attempt ended, before its verdict is acted on (the request log's attempts). */
  readonly onConcluded?: ((target: Target, outcome: AttemptOutcome) => void) | undefined;
  /** What watches the request (a feature's); undefined = nothing. Told of each attempt, whose context is sent on. */
  readonly observer?: RequestObserver | undefined;
  /** The client gets every target's answer in another API (a translation); undefined = as it came. */
  readonly rewrite?: AnswerRewrite | undefined;
}

export type FailoverEnd = { readonly kind: 'answered' } | { readonly kind: 'unserved'; readonly state: FailoverState };

/** The one answered end (it carries nothing of its request). */
const ANSWERED: FailoverEnd = Object.freeze({ kind: 'answered' });

/** Who is told how a run ended: once, one of the two (like a promise's settlement, without one). */
export interface FailoverReceiver {
  /** The run's end: answered, or unserved with what was learned. */
  failoverEnded(end: FailoverEnd): void;
  /** A source, a target or an attempt threw: the run is over with that error. */
  failoverFailed(error: unknown): void;
}

/**
 * Runs the loop to its end and tells `receiver` (no promise for the whole request). Each attempt is
 * driven by its own callbacks (forward.ts, startAttempt) and tells its end to the run; only a source
 * that must wait (a queued admission) or a target whose call is prepared asynchronously (a signed
 * site call) adds a promise of its own. A receiver that throws is not taken for the run failing
 * (rethrowLater).
 */
export function startFailoverRun(
  sources: readonly TargetSource[],
  setting: AttemptSetting,
  initial: FailoverState,
  receiver: FailoverReceiver,
): void {
  new FailoverRun(sources, setting, initial, receiver).ask();
}

/** The same run, its end as a promise (for a caller that awaits it). */
export function runFailover(
  sources: readonly TargetSource[],
  setting: AttemptSetting,
  initial: FailoverState,
): Promise<FailoverEnd> {
  return new Promise((resolve, reject) =>
    startFailoverRun(sources, setting, initial, { failoverEnded: resolve, failoverFailed: reject }),
  );
}

/** One request's run over the sources: the state learned so far, and the attempt under way. */
class FailoverRun implements AttemptEnd {
  readonly #sources: readonly TargetSource[];
  readonly #setting: AttemptSetting;
  readonly #receiver: FailoverReceiver;
  /** The receiver was told (or is being told): later ends are ignored, as a settled promise ignores them. */
  #told = false;
  #state: FailoverState;
  /** The source asked now. */
  #index = 0;
  #attempts = 0;
  /** The attempt under way: its target, the state it was sent with, and what watches it. */
  #target: Target | undefined;
  #sentState: FailoverState;
  #traced: TracedAttempt | undefined;
  /** An attempt is under way: its end is told once. */
  #sending = false;
  /** Asked by the attempt, only on a 5xx: one function per run, reading the attempt under way. */
  readonly #canFailOver = (): boolean =>
    mayFailOver(this.#target as Target, this.#sources.slice(this.#index + 1), this.#sentState);

  constructor(sources: readonly TargetSource[], setting: AttemptSetting, initial: FailoverState, receiver: FailoverReceiver) {
    this.#sources = sources;
    this.#setting = setting;
    this.#state = initial;
    this.#sentState = initial;
    this.#receiver = receiver;
  }

  #resolve(end: FailoverEnd): void {
    if (this.#told) return;
    this.#told = true;
    try {
      this.#receiver.failoverEnded(end);
    } catch (error) {
      rethrowLater(error);
    }
  }

  #reject(error: unknown): void {
    if (this.#told) return;
    this.#told = true;
    try {
      this.#receiver.failoverFailed(error);
    } catch (thrown) {
      rethrowLater(thrown);
    }
  }

  /** Asks the sources, from the current one, until one gives a target (sent) or none is left. */
  ask(): void {
    try {
      while (this.#index < this.#sources.length) {
        const asked = (this.#sources[this.#index] as TargetSource).next(this.#state);
        if (asked instanceof Promise) {
          asked.then(
            (next) => this.#answered(next),
            (error: unknown) => this.#reject(error),
          );
          return;
        }
        if (!this.#took(asked)) return;
      }
      this.#resolve({ kind: 'unserved', state: this.#state });
    } catch (error) {
      this.#reject(error);
    }
  }

  /** A source that waited has answered. */
  #answered(next: NextTarget): void {
    try {
      if (this.#took(next)) this.ask();
    } catch (error) {
      this.#reject(error);
    }
  }

  /** What a source gave: a target is sent; none moves on to the next source (true), or ends the run. */
  #took(next: NextTarget): boolean {
    if (next.kind === 'none') {
      if (next.failure !== undefined) this.#state = withFailure(this.#state, next.failure);
      if (next.stop) {
        this.#resolve({ kind: 'unserved', state: this.#state });
        return false;
      }
      this.#index += 1;
      return true;
    }
    this.#send(next.target);
    return false;
  }

  /** Prepares the call and sends it; the attempt tells its end (`ended` or `threw`). */
  #send(target: Target): void {
    const setting = this.#setting;
    setting.onAttempt(target);
    this.#target = target;
    this.#sentState = this.#state;
    this.#attempts += 1;
    this.#traced = setting.observer === undefined ? undefined : { observer: setting.observer, index: this.#attempts };
    this.#sending = true;
    try {
      const preparing = target.prepare();
      if (preparing instanceof Promise) {
        preparing.then(
          (prepared) => this.#sendPrepared(prepared),
          (error: unknown) => this.threw(error),
        );
      } else this.#sendPrepared(preparing);
    } catch (error) {
      this.threw(error);
    }
  }

  #sendPrepared(prepared: Prepared): void {
    try {
      const target = this.#target as Target;
      const traced = this.#traced;
      if (traced !== undefined) {
        traced.attempt = traced.observer.attempt({
          kind: target.id.kind,
          name: target.id.kind === 'node' ? target.id.name : target.id.id,
          url: target.url,
          index: traced.index,
        });
      }
      if (prepared.kind === 'unsendable') this.ended(prepared.outcome);
      else
        startAttempt(
          attemptInput(prepared.call, target, this.#canFailOver, this.#setting, traced, this.#sentState.routeRequest),
          this,
        );
    } catch (error) {
      this.threw(error);
    }
  }

  /** The attempt's end: the target is released and concludes; the request is answered, or fails over to the next target. */
  ended(outcome: AttemptOutcome): void {
    if (!this.#sending) return;
    this.#sending = false;
    const target = this.#target as Target;
    const setting = this.#setting;
    try {
      target.release();
      setting.onConcluded?.(target, outcome);
      const verdict = target.conclude(outcome);
      this.#traced?.attempt?.end(attemptEnd(outcome, verdict.next === 'fail_over'));
      if (verdict.next === 'answered') {
        setting.finish(target.label, verdict.status, verdict.figures);
        this.#resolve(ANSWERED);
        return;
      }
      this.#state = afterFailure(this.#state, verdict);
    } catch (error) {
      this.#reject(error);
      return;
    }
    // The next target is asked for outside the call that ended this attempt (undici's own, often).
    queueMicrotask(() => this.ask());
  }

  /** The attempt threw: its target is released, and the run rejects with the error. */
  threw(error: unknown): void {
    if (!this.#sending) return;
    this.#sending = false;
    try {
      (this.#target as Target).release();
    } catch (releasing) {
      this.#reject(releasing);
      return;
    }
    this.#reject(error);
  }
}

/**
 * A receiver that threw is not the run failing (it was told already): its error surfaces as an
 * uncaught one, as a promise's handler that threw would, not inside the run's own handling.
 */
function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

/**
 * Whether a target's 5xx is worth failing over from: a sibling target remains in its own source,
 * or a later source (the sites, after the local nodes) may serve the request as it stands.
 */
export function mayFailOver(target: Pick<Target, 'canFailOver'>, later: readonly TargetSource[], state: FailoverState): boolean {
  return target.canFailOver() || later.some((source) => source.mayServe?.(state) === true);
}

/** One watched attempt: the request's observer, and what watches the attempt once it is prepared. */
interface TracedAttempt {
  readonly observer: RequestObserver;
  readonly index: number;
  attempt?: AttemptSpan;
}

/**
 * The attempt's input for a prepared call. `route`: the request as sized (its prompt and answer
 * sizes are charged, estimated, for a node left working by its client).
 */
function attemptInput(
  call: TargetCall,
  target: Target,
  canFailOver: () => boolean,
  setting: AttemptSetting,
  traced: TracedAttempt | undefined,
  route: RouteRequest,
): AttemptInput {
  // The attempt's trace context replaces the client's: the node's (or site's) spans are its children.
  const trace = traced?.attempt?.headers;
  const choices = call.speed?.choices ?? 1;
  // Every member named, none spread: one literal of one shape for every target (a spread followed
  // by members defines each of them through the runtime, per attempt).
  return {
    pool: call.pool,
    origin: call.origin,
    path: call.path,
    headers: trace === undefined ? call.headers : { ...call.headers, ...trace },
    body: call.body ?? setting.body,
    headersTimeoutMs: call.headersTimeoutMs,
    extraResponseHeaders: call.extraResponseHeaders,
    passOnErrors: call.passOnErrors,
    anyMedia: call.anyMedia,
    errorDialect: setting.rewrite?.errors ?? call.errorDialect,
    usageAsked: call.usageAsked,
    learnAnswerId: call.learnAnswerId,
    rewrite: setting.rewrite,
    firstToken: call.firstToken,
    work: {
      promptTokens: route.promptTokens,
      completionCap: choices * (route.maxTokens ?? route.completionReserveTokens),
      choices,
      rate: call.speed?.rate,
    },
    res: setting.res,
    nodeName: target.label,
    canFailOver,
    startedMs: setting.startedMs,
    totalTimeoutMs: setting.totalTimeoutMs,
    clock: setting.clock,
    maxHeldBodyBytes: setting.maxHeldBodyBytes,
    heldBudget: setting.heldBudget,
  };
}

/** What an attempt's span records of its outcome. */
function attemptEnd(outcome: AttemptOutcome, failedOver: boolean): AttemptEndNote {
  const event = attemptEvent(outcome);
  const usage =
    outcome.kind === 'delivered' || outcome.kind === 'broken' || outcome.kind === 'client_gone' ? outcome.usage : undefined;
  return {
    outcome: event.result,
    status: event.status,
    error: event.error,
    failedOver,
    inputTokens: usage?.promptTokens,
    outputTokens: usage?.completionTokens,
  };
}

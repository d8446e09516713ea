// The one failover loop: try the targets of each source in turn — the local nodes the scheduler
// admits, then the remote sites chooseSite picks — while nothing has reached the client. Every
// attempt goes the same way: prepare the call (a site's is signed), send it with the one attempt
// strategy (forward.ts), release the target, let it conclude (feedback, and what the outcome
// means), then either finish the report or fail over with what was learned (failover-state.ts).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import type { AttemptEndNote, AttemptSpan } from '#src/core/tracing.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import { attemptEvent } from './attempt-feedback.ts';
import { afterFailure, withFailure, type FailoverState } from './failover-state.ts';
import { forwardAttempt } from '../attempt/forward.ts';
import type { HeldBytesBudget } from '../attempt/held-budget.ts';
import type { Finish, RequestObserver } from '../request/request-report.ts';
import type { ResolvedRequest } from '../request/request-model.ts';
import type { RequestSettings } from '../request/request-settings.ts';
import type { Prepared, Target, TargetFailure } from './target.ts';

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
}

export type FailoverEnd = { readonly kind: 'answered' } | { readonly kind: 'unserved'; readonly state: FailoverState };

/** The one answered end (it carries nothing of its request). */
const ANSWERED: FailoverEnd = Object.freeze({ kind: 'answered' });

export async function runFailover(
  sources: readonly TargetSource[],
  setting: AttemptSetting,
  initial: FailoverState,
): Promise<FailoverEnd> {
  let state = initial;
  let attempts = 0;
  // An index loop: no entries() pair per source, and the later sources sliced only when a 5xx asks.
  for (let index = 0; index < sources.length; index += 1) {
    const source = sources[index] as TargetSource;
    for (;;) {
      const asked = source.next(state);
      const next = asked instanceof Promise ? await asked : asked;
      if (next.kind === 'none') {
        if (next.failure !== undefined) state = withFailure(state, next.failure);
        if (next.stop) return { kind: 'unserved', state };
        break;
      }
      const { target } = next;
      setting.onAttempt(target);
      const stateNow = state;
      const canFailOver = (): boolean => mayFailOver(target, sources.slice(index + 1), stateNow);
      attempts += 1;
      const traced: TracedAttempt | undefined =
        setting.observer === undefined ? undefined : { observer: setting.observer, index: attempts };
      let outcome: AttemptOutcome;
      try {
        const sending = attempt(target, canFailOver, setting, traced, stateNow.routeRequest);
        outcome = sending instanceof Promise ? await sending : sending;
      } finally {
        target.release();
      }
      setting.onConcluded?.(target, outcome);
      const verdict = target.conclude(outcome);
      traced?.attempt?.end(attemptEnd(outcome, verdict.next === 'fail_over'));
      if (verdict.next === 'answered') {
        setting.finish(target.label, verdict.status, verdict.figures);
        return ANSWERED;
      }
      state = afterFailure(state, verdict);
    }
  }
  return { kind: 'unserved', state };
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
 * Prepares the call and sends it: the attempt's own promise (forward.ts), no layer around it; the
 * loop releases the target when it is over. `route`: the request as sized (its prompt and answer
 * sizes are charged, estimated, for a node left working by its client).
 */
function attempt(
  target: Target,
  canFailOver: () => boolean,
  setting: AttemptSetting,
  traced: TracedAttempt | undefined,
  route: RouteRequest,
): AttemptOutcome | Promise<AttemptOutcome> {
  const preparing = target.prepare();
  return preparing instanceof Promise
    ? preparing.then((prepared) => send(prepared, target, canFailOver, setting, traced, route))
    : send(preparing, target, canFailOver, setting, traced, route);
}

function send(
  prepared: Prepared,
  target: Target,
  canFailOver: () => boolean,
  setting: AttemptSetting,
  traced: TracedAttempt | undefined,
  route: RouteRequest,
): AttemptOutcome | Promise<AttemptOutcome> {
  if (traced !== undefined) {
    traced.attempt = traced.observer.attempt({
      kind: target.id.kind,
      name: target.id.kind === 'node' ? target.id.name : target.id.id,
      url: target.url,
      index: traced.index,
    });
  }
  if (prepared.kind === 'unsendable') return prepared.outcome;
  // The attempt's trace context replaces the client's: the node's (or site's) spans are its children.
  const trace = traced?.attempt?.headers;
  const { call } = prepared;
  const choices = call.speed?.choices ?? 1;
  // Every member named, none spread: one literal of one shape for every target (a spread followed
  // by members defines each of them through the runtime, per attempt).
  return forwardAttempt({
    pool: call.pool,
    path: call.path,
    headers: trace === undefined ? call.headers : { ...call.headers, ...trace },
    body: call.body ?? setting.body,
    headersTimeoutMs: call.headersTimeoutMs,
    extraResponseHeaders: call.extraResponseHeaders,
    passOnErrors: call.passOnErrors,
    anyMedia: call.anyMedia,
    errorDialect: call.errorDialect,
    usageAsked: call.usageAsked,
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
  });
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

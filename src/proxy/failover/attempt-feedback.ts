// Pure: what one attempt's outcome means. The same outcome gives the same event result for a
// node and a site (one mapping); what differs is how it feeds back: a node's refusal may teach the
// prompt's bounds and its context, or show that its listing is stale; a site's answer clears its
// reachability back-off, and a failure before its first byte starts one. A site's error is never
// repeated in its own words: its figures are kept (a context size), its message is not.

import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import type { AttemptResult } from '../attempt/attempt-result.ts';
import type { OverflowJudgement } from '../request/overflow-refusal.ts';
import { siteLabel, type AnswerFigures, type AttemptVerdict, type TargetId } from './target.ts';
import type { UpstreamErrorMeaning } from '../attempt/upstream-error.ts';

/** How an attempt is reported (`proxy:attempt` for a node, `mesh:forwarded` for a site). */
export interface AttemptEvent {
  /** `contradictory_refusal`: a node's "prompt too long" that the gateway's own figures disprove. */
  readonly result: AttemptResult | 'contradictory_refusal';
  readonly status: number | undefined;
  readonly error: string | undefined;
}

/** The one outcome → event mapping, for nodes and sites alike. */
export function attemptEvent(outcome: AttemptOutcome): AttemptEvent {
  switch (outcome.kind) {
    case 'failed':
      return { result: outcome.result, status: outcome.status, error: outcome.error };
    case 'refused':
      return { result: outcome.refusal.kind, status: outcome.status, error: outcome.error };
    case 'delivered':
      return { result: outcome.status >= 500 ? 'http_5xx' : 'success', status: outcome.status, error: undefined };
    case 'broken':
      return { result: 'stream_error', status: outcome.status, error: outcome.error };
    case 'client_gone':
      return { result: 'client_abort', status: outcome.status, error: undefined };
  }
}

type Answered = Extract<AttemptOutcome, { kind: 'delivered' | 'broken' | 'client_gone' }>;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Something reached the client, or the client left: the request is over, whoever the target was.
 * The figures are one object, members set only when known (absent, not undefined): no spread parts.
 */
function answered(outcome: Answered): AttemptVerdict {
  if (outcome.kind === 'client_gone') {
    const figures: Mutable<AnswerFigures> = { clientAborted: true };
    if (outcome.usage !== undefined) figures.usage = outcome.usage;
    return { next: 'answered', status: 499, figures };
  }
  const figures: Mutable<AnswerFigures> = { firstByteMs: outcome.firstByteMs };
  if (outcome.kind === 'broken') figures.brokenError = outcome.error;
  if (outcome.usage !== undefined) figures.usage = outcome.usage;
  const tokens = outcome.tokens;
  if (tokens !== undefined) {
    figures.firstTokenMs = tokens.firstTokenMs;
    figures.interTokenMs = tokens.interTokenMs;
  }
  return { next: 'answered', status: outcome.status, figures };
}

export interface NodeFeedback {
  readonly verdict: AttemptVerdict;
  readonly event: AttemptEvent;
  /** The context to remember for this node and model alone (overflow-refusal.ts). */
  readonly learnCtx: number | undefined;
  /** The node said it does not have a model its listing showed: re-list it. */
  readonly modelVanished: boolean;
  /** The node has no such endpoint (a route-level 404): what it said, to remember for it. */
  readonly lacksEndpoint?: string | undefined;
}

type Overflow = Extract<UpstreamErrorMeaning, { kind: 'context_overflow' }>;

/**
 * A node's attempt. `judgeOverflow` (pure: overflow-refusal.ts's judgement of that node's refusal)
 * is asked only for a "prompt too long" refusal.
 */
export function judgeNodeAttempt(
  node: string,
  outcome: AttemptOutcome,
  judgeOverflow: (refusal: Overflow) => OverflowJudgement,
): NodeFeedback {
  const event = attemptEvent(outcome);
  const target: TargetId = { kind: 'node', name: node };
  switch (outcome.kind) {
    case 'failed':
      return {
        verdict: {
          next: 'fail_over',
          failure: { target, code: 'failed', detail: outcome.error },
          loadTimedOut: outcome.result === 'load_timeout',
        },
        event,
        learnCtx: undefined,
        modelVanished: false,
      };
    case 'refused': {
      const failure = { target, code: 'refused', detail: outcome.error } as const;
      const meaning = outcome.refusal;
      if (meaning.kind === 'model_not_found') {
        return {
          verdict: { next: 'fail_over', failure, refusal: meaning, loadTimedOut: false },
          event,
          learnCtx: undefined,
          modelVanished: true,
        };
      }
      if (meaning.kind === 'endpoint_missing') {
        return {
          verdict: { next: 'fail_over', failure: { ...failure, lacksEndpoint: true }, refusal: meaning, loadTimedOut: false },
          event,
          learnCtx: undefined,
          modelVanished: false,
          lacksEndpoint: meaning.message,
        };
      }
      const overflow = judgeOverflow(meaning);
      // A refusal the gateway's own figures disprove counts against the node like a failed request,
      // and is not repeated to the client; its bounds and stated context still apply as judged.
      const believed = overflow.contradiction === undefined;
      return {
        verdict: {
          next: 'fail_over',
          failure,
          refusal: believed ? meaning : undefined,
          loadTimedOut: false,
          bounds: { promptTokens: overflow.promptTokens, minPromptTokens: overflow.minPromptTokens },
        },
        event: believed
          ? event
          : { ...event, result: 'contradictory_refusal', error: `${overflow.contradiction}: ${outcome.error}` },
        learnCtx: overflow.learnCtx,
        modelVanished: false,
      };
    }
    default:
      return { verdict: answered(outcome), event, learnCtx: undefined, modelVanished: false };
  }
}

export interface SiteFeedback {
  readonly verdict: AttemptVerdict;
  readonly event: AttemptEvent;
  /**
   * true: the site answered (any back-off ends); false: it failed before answering (it backs off,
   * with `event.error`); undefined: no news of it (the client left first).
   */
  readonly reachable: boolean | undefined;
}

/** A forward to a remote site. None of its error answers reached the client (passOnErrors false). */
export function judgeSiteAttempt(site: string, outcome: AttemptOutcome): SiteFeedback {
  const event = attemptEvent(outcome);
  const target: TargetId = { kind: 'site', id: site };
  switch (outcome.kind) {
    case 'failed':
      // A coded 3xx-5xx is the site's refusal of this request (it is reachable); anything else —
      // no connection, a reset, a timeout, a bare 5xx — is a site (or a proxy before it) in trouble.
      if (outcome.result === 'http_error')
        return {
          verdict: { next: 'fail_over', failure: { target, code: 'refused', detail: outcome.error } },
          event,
          reachable: true,
        };
      return {
        verdict: { next: 'fail_over', failure: { target, code: 'unreachable', detail: outcome.error } },
        event,
        reachable: false,
      };
    case 'refused': {
      const detail = `answered ${outcome.status} ${outcome.refusal.kind}`;
      // Its figures are kept (a context size), its words are not (they name its nodes).
      const refusal = { ...outcome.refusal, message: `${siteLabel(site)} ${detail}` };
      return { verdict: { next: 'fail_over', failure: { target, code: 'refused', detail }, refusal }, event, reachable: true };
    }
    case 'client_gone':
      return { verdict: answered(outcome), event, reachable: undefined };
    default:
      // Only a 2xx is delivered from a site; a broken stream had begun to answer: reachable either way.
      return { verdict: answered(outcome), event, reachable: true };
  }
}

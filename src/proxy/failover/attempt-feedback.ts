// Pure: what attempts' outcomes mean, one at a time and folded over a request.
//
// One outcome: the same outcome gives the same event result for a node and a site (one mapping);
// what differs is how it feeds back: a node's refusal may teach the prompt's bounds and its
// context, or show that its listing is stale; a site's answer clears its reachability back-off, and
// a failure before its first byte starts one. A site's error is never repeated in its own words:
// its figures are kept (a context size), its message is not.
//
// What a result says of a node's own health (passive ejection): a refusal the node explained
// (overflow, unknown model) proves it alive, unless the gateway's own figures disprove it
// (contradictory_refusal: counted like a failure); a client leaving proves nothing.
//
// A node's speed, between the registry that learns it (capacity/learned-figures.ts) and the
// attempts that use and teach it: the rate an attempt charges a client that left by (usable now,
// or none), and what a delivered answer teaches (docs/tenants.md, "What is charged").
//
// Folded (the failover state): what the failover loop has learned about one request so far — the
// targets tried (nodes in the route request, sites beside it), why each failed (one list, nodes and
// sites alike), the last refusal the answer may repeat, and the prompt's bounds as node refusals
// narrowed them.

import { tokensPerSecond, usableDecode, type DecodeSample } from '#src/capacity/index.ts';
import type { NodeView, UpstreamVerdict } from '#src/nodes/index.ts';
import type { RouteRequest, SiteExclusion } from '#src/routing/index.ts';
import type { KnownRate } from '../attempt/answer-usage.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import type { AttemptResult } from '../attempt/attempt-result.ts';
import type { UpstreamErrorMeaning } from '../attempt/upstream-error.ts';
import type { OverflowJudgement } from '../request/overflow-refusal.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import { siteLabel, type AnswerFigures, type AttemptVerdict, type TargetFailure, type TargetId } from './target.ts';

// ---- one outcome -------------------------------------------------------------------------------

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
  switch (outcome.kind) {
    case 'failed': {
      const target: TargetId = { kind: 'node', name: node };
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
    }
    case 'refused': {
      const target: TargetId = { kind: 'node', name: node };
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

// ---- what a result says of the node's health -----------------------------------------------------

export /** Which attempt results say something about the node's own health. */
function upstreamVerdict(result: ProxyEvents['proxy:attempt']['result']): UpstreamVerdict {
  switch (result) {
    case 'success':
    case 'context_overflow':
    case 'model_not_found':
    case 'endpoint_missing':
      return 'success';
    case 'http_5xx':
    case 'connect_error':
    case 'reset':
    case 'timeout':
    case 'stream_error':
    case 'invalid_body':
    case 'contradictory_refusal':
      return 'failure';
    case 'client_abort':
    case 'interim_response':
    // Only remote sites answer so (their own refusals, never passed on): nothing about a node.
    case 'http_error':
    // The model failed to load, not the node: the scheduler holds that model off the node instead.
    case 'load_timeout':
      return 'neutral';
  }
}

// ---- the failover state: the outcomes of one request, folded ----------------------------------------

export interface FailoverState {
  /** What local routing is asked: the nodes tried, and the prompt's bounds for the remaining attempts. */
  readonly routeRequest: RouteRequest;
  /** Sites tried for this request (failover never returns to one). */
  readonly triedSites: ReadonlySet<string>;
  /** Every target tried, in order, with why it did not serve. */
  readonly failures: readonly TargetFailure[];
  /** The last refusal worth repeating (context overflow, unknown model). */
  readonly lastRefusal: UpstreamErrorMeaning | undefined;
  /** The last node attempt was a load that timed out (routing.load_timeout). */
  readonly loadTimedOut: boolean;
}

/** No failure yet: one frozen list for every request (a failure makes a new list: afterFailure). */
const NO_FAILURES: readonly TargetFailure[] = Object.freeze([]);

/** No site tried yet: one empty set for every request, never added to (a site tried makes a new set: afterFailure). */
const NO_SITES: ReadonlySet<string> = new Set();

export function startFailover(routeRequest: RouteRequest): FailoverState {
  return { routeRequest, triedSites: NO_SITES, failures: NO_FAILURES, lastRefusal: undefined, loadTimedOut: false };
}

type FailOver = Extract<AttemptVerdict, { next: 'fail_over' }>;

/** The state after an attempt that failed over: its target is tried, its failure listed, what it taught applied. */
export function afterFailure(state: FailoverState, verdict: FailOver): FailoverState {
  const { target } = verdict.failure;
  let routeRequest = state.routeRequest;
  if (verdict.bounds !== undefined) routeRequest = { ...routeRequest, ...verdict.bounds };
  if (target.kind === 'node') routeRequest = alsoTried(routeRequest, target.name);
  return {
    routeRequest,
    triedSites: target.kind === 'site' ? new Set(state.triedSites).add(target.id) : state.triedSites,
    failures: [...state.failures, verdict.failure],
    lastRefusal: verdict.refusal ?? state.lastRefusal,
    loadTimedOut: verdict.loadTimedOut ?? state.loadTimedOut,
  };
}

/** A target chosen but never sent (a site while this site's key is not loaded): listed, not tried. */
export function withFailure(state: FailoverState, failure: TargetFailure): FailoverState {
  return { ...state, failures: [...state.failures, failure] };
}

/**
 * The nodes that answered the request with a route-level 404 (they have no such endpoint), when
 * every target tried did: the failover ended for that alone. undefined when none was tried, or
 * when any other failure (a site's, a node's error or refusal of another kind) is among them.
 */
export function endpointLackers(state: FailoverState): ReadonlySet<string> | undefined {
  const { failures } = state;
  if (failures.length === 0) return undefined;
  const nodes = new Set<string>();
  for (const failure of failures) {
    if (failure.target.kind !== 'node' || failure.lacksEndpoint !== true) return undefined;
    nodes.add(failure.target.name);
  }
  return nodes;
}

/** The same request with `node` tried too. */
export function alsoTried(request: RouteRequest, node: string): RouteRequest {
  return { ...request, triedNodes: new Set(request.triedNodes).add(node) };
}

/**
 * The site exclusions an answer lists: a site tried shows its real failure (`unreachable` or
 * `refused`, with the detail) in place of `already_tried`, as a node's failure is named by what it said.
 */
export function siteExclusionsAfter(excluded: readonly SiteExclusion[], failures: readonly TargetFailure[]): SiteExclusion[] {
  const tried = new Map<string, SiteExclusion>();
  for (const f of failures) {
    if (f.target.kind !== 'site' || (f.code !== 'refused' && f.code !== 'unreachable')) continue;
    tried.set(f.target.id, { site: f.target.id, code: f.code, detail: f.detail });
  }
  return excluded.map((e) => (e.code === 'already_tried' ? (tried.get(e.site) ?? e) : e));
}

/** Pure: the node's learned speed for `model` if it may be used at `nowMs`; undefined = none yet (the prompt alone is charged). */
export function knownRate(node: Pick<NodeView, 'decodeRates'>, model: string, nowMs: number): KnownRate | undefined {
  const rate = usableDecode(node.decodeRates?.[model], nowMs);
  return rate === undefined ? undefined : { tokensPerSecond: tokensPerSecond(rate), firstTokenMs: rate.firstTokenMs };
}

/**
 * Pure: what an attempt's outcome teaches of the node's speed: a 200 answer delivered whole, for a
 * request that asked for one answer (several are generated side by side, and their chunks counted
 * together); undefined = nothing.
 */
export function speedLesson(outcome: AttemptOutcome, choices: number): DecodeSample | undefined {
  if (outcome.kind !== 'delivered' || outcome.status !== 200 || choices !== 1) return undefined;
  return outcome.decode;
}

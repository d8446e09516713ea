// Pure: what the failover loop has learned about one request so far — the targets tried (nodes in
// the route request, sites beside it), why each failed (one list, nodes and sites alike), the last
// refusal the answer may repeat, and the prompt's bounds as node refusals narrowed them.

import type { RouteRequest, SiteExclusion } from '#src/routing/index.ts';
import type { AttemptVerdict, TargetFailure } from './target.ts';
import type { UpstreamErrorMeaning } from '../attempt/upstream-error.ts';

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

export function startFailover(routeRequest: RouteRequest): FailoverState {
  return { routeRequest, triedSites: new Set(), failures: NO_FAILURES, lastRefusal: undefined, loadTimedOut: false };
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

// The plug point that picks one node among the candidates the filters kept. Every policy is
// registered by name (./index.ts) and passes one shared contract test
// (test/contract/selection-policy.contract.test.ts).
//
// What a policy reads of a request besides its model and size are its request features: each
// policy declares its features (`SelectionPolicy.reads`, and the same list in the registry,
// POLICIES), so the request path computes only what its policy reads and never names a policy
// (./index.ts, requestFeaturesFor). Reading a feature parses the request body; a request whose
// policy reads none of them pays nothing.

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { RouteRequest } from '../route-request.ts';
import type { SessionTable } from './session-table.ts';

/** Every feature a policy may read; each is a string field of RouteRequest. */
export const REQUEST_FEATURES = ['affinityKey', 'promptPrefix', 'sessionKey', 'previousResponseId'] as const;
export type RequestFeature = (typeof REQUEST_FEATURES)[number];

/** The features computed for one request: only those its policy reads are present. */
export type RequestFeatures = Pick<RouteRequest, RequestFeature>;

/**
 * How the request path reads each feature from the request (headers and body, src/proxy/); called
 * at most once each, and only for a feature the policy reads. Undefined = the request has none.
 */
export type FeatureReaders = { readonly [F in RequestFeature]: () => string | undefined };

/** One policy's pick, with why: the reason goes to the `x-switchyard-route` header and explain. */
export interface PolicyChoice {
  readonly node: NodeView;
  /** Short, ASCII, no `;` or newline: it travels in a response header. */
  readonly reason: string;
  /**
   * Each candidate's score, aligned with the candidates (lower is better); for explain and the
   * route summary. A policy that does not score every candidate may compute it when first read
   * (read it in the decision's tick: it reflects the snapshot until the policy's next choice).
   */
  readonly scores: readonly number[];
  /** One candidate's score, as `scores[i]`, without materialising them all (policies whose scores are lazy). */
  readonly scoreAt?: (index: number) => number | undefined;
  /** Per candidate, aligned: what the policy could not use for it (e.g. stale load figures). */
  readonly notes?: readonly (string | undefined)[];
}

export interface SelectionPolicy {
  readonly name: string;
  /**
   * The request features `choose` reads (above); the request path computes only
   * these, so a feature left out here is absent from every request this policy sees.
   */
  readonly reads: readonly RequestFeature[];
  /**
   * Receives only admissible candidates; never does I/O; never mutates its input; undefined only
   * when there is no candidate. Work is at most O(candidates) (the route index hands out the same
   * array while nothing routing reads changes, so a policy may keep state per array).
   */
  choose(req: RouteRequest, candidates: readonly NodeView[], snapshot: RoutingSnapshot): PolicyChoice | undefined;
  /**
   * The choice `choose` would make, without recording anything (for /admin/explain). Absent: the
   * policy's state is only a rotation, and a fresh instance's `choose` explains it well enough.
   */
  explain?(req: RouteRequest, candidates: readonly NodeView[], snapshot: RoutingSnapshot): PolicyChoice | undefined;
}

export interface CacheAwareSettings {
  /** Route by cache when the best match covers more than this fraction of the prompt. */
  readonly threshold: number;
  readonly balanceAbs: number;
  readonly balanceRel: number;
  /** Characters the prefix tree may store across all nodes. */
  readonly maxTreeChars: number;
  /** Characters of each prompt considered. */
  readonly maxPromptChars: number;
}

/** What a policy may draw on besides the request and the snapshot: injected, so tests are deterministic. */
export interface PolicyContext {
  /** Uniform in [0, 1). */
  readonly random: () => number;
  /** Load figures older than this (ms) are not trusted (`[load] stale_after`, read per decision). */
  readonly loadStaleAfterMs: () => number;
  /** The `affinity` load bound's slack: a node holds at most (1 + epsilon) x the average in flight. */
  readonly affinityEpsilon: () => number;
  /** Where each session's last turn went and which node produced each answer: one table per gateway (sessions.ts). */
  readonly sessions: SessionTable;
  /** `[routing] session_ttl`: how long a session (or an answer's id) is remembered after its last use, ms. */
  readonly sessionTtlMs: () => number;
  /** `cache-aware`'s thresholds and bounds (the tree's size is read once, when the policy is built). */
  readonly cacheAware: () => CacheAwareSettings;
}

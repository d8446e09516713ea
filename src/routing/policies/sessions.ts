// Sessions keep their node (and its KV cache): a layer in front of the load-balancing policies
// (least-in-flight, the default, least-loaded, round-robin, weighted). A request that names a
// session (`req.sessionKey`: what agents send, read by proxy/request/affinity-key.ts) goes to the
// node its session's last turn went to, remembered per tenant (session-table.ts); a new session
// is placed by rendezvous hashing, so replicas agree on it without sharing state. Bounded loads,
// after consistent hashing with bounded loads: a node is saturated for a session when its requests
// in flight reach ceil((1 + affinity_epsilon) x the candidates' average, this request included),
// and then the session moves to the next node by hash. It moves too when its node is gone (down,
// ejected, full, no longer serving the model, or it failed this very request), and stays on the
// node it moved to: that node now holds the session's longest prefix, the old one at most an older
// one (or nothing, after a restart). The reason says which, in `x-switchyard-route`.
// `previous_response_id` goes to the node that produced that answer, load or not (only it may
// hold the stored response). A request without either is the inner policy's, untouched.

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import { capacityVerdict } from '../filters/has-capacity.ts';
import { sessionKeyParts, type RouteRequest } from '../route-request.ts';
import { loadBound, rendezvous, specHasher } from './affinity.ts';
import { inFlights } from './least-in-flight.ts';
import type { RequestFeature } from './selection-policy.ts';
import type { PolicyChoice, PolicyContext, SelectionPolicy } from './selection-policy.ts';
import { ownerTtlMs } from './owned-ids.ts';
import { sessionHash, sessionSite } from './session-table.ts';

/** The features the session layer reads besides its inner policy's. */
export const SESSION_READS: readonly RequestFeature[] = Object.freeze(['sessionKey', 'previousResponseId']);

/** The reads of `inner` with the session layer in front. */
export function withSessionReads(inner: readonly RequestFeature[]): readonly RequestFeature[] {
  return Object.freeze([...inner, ...SESSION_READS]);
}

/** Where a response id is remembered: apart from session keys of the same text. */
export function responseHash(tenant: string, responseId: string): number {
  return sessionHash(tenant, `response\n${responseId}`);
}

export function tenantOf(req: Pick<RouteRequest, 'tenant'>): string {
  return req.tenant?.name ?? 'default';
}

/** What the session layer decided, and what to remember. */
export interface SessionDecision {
  readonly choice: PolicyChoice;
  /** `kept` on its node, `moved` off it (saturated or gone), `placed` (new or forgotten), or sent to the `previous` answer's node. */
  readonly verdict: 'kept' | 'moved' | 'placed' | 'previous';
  /** The session's table key (undefined: only a previous response id). */
  readonly sessionKey: number | undefined;
  /** The node the session was on, when it left it. */
  readonly from?: string;
}

/** Pure: why `name`, the node a session was on, is not among the candidates now. */
export function whyNotCandidate(name: string, req: RouteRequest, snapshot: RoutingSnapshot): string {
  // A session on another site ([mesh]) is routed here only once that site did not take its turn.
  if (sessionSite(name) !== undefined) return req.sessionSiteLeft ?? 'no such site here';
  if (req.triedNodes.has(name)) return 'failed this request';
  const view = snapshot.nodes.find((n) => n.spec.name === name);
  if (view === undefined) return 'left the fleet';
  const status = view.health.status;
  if (status === 'dead') return 'down';
  if (status === 'asleep') return 'asleep';
  if (view.ejectedUntil !== undefined && view.ejectedUntil > snapshot.now) return 'ejected';
  if (status === 'degraded') return 'degraded';
  if (!view.modelsById.has(req.model)) return 'no longer serves the model';
  const full = capacityVerdict(req, view, snapshot);
  if (full !== undefined) return `full (${full.code})`;
  return 'not a candidate';
}

/**
 * Pure apart from reading the table: the session layer's decision for a request that names a
 * session or a previous response; undefined = it names neither, or only a response not remembered.
 */
export function decideSession(
  req: RouteRequest,
  candidates: readonly NodeView[],
  snapshot: RoutingSnapshot,
  context: PolicyContext,
  nameHash: ReturnType<typeof specHasher>,
): SessionDecision | undefined {
  const tenant = tenantOf(req);
  const ttl = context.sessionTtlMs();
  const key = req.sessionKey === undefined ? undefined : sessionKeyParts(req.sessionKey);
  const tableKey = key === undefined ? undefined : sessionHash(tenant, key.value);
  const loads = inFlights(candidates, snapshot);
  let previousGone = '';
  if (req.previousResponseId !== undefined) {
    const producer = context.sessions.get(responseHash(tenant, req.previousResponseId), snapshot.now, ttl);
    if (producer !== undefined) {
      const at = candidates.findIndex((n) => n.spec.name === producer);
      const node = candidates[at];
      if (node !== undefined) {
        const scores = loads.map((load, i) => (i === at ? -1 : load));
        return { choice: { node, reason: "previous response's node", scores }, verdict: 'previous', sessionKey: tableKey };
      }
      previousGone = `previous response's node ${producer} ${whyNotCandidate(producer, req, snapshot)}, `;
    }
  }
  if (key === undefined || tableKey === undefined) return undefined;
  const bound = loadBound(
    loads.reduce((a, b) => a + b, 0),
    candidates.length,
    context.affinityEpsilon(),
  );
  const remembered = context.sessions.get(tableKey, snapshot.now, ttl);
  const at = remembered === undefined ? -1 : candidates.findIndex((n) => n.spec.name === remembered);
  const picked = rendezvous(Math.floor(tableKey / 0x200000), candidates, loads, bound, nameHash);
  const source = key.source;
  const keptNode = candidates[at];
  if (keptNode !== undefined && (loads[at] ?? 0) < bound) {
    const scores = picked.scores.map((score, i) => (i === at ? -2 : score));
    const reason = `${previousGone}session kept on its node (${source}, ${loads[at] ?? 0} in flight, bound ${bound})`;
    return { choice: { node: keptNode, reason, scores }, verdict: 'kept', sessionKey: tableKey };
  }
  const node = candidates[picked.best];
  if (node === undefined) return undefined;
  if (remembered !== undefined && remembered !== node.spec.name) {
    const why =
      keptNode !== undefined
        ? `saturated (${loads[at] ?? 0} in flight, bound ${bound})`
        : whyNotCandidate(remembered, req, snapshot);
    const reason = `${previousGone}session moved from ${remembered}: ${why} (${source})`;
    return { choice: { node, reason, scores: picked.scores }, verdict: 'moved', sessionKey: tableKey, from: remembered };
  }
  const home = candidates[picked.home];
  const reason =
    picked.best === picked.home || home === undefined
      ? `${previousGone}session placed by hash (${source}, bound ${bound})`
      : `${previousGone}session placed by hash, ${home.spec.name} saturated (bound ${bound}) (${source})`;
  return { choice: { node, reason, scores: picked.scores }, verdict: 'placed', sessionKey: tableKey };
}

/** A policy with sessions kept in front of it, and the policy behind it. */
export interface SessionLayer extends SelectionPolicy {
  /** What a request naming neither a session nor a previous answer is chosen by (the layer hands it over untouched). */
  readonly inner: SelectionPolicy;
}

/**
 * `inner` with sessions kept in front of it (the module comment). `create` builds the inner
 * policy; explain asks a fresh one when it has no `explain` of its own (its state is a rotation).
 */
export function keepingSessions(create: () => SelectionPolicy, context: PolicyContext): SessionLayer {
  const inner = create();
  const nameHash = specHasher();
  return {
    name: inner.name,
    inner,
    reads: withSessionReads(inner.reads),
    choose(req, candidates, snapshot) {
      if ((req.sessionKey === undefined && req.previousResponseId === undefined) || candidates.length === 0)
        return inner.choose(req, candidates, snapshot);
      const decided = decideSession(req, candidates, snapshot, context, nameHash);
      if (decided === undefined) return inner.choose(req, candidates, snapshot);
      if (decided.sessionKey !== undefined) context.sessions.set(decided.sessionKey, decided.choice.node.spec.name, snapshot.now);
      return decided.choice;
    },
    explain(req, candidates, snapshot) {
      const decided =
        req.sessionKey === undefined && req.previousResponseId === undefined
          ? undefined
          : decideSession(req, candidates, snapshot, context, nameHash);
      if (decided !== undefined) return decided.choice;
      return inner.explain !== undefined ? inner.explain(req, candidates, snapshot) : create().choose(req, candidates, snapshot);
    },
  };
}

/** What a [cluster] replica or explain reads: the node remembered for a session key, if any. */
export function rememberedNode(
  req: Pick<RouteRequest, 'tenant' | 'sessionKey'>,
  context: Pick<PolicyContext, 'sessions' | 'sessionTtlMs'>,
  now: number,
): string | undefined {
  if (req.sessionKey === undefined) return undefined;
  return context.sessions.get(sessionHash(tenantOf(req), sessionKeyParts(req.sessionKey).value), now, context.sessionTtlMs());
}

/** The table keys a request reads — its session's, its previous response's —: what [cluster] reads in from the store. */
export function sessionTableKeys(req: Pick<RouteRequest, 'tenant' | 'sessionKey' | 'previousResponseId'>): {
  readonly sessions: readonly number[];
  readonly answers: readonly number[];
} {
  const tenant = tenantOf(req);
  return {
    sessions: req.sessionKey === undefined ? [] : [sessionHash(tenant, sessionKeyParts(req.sessionKey).value)],
    answers: req.previousResponseId === undefined ? [] : [responseHash(tenant, req.previousResponseId)],
  };
}

/** Remembers `target` (a node's name, or a site's siteSessionTarget) for the request's session: a remote site served its turn. */
export function keepSessionOn(
  req: Pick<RouteRequest, 'tenant' | 'sessionKey'>,
  context: Pick<PolicyContext, 'sessions'>,
  target: string,
  now: number,
): void {
  if (req.sessionKey === undefined) return;
  context.sessions.set(sessionHash(tenantOf(req), sessionKeyParts(req.sessionKey).value), target, now);
}

/**
 * The one memory of owners, read: the node that produced the answer `answerId` (a Responses
 * `resp_…`, a chat completion's `chatcmpl-…`) or holds the stream of a conversation
 * (owned-ids.ts), for `tenant`, if remembered within its TTL. Another tenant's id reads as unknown.
 * [cluster]: one this replica does not hold is read from the store first (a promise then; a store
 * that fails reads as unknown).
 */
export function answerOwner(
  context: Pick<PolicyContext, 'sessions' | 'sessionTtlMs'>,
  tenant: string,
  answerId: string,
  now: number,
): string | undefined | Promise<string | undefined> {
  const key = responseHash(tenant, answerId);
  const ttl = ownerTtlMs(answerId, context.sessionTtlMs());
  const held = context.sessions.get(key, now, ttl);
  if (held !== undefined) return held;
  const reading = context.sessions.readIn([], [key], now);
  return reading?.then(() => context.sessions.get(key, now, ttl));
}

/** Learns which node produced an answer (its id, e.g. a Responses `resp_…`) or holds a conversation's stream, kept for its TTL. */
export function learnResponse(
  context: Pick<PolicyContext, 'sessions' | 'sessionTtlMs'>,
  tenant: string,
  responseId: string,
  node: string,
  now: number,
): void {
  context.sessions.set(responseHash(tenant, responseId), node, now, ownerTtlMs(responseId, context.sessionTtlMs()));
}

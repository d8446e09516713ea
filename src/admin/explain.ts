// Pure: GET /admin/explain — for one model and prompt size, every node with the routing verdict
// and its reason, from the same filters the request path runs (no separate logic to drift), and
// who waits in the model's queue by priority class and tenant.

import { fleetRatio } from '#src/capacity/index.ts';
import type { TenantPriority } from '#src/core/tenant-class.ts';
import type { ModelQueueReport, QueueHolder } from '#src/scheduler/index.ts';
import type { RoutingSnapshot } from '#src/nodes/index.ts';
import {
  sessionSite,
  siteSessionVerdict,
  chooseSite,
  classifyUnroutable,
  filterCandidates,
  mightFitLater,
  type Filter,
  type PolicySet,
  type PrefixHitFigures,
  type RemoteSiteView,
  type RouteRequest,
  type SiteRequest,
  sessionHash,
  sessionKeyParts,
} from '#src/routing/index.ts';

export interface ExplainNode {
  readonly node: string;
  /** Where the node came from: `static` (the [[nodes]] list) or its [[node_sources]] name. */
  readonly source: string;
  readonly verdict: 'eligible' | 'excluded';
  readonly reason?: string;
  readonly filter?: string;
  readonly detail?: string;
  /** The selection policy's score for an eligible node (lower is better). */
  readonly score?: number;
  /** What the policy could not use for this node, e.g. "load metrics stale (31s old)". */
  readonly note?: string;
  /** A llama-server router: who holds the requests waiting for its model switches, and why (as /admin/hosts says). */
  readonly switch_queue?: { readonly holder: QueueHolder['holder']; readonly reason: string };
}

/** What the selection policy would pick among the eligible nodes, and why. */
export interface ExplainChoice {
  readonly policy: string;
  readonly node: string;
  readonly reason: string;
}

/**
 * The request's session (docs/routing.md, "Sessions"): where its key was read, a hash of it (never
 * the value), the node its last turn went to, and whether this turn is kept there, moved off it
 * (the choice's reason says why) or placed by hash.
 */
export interface ExplainSession {
  readonly source: string;
  readonly key_hash: string;
  readonly node: string | null;
  readonly verdict: 'kept' | 'moved' | 'placed';
}

/** A remote site's verdict ([mesh] only), from the same selection the request path runs. */
export interface ExplainSite {
  readonly site: string;
  readonly verdict: 'eligible' | 'excluded';
  readonly reason?: string;
  readonly detail?: string;
  /** The load its record states (lower is better), for an eligible site. */
  readonly load?: number;
}

/** What explain needs of the mesh: the remote sites (this one left out) and those in back-off. */
export interface ExplainRemote {
  sites(): readonly RemoteSiteView[];
  unreachable(): ReadonlyMap<string, string>;
}

/** The remote sites as forwarding sees them ([mesh] only: a link): this site left out, back-offs included. */
export function explainRemote(
  link: { readonly site: string; readonly source: { sites(): readonly RemoteSiteView[] } } | undefined,
  unreachable: () => ReadonlyMap<string, string>,
): ExplainRemote | undefined {
  if (link === undefined) return undefined;
  return { sites: () => link.source.sites().filter((s) => s.id !== link.site), unreachable };
}

export interface Explanation {
  readonly model: string;
  readonly prompt_tokens: number | null;
  /** The prompt's proven lower bound, when it is below `prompt_tokens` (only a context below it refuses). */
  readonly prompt_tokens_at_least: number | null;
  /** The fleet's learned bytes per prompt token for the model (the widest envelope in use), null = none yet. */
  readonly bytes_per_token: { readonly low: number; readonly high: number; readonly samples: number } | null;
  readonly max_tokens: number | null;
  /** What the request path would do: route to one of the eligible nodes, queue, forward to a remote site, or answer 400/503 (`blocked_by_pinned_models`: a 503 that invites no retry). */
  readonly outcome: 'route' | 'queue' | 'forward' | 'context_length_exceeded' | 'blocked_by_pinned_models' | 'no_node_available';
  readonly choice: ExplainChoice | null;
  /** cache-aware: the estimated share of prompt characters routed to a node that held them already; null before any. */
  readonly prefix_hit_rate: number | null;
  /** The request's session, when it names one (and sessions are kept for its policy). */
  readonly session?: ExplainSession;
  readonly nodes: readonly ExplainNode[];
  /** [mesh] only: every pinned remote site with its verdict, and the one a forward would go to. */
  readonly sites?: readonly ExplainSite[];
  readonly site_choice?: string | null;
  /** The model's queue (absent when the caller has no scheduler to ask). */
  readonly queue?: ExplainQueue;
}

/** Who waits in the model's queue now: by the tenants' priority classes and by tenant. */
export interface ExplainQueue {
  readonly depth: number;
  readonly by_class: Readonly<Record<TenantPriority, number>>;
  readonly by_tenant: Readonly<Record<string, number>>;
}

/** The policies' side of an explanation: their choice, recording nothing, and cache-aware's hits. */
export type ExplainPolicies = Pick<PolicySet, 'explain' | 'prefixHits'> & Partial<Pick<PolicySet, 'sessionNode'>>;

/** The session part of an explanation: read before the policy's explain, which may forget a stale entry. */
export function explainSession(
  req: RouteRequest,
  remembered: string | undefined,
  chosen: string | undefined,
): ExplainSession | undefined {
  if (req.sessionKey === undefined) return undefined;
  const { source, value } = sessionKeyParts(req.sessionKey);
  const verdict = remembered === undefined ? 'placed' : remembered === chosen ? 'kept' : 'moved';
  return {
    source,
    key_hash: sessionHash(req.tenant?.name ?? 'default', value)
      .toString(16)
      .padStart(14, '0'),
    node: remembered ?? null,
    verdict,
  };
}

export function hitRate(hits: PrefixHitFigures): number | null {
  return hits.promptChars === 0 ? null : Math.round((hits.matchedChars / hits.promptChars) * 1000) / 1000;
}

/** The queue part of an explanation, from the scheduler's report of the model (undefined = nobody waits). */
export function explainQueue(report: ModelQueueReport | undefined): ExplainQueue {
  const by_class = report?.byClass ?? { interactive: 0, standard: 0, batch: 0 };
  const by_tenant = report?.byTenant ?? {};
  return {
    depth: by_class.interactive + by_class.standard + by_class.batch,
    by_class: { ...by_class },
    by_tenant: { ...by_tenant },
  };
}

/** `siteScope`: the sites a tenant's requests may be forwarded to (`[[tenants]] sites`); undefined = every one. */
export function explainRouting(
  req: RouteRequest,
  snapshot: RoutingSnapshot,
  filters: readonly Filter[],
  policies: ExplainPolicies,
  remote?: ExplainRemote,
  siteScope?: readonly string[],
  queue?: ExplainQueue,
  switchQueues?: ReadonlyMap<string, QueueHolder>,
): Explanation {
  const { kept, excluded } = filterCandidates(req, snapshot, filters);
  const byNode = new Map(excluded.map((e) => [e.node, e]));
  const remembered = policies.sessionNode?.(req, snapshot.now);
  // [mesh]: a session another site served goes back there while it can take it; else the nodes say why it left.
  const onSite = remembered === undefined || remote === undefined ? undefined : sessionSite(remembered);
  const siteVerdict =
    onSite === undefined || remote === undefined
      ? undefined
      : siteSessionVerdict(siteRequestOf(req, siteScope), onSite, remote.sites(), remote.unreachable());
  const picked = policies.explain(
    siteVerdict?.kind === 'left' ? { ...req, sessionSiteLeft: siteVerdict.why } : req,
    kept,
    snapshot,
  );
  const session = explainSession(req, remembered, siteVerdict?.kind === 'kept' ? remembered : picked?.node.spec.name);
  const scores = new Map(kept.map((view, i) => [view.spec.name, { score: picked?.scores[i], note: picked?.notes?.[i] }]));
  const choice = picked === undefined ? null : { policy: req.policy, node: picked.node.spec.name, reason: picked.reason };
  const nodes = snapshot.nodes.map((view): ExplainNode => {
    const exclusion = byNode.get(view.spec.name);
    const held = switchQueues?.get(view.spec.name);
    const switchQueue = held === undefined ? {} : { switch_queue: { holder: held.holder, reason: held.reason } };
    if (exclusion === undefined) {
      const { score, note } = scores.get(view.spec.name) ?? {};
      return {
        node: view.spec.name,
        source: view.spec.source ?? 'static',
        verdict: 'eligible',
        ...(score === undefined ? {} : { score }),
        ...(note === undefined ? {} : { note }),
        ...switchQueue,
      };
    }
    return {
      node: view.spec.name,
      source: view.spec.source ?? 'static',
      verdict: 'excluded',
      reason: exclusion.code,
      filter: exclusion.filter,
      detail: exclusion.detail,
      ...switchQueue,
    };
  });
  const kind = kept.length > 0 ? undefined : classifyUnroutable(excluded, mightFitLater(snapshot, req));
  const outcome: Explanation['outcome'] =
    kind === undefined
      ? 'route'
      : kind === 'busy'
        ? 'queue'
        : kind === 'too_large'
          ? 'context_length_exceeded'
          : kind === 'blocked'
            ? 'blocked_by_pinned_models'
            : 'no_node_available';
  const prefix_hit_rate = hitRate(policies.prefixHits());
  const ratio = fleetRatio(snapshot.nodes, req.model, snapshot.now);
  const atLeast = req.minPromptTokens !== undefined && req.minPromptTokens < (req.promptTokens ?? 0) ? req.minPromptTokens : null;
  const bytes_per_token =
    ratio === undefined
      ? null
      : { low: Math.round(ratio.low * 100) / 100, high: Math.round(ratio.high * 100) / 100, samples: ratio.samples };
  const base = {
    model: req.model,
    prompt_tokens: req.promptTokens ?? null,
    prompt_tokens_at_least: atLeast,
    bytes_per_token,
    max_tokens: req.maxTokens ?? null,
    outcome,
    choice,
    prefix_hit_rate,
    ...(session === undefined ? {} : { session }),
    nodes,
    ...(queue === undefined ? {} : { queue }),
  };
  if (remote === undefined) return base;
  const sites = explainSites(req, remote, siteScope);
  if (siteVerdict?.kind === 'kept') return { ...base, outcome: 'forward', sites: sites.list, site_choice: siteVerdict.site.id };
  const forwards =
    sites.chosen !== undefined &&
    (outcome === 'context_length_exceeded' || outcome === 'blocked_by_pinned_models' || outcome === 'no_node_available');
  return { ...base, outcome: forwards ? 'forward' : outcome, sites: sites.list, site_choice: sites.chosen ?? null };
}

/** A site choice's view of the request (explain tries no site: none is excluded as tried). */
function siteRequestOf(req: RouteRequest, scope: readonly string[] | undefined): SiteRequest {
  return {
    model: req.model,
    promptTokens: req.promptTokens,
    maxTokens: req.maxTokens,
    triedSites: new Set<string>(),
    forwarded: false,
    scope,
  };
}

function explainSites(
  req: RouteRequest,
  remote: ExplainRemote,
  scope: readonly string[] | undefined,
): { list: ExplainSite[]; chosen: string | undefined } {
  const all = remote.sites();
  const choice = chooseSite(siteRequestOf(req, scope), all, remote.unreachable(), 0);
  const byId = new Map(choice.excluded.map((e) => [e.site, e]));
  const list = all.map((site): ExplainSite => {
    const e = byId.get(site.id);
    if (e === undefined) return { site: site.id, verdict: 'eligible', load: site.load };
    return { site: site.id, verdict: 'excluded', reason: e.code, ...(e.detail === undefined ? {} : { detail: e.detail }) };
  });
  return { list, chosen: choice.chosen?.id };
}

// Loaded means loaded, and a prompt goes where it fits — and is refused only where it surely does
// not. The request carries an upper and a proven lower bound on its prompt (RouteRequest):
// 1. nodes where the upper bound fits come first (loaded ones, else — with load_on_demand — nodes
//    that would load the model, judged by their last known context);
// 2. when none exists, the nodes where only the lower bound fits: those with the largest context,
//    and among them first the nodes that refuse an overflow (the refusal's count then decides the
//    rest), a kind that truncates silently (Ollama) only when no such node is left;
// 3. a context below the lower bound is `too_small` (400 when every node is).
// An unknown context (0) counts as surely fitting: the node's own answer will tell.

import { ctxFor, lastKnownCtx, residencyOf } from '#src/capacity/index.ts';
import { truncatesSilently } from '#src/kinds/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { Exclusion } from '../exclusion.ts';
import type { Filter } from '../filter.ts';
import { minNeededTokens, neededTokens, type RouteRequest } from '../route-request.ts';

const NAME = 'fits-context';

interface Candidate {
  readonly node: NodeView;
  readonly ctx: number;
  /** The residency status of a node that would load the model; undefined = loaded. */
  readonly onDemand: string | undefined;
}

interface Tier {
  readonly loaded: Candidate[];
  readonly onDemand: Candidate[];
}

type Pick = { readonly kept: readonly Candidate[]; readonly standBy: readonly Exclusion[] } | undefined;

const exclusion = (c: Candidate, code: Exclusion['code'], detail: string): Exclusion => ({
  node: c.node.spec.name,
  filter: NAME,
  code,
  detail,
});

/** Loaded nodes first; nodes that would load the model only when none is loaded (and load_on_demand allows). */
function pickResidency(tier: Tier, loadOnDemand: boolean): Pick {
  if (tier.loaded.length > 0) {
    return {
      kept: tier.loaded,
      standBy: tier.onDemand.map((c) => exclusion(c, 'not_loaded', `${c.onDemand}; a node has it loaded`)),
    };
  }
  if (tier.onDemand.length === 0) return undefined;
  if (!loadOnDemand)
    return {
      kept: [],
      standBy: tier.onDemand.map((c) => exclusion(c, 'not_loaded', `${c.onDemand}; routing.load_on_demand is off`)),
    };
  return { kept: tier.onDemand, standBy: [] };
}

/** Among nodes that may be too small: the largest context, refusing kinds before silently truncating ones. */
function pickLargest(candidates: readonly Candidate[], req: RouteRequest): { kept: Candidate[]; excluded: Exclusion[] } {
  const refusing = candidates.filter((c) => !truncatesSilently(c.node.spec.kind, c.node.capacity.role));
  const pool = refusing.length > 0 ? refusing : candidates;
  const largest = Math.max(...pool.map((c) => c.ctx));
  const kept = pool.filter((c) => c.ctx === largest);
  const upper = neededTokens(req);
  const excluded = candidates
    .filter((c) => !kept.includes(c))
    .map((c) =>
      exclusion(
        c,
        'may_not_fit',
        !pool.includes(c)
          ? `may need up to ${upper} tokens, context is ${c.ctx}; truncates silently, a node that refuses an overflow is tried first`
          : `may need up to ${upper} tokens, context is ${c.ctx}; a larger context is tried first`,
      ),
    );
  return { kept, excluded };
}

export function fitContext(req: RouteRequest, candidates: readonly NodeView[]): { kept: NodeView[]; excluded: Exclusion[] } {
  const need = neededTokens(req);
  const minNeed = minNeededTokens(req);
  const sure: Tier = { loaded: [], onDemand: [] };
  const maybe: Tier = { loaded: [], onDemand: [] };
  const refused: Exclusion[] = [];
  for (const node of candidates) {
    const residency = residencyOf(node, req.model);
    if (residency.state === 'absent') {
      refused.push({ node: node.spec.name, filter: NAME, code: 'missing', detail: 'not in the model list' });
      continue;
    }
    const ctx = residency.state === 'loaded' ? ctxFor(node, req.model) : lastKnownCtx(node, req.model);
    const candidate: Candidate = { node, ctx, onDemand: residency.state === 'loaded' ? undefined : residency.status };
    if (ctx > 0 && ctx < minNeed) {
      const needs = minNeed < need ? `needs at least ${minNeed} tokens` : `needs ${need} tokens`;
      refused.push({ node: node.spec.name, filter: NAME, code: 'too_small', detail: `${needs}, context is ${ctx}` });
      continue;
    }
    const tier = ctx === 0 || ctx >= need ? sure : maybe;
    (candidate.onDemand === undefined ? tier.loaded : tier.onDemand).push(candidate);
  }
  const maybeAll = [...maybe.loaded, ...maybe.onDemand];
  const surely = pickResidency(sure, req.loadOnDemand);
  if (surely !== undefined && surely.kept.length > 0) {
    const set = maybeAll.map((c) =>
      exclusion(c, 'may_not_fit', `may need up to ${need} tokens, context is ${c.ctx}; a node surely fits`),
    );
    return { kept: surely.kept.map((c) => c.node), excluded: [...refused, ...surely.standBy, ...set] };
  }
  const perhaps = pickResidency(maybe, req.loadOnDemand);
  if (perhaps === undefined || perhaps.kept.length === 0) {
    return { kept: [], excluded: [...refused, ...(surely?.standBy ?? []), ...(perhaps?.standBy ?? [])] };
  }
  const largest = pickLargest(perhaps.kept, req);
  return {
    kept: largest.kept.map((c) => c.node),
    excluded: [...refused, ...(surely?.standBy ?? []), ...perhaps.standBy, ...largest.excluded],
  };
}

/**
 * Pure: the context of `node` when it may cut this request's prompt silently (it truncates, and only
 * the prompt's lower bound is known to fit it); undefined when it surely fits or would refuse.
 */
export function mayTruncateAt(req: RouteRequest, node: NodeView): number | undefined {
  if (!truncatesSilently(node.spec.kind, node.capacity.role)) return undefined;
  const ctx = residencyOf(node, req.model).state === 'loaded' ? ctxFor(node, req.model) : lastKnownCtx(node, req.model);
  return ctx > 0 && ctx < neededTokens(req) ? ctx : undefined;
}

export const fitsContext: Filter = { name: NAME, apply: (req, candidates) => fitContext(req, candidates) };

// Pure: GET /admin/explain — for one model and prompt size, every node with the routing verdict
// and its reason, from the same filters the request path runs (no separate logic to drift).

import type { RoutingSnapshot } from '#src/nodes/index.ts';
import { classifyUnroutable, filterCandidates, mightFitLater, type Filter, type RouteRequest } from '#src/routing/index.ts';

export interface ExplainNode {
  readonly node: string;
  readonly verdict: 'eligible' | 'excluded';
  readonly reason?: string;
  readonly filter?: string;
  readonly detail?: string;
}

export interface Explanation {
  readonly model: string;
  readonly prompt_tokens: number | null;
  readonly max_tokens: number | null;
  /** What the request path would do: route to one of the eligible nodes, queue, or answer 400/503. */
  readonly outcome: 'route' | 'queue' | 'context_length_exceeded' | 'no_node_available';
  readonly nodes: readonly ExplainNode[];
}

export function explainRouting(req: RouteRequest, snapshot: RoutingSnapshot, filters: readonly Filter[]): Explanation {
  const { kept, excluded } = filterCandidates(req, snapshot, filters);
  const byNode = new Map(excluded.map((e) => [e.node, e]));
  const nodes = snapshot.nodes.map((view): ExplainNode => {
    const exclusion = byNode.get(view.spec.name);
    if (exclusion === undefined) return { node: view.spec.name, verdict: 'eligible' };
    return { node: view.spec.name, verdict: 'excluded', reason: exclusion.code, filter: exclusion.filter, detail: exclusion.detail };
  });
  const kind = kept.length > 0 ? undefined : classifyUnroutable(excluded, mightFitLater(snapshot, req));
  const outcome =
    kind === undefined ? 'route' : kind === 'busy' ? 'queue' : kind === 'too_large' ? 'context_length_exceeded' : 'no_node_available';
  return { model: req.model, prompt_tokens: req.promptTokens ?? null, max_tokens: req.maxTokens ?? null, outcome, nodes };
}

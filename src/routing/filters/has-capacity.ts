// A node takes one more request of a model only with a free connection, a free slot and room in
// its context budget (llama.cpp's unified KV pool is shared by all slots). Excluded nodes make the
// request wait.

import { admits, budgetFor, ctxFor, slotsFor } from '#src/capacity/index.ts';
import { inFlightOf, type NodeView, type RoutingSnapshot } from '#src/nodes/index.ts';
import type { Exclusion } from '../exclusion.ts';
import type { Filter } from '../filter.ts';
import { reservedTokens, type RouteRequest } from '../route-request.ts';

const NAME = 'has-capacity';

/** Pure: the connection limit alone (upstream.max_connections), or undefined when a connection is free. */
export function connectionVerdict(node: NodeView, snapshot: RoutingSnapshot): Exclusion | undefined {
  const limit = snapshot.connectionLimit;
  const inFlight = inFlightOf(snapshot, node);
  if (limit === undefined || inFlight < limit) return undefined;
  // Another request would only wait inside the connection pool, unseen and unbounded: queue it here.
  const detail = `${inFlight}/${limit} connections in use (upstream.max_connections)`;
  return { node: node.spec.name, filter: NAME, code: 'connections_full', detail };
}

/** Pure: why `node` cannot take the request now, or undefined when it can. */
export function capacityVerdict(req: RouteRequest, node: NodeView, snapshot: RoutingSnapshot): Exclusion | undefined {
  const connections = connectionVerdict(node, snapshot);
  if (connections !== undefined) return connections;
  const slots = slotsFor(node, req.model);
  const budget = budgetFor(node, req.model);
  const usage = snapshot.usage(node.spec.name, req.model);
  const tokens = reservedTokens(req, ctxFor(node, req.model));
  const refusal = admits(usage, { slots, budget }, tokens);
  if (refusal === undefined) return undefined;
  const detail =
    refusal === 'no_slot'
      ? `slots ${usage.requests}/${slots ?? '?'} busy`
      : `context budget ${usage.tokens}+${tokens} of ${budget ?? '?'} tokens`;
  return { node: node.spec.name, filter: NAME, code: refusal, detail };
}

export const hasCapacity: Filter = {
  name: NAME,
  apply(req, candidates, snapshot) {
    const kept: NodeView[] = [];
    const excluded: Exclusion[] = [];
    for (const node of candidates) {
      const verdict = capacityVerdict(req, node, snapshot);
      if (verdict === undefined) kept.push(node);
      else excluded.push(verdict);
    }
    return { kept, excluded };
  },
};

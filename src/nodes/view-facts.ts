// Pure: the facts of a node view that depend only on the node — its kind, URL, capacity role and
// listing — worked out once when the registry builds the view, so a request reads them as fields
// (NodeView.facts) instead of asking the kind, the URL and the capacity rules again every time.

import { nodePathPrefix } from '#src/config/index.ts';
import { ctxFor, residencyOf, type CapacityView, type Residency } from '#src/capacity/index.ts';
import { streamUsageFor, truncatesSilently } from '#src/kinds/index.ts';
import type { ListedModelFacts, ViewFacts } from './node.ts';

export function viewFacts(view: CapacityView & { readonly spec: { readonly url: string } }): ViewFacts {
  const { kind, url } = view.spec;
  const role = view.capacity.role;
  const models = new Map<string, ListedModelFacts>();
  // Models with the same facts share one object (a node's listed models mostly agree): one per
  // distinct (residency, context) instead of one per model, kept for every node's view.
  const shared = new Map<Residency, Map<number, ListedModelFacts>>();
  for (const id of view.modelsById.keys()) {
    const residency = residencyOf(view, id);
    const ctx = ctxFor(view, id);
    const byCtx = shared.get(residency) ?? new Map<number, ListedModelFacts>();
    shared.set(residency, byCtx);
    const facts = byCtx.get(ctx) ?? Object.freeze({ residency, ctx });
    byCtx.set(ctx, facts);
    models.set(id, facts);
  }
  return Object.freeze({
    truncates: truncatesSilently(kind, role),
    streamUsage: streamUsageFor(kind, role),
    pathPrefix: nodePathPrefix(url),
    models,
  });
}

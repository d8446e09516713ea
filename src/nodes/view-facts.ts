// Pure: the facts of a node view that depend only on the node — its kind, URL, capacity role and
// listing — worked out once when the registry builds the view, so a request reads them as fields
// (NodeView.facts) instead of asking the kind, the URL and the capacity rules again every time.

import { nodePathPrefix } from '#src/config/index.ts';
import { ctxFor, residencyOf, type CapacityView } from '#src/capacity/index.ts';
import { streamUsageFor, truncatesSilently } from '#src/kinds/index.ts';
import type { ListedModelFacts, ViewFacts } from './node.ts';

export function viewFacts(view: CapacityView & { readonly spec: { readonly url: string } }): ViewFacts {
  const { kind, url } = view.spec;
  const role = view.capacity.role;
  const models = new Map<string, ListedModelFacts>();
  for (const id of view.modelsById.keys()) {
    models.set(id, Object.freeze({ residency: residencyOf(view, id), ctx: ctxFor(view, id) }));
  }
  return Object.freeze({
    truncates: truncatesSilently(kind, role),
    streamUsage: streamUsageFor(kind, role),
    pathPrefix: nodePathPrefix(url),
    models,
  });
}

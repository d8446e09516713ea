// Pure: whether a node serves a model now — the one meaning of "serving now" that GET /v1/models,
// GET /admin/models (and so `switchyard models`) and the dashboard's Models view share. A node
// serves model M now when it is not dead, its listing is one routing still takes (known, or
// degraded: a failed fetch keeps the last listing routed; an expired listing, one that lists
// nothing, and a node that has never listed serve nothing known), its allow-list admits M, and
// that listing has M: loaded, or on demand (a router or Ollama would load it first). An asleep node
// serves what its last listing has, after a wake — routing wakes it for those models
// (routing/wake-candidates.ts), though its listing expires while it sleeps; each view shows that as
// it sees fit (the dashboard in its own column). Groups are the caller's: a configured model's group
// narrows which nodes take its requests.

import { residencyOf } from '#src/capacity/index.ts';
import { allowsModel, isAllowedModel } from '#src/discovery/index.ts';
import type { NodeView } from './node.ts';

export interface Serving {
  /** Loaded there now, or listed and loaded on the first request. */
  readonly how: 'loaded' | 'on_demand';
  /** The node sleeps: a request wakes it first. */
  readonly asleep: boolean;
}

/** How `view` serves `model` now, or undefined when it does not (dead, listing expired, empty or never taken, not listed). */
export function servingNow(
  view: Pick<NodeView, 'spec' | 'health' | 'discovery' | 'modelsById' | 'capacity' | 'knownContexts'>,
  model: string,
): Serving | undefined {
  if (view.health.status === 'dead') return undefined;
  const asleep = view.health.status === 'asleep';
  // allowsModel passes an untried node for every name (routing's benefit of the doubt); a view
  // says what is known, and nothing is known of a node that has never listed.
  if (view.discovery.phase === 'untried') return undefined;
  const listed = asleep
    ? view.modelsById.has(model) && isAllowedModel(view.spec.allowedModels, model)
    : allowsModel(view.discovery, model, view.modelsById, view.spec.allowedModels).ok;
  if (!listed) return undefined;
  const residency = residencyOf(view, model);
  if (residency.state === 'absent') return undefined;
  return { how: residency.state, asleep };
}

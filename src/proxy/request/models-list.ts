// Pure: GET /v1/models for the whole fleet — the union of configured models and the models nodes
// report, in OpenAI's list shape. Extra fields say which nodes serve each model now (servingNow:
// the one meaning /admin/models and the dashboard share; here, of the nodes in the model's group),
// loaded or on demand, and `max_model_len`: the largest per-request context among nodes that have
// it loaded, so clients can size their prompts.

import type { ModelSpec } from '#src/config/types.ts';
import { ctxFor } from '#src/capacity/index.ts';
import { servingNow, type NodeView } from '#src/nodes/index.ts';

export interface FleetModel {
  readonly id: string;
  readonly object: 'model';
  readonly created: number;
  readonly owned_by: string;
  readonly max_model_len: number | null;
  readonly loaded: boolean;
  readonly nodes: readonly string[];
  readonly on_demand_nodes: readonly string[];
}

export function fleetModels(
  views: readonly NodeView[],
  configured: readonly ModelSpec[],
  nowMs: number,
): {
  object: 'list';
  data: FleetModel[];
} {
  const groupOf = new Map(configured.map((m) => [m.name, m.group]));
  const ids = new Set(configured.map((m) => m.name));
  for (const v of views) {
    // An expired listing names what its node would serve, but not now: listed only where the node
    // serves it all the same (asleep: after a wake, servingNow).
    const expired = v.discovery.phase === 'expired';
    for (const m of v.discovery.models) if (!expired || servingNow(v, m.id) !== undefined) ids.add(m.id);
  }
  const created = Math.floor(nowMs / 1000);
  const data = [...ids].sort().map((id): FleetModel => {
    const group = groupOf.get(id);
    const serving = views.filter((v) => v.spec.group === group).map((v) => ({ v, how: servingNow(v, id)?.how }));
    const loaded = serving.filter((s) => s.how === 'loaded').map((s) => s.v);
    const onDemand = serving.filter((s) => s.how === 'on_demand').map((s) => s.v);
    const largest = Math.max(0, ...loaded.map((v) => ctxFor(v, id)));
    return {
      id,
      object: 'model',
      created,
      owned_by: 'switchyard',
      max_model_len: largest > 0 ? largest : null,
      loaded: loaded.length > 0,
      nodes: loaded.map((v) => v.spec.name),
      on_demand_nodes: onDemand.map((v) => v.spec.name),
    };
  });
  return { object: 'list', data };
}

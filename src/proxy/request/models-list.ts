// Pure: GET /v1/models for the whole fleet — the union of configured models and the models nodes
// report, in OpenAI's list shape. Extra fields say which live nodes have each model loaded or
// could load it on demand, and `max_model_len`: the largest per-request context among nodes
// that have it loaded, so clients can size their prompts.

import type { ModelSpec } from '#src/config/types.ts';
import { ctxFor, residencyOf } from '#src/capacity/index.ts';
import { allowsModel } from '#src/discovery/index.ts';
import type { NodeView } from '#src/nodes/index.ts';

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

export function fleetModels(views: readonly NodeView[], configured: readonly ModelSpec[], nowMs: number): {
  object: 'list';
  data: FleetModel[];
} {
  const groupOf = new Map(configured.map((m) => [m.name, m.group]));
  const ids = new Set(configured.map((m) => m.name));
  for (const v of views) {
    if (v.discovery.phase === 'expired') continue;
    for (const m of v.discovery.models) ids.add(m.id);
  }
  const created = Math.floor(nowMs / 1000);
  const data = [...ids].sort().map((id): FleetModel => {
    const group = groupOf.get(id);
    const live = views.filter((v) => v.health.status !== 'dead' && v.spec.group === group && allowsModel(v.discovery, id, v.modelsById, v.spec.allowedModels).ok);
    const loaded = live.filter((v) => residencyOf(v, id).state === 'loaded');
    const onDemand = live.filter((v) => residencyOf(v, id).state === 'on_demand');
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

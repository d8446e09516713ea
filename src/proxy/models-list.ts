// Pure: GET /v1/models for the whole fleet — the union of configured models and the models nodes
// report, in OpenAI's list shape. Extra fields (`nodes`) say which live nodes serve each one.

import type { ModelSpec } from '#src/config/types.ts';
import { allowsModel } from '#src/discovery/index.ts';
import type { NodeView } from '#src/nodes/index.ts';

export interface FleetModel {
  readonly id: string;
  readonly object: 'model';
  readonly created: number;
  readonly owned_by: string;
  readonly nodes: readonly string[];
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
    const nodes = views
      .filter((v) => v.health.status !== 'dead' && v.spec.group === group && allowsModel(v.discovery, id).ok)
      .map((v) => v.spec.name);
    return { id, object: 'model', created, owned_by: 'switchyard', nodes };
  });
  return { object: 'list', data };
}

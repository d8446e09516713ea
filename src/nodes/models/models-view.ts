// Pure: GET /admin/models — per model, where it runs, where it would load on demand, its desired
// state, and the loads that failed with their reasons.

import type { DesiredModelState } from '#src/config/index.ts';
import type { NodeFacts } from './model-decision.ts';
import type { FailedOp } from './backoff.ts';

export interface ModelsViewInput {
  readonly nodes: readonly NodeFacts[];
  readonly desired: ReadonlyMap<string, DesiredModelState>;
  readonly failures: readonly (FailedOp & { readonly node: string; readonly model: string })[];
  readonly nowMs: number;
}

export interface ModelRow {
  readonly model: string;
  readonly loaded_on: string[];
  readonly on_demand: string[];
  readonly desired: { readonly pin: boolean; readonly preload: boolean; readonly warm: number } | null;
  readonly failures: { readonly node: string; readonly reason: string; readonly failures: number; readonly retry_in_ms: number }[];
}

export function modelsView(input: ModelsViewInput): { models: ModelRow[]; nodes: { name: string; manages_models: boolean; unavailable: string | null; busy: boolean }[] } {
  const rows = new Map<string, ModelRow>();
  const row = (model: string): ModelRow => {
    let found = rows.get(model);
    if (found === undefined) {
      found = { model, loaded_on: [], on_demand: [], desired: input.desired.get(model) ?? null, failures: [] };
      rows.set(model, found);
    }
    return found;
  };
  for (const node of input.nodes) {
    for (const model of node.models) (model.running ? row(model.id).loaded_on : row(model.id).on_demand).push(node.name);
  }
  for (const model of input.desired.keys()) row(model);
  for (const failed of input.failures) {
    row(failed.model).failures.push({ node: failed.node, reason: failed.reason, failures: failed.failures, retry_in_ms: Math.max(0, Math.round(failed.untilMs - input.nowMs)) });
  }
  return {
    models: [...rows.values()].sort((a, b) => a.model.localeCompare(b.model)),
    nodes: input.nodes.map((n) => ({ name: n.name, manages_models: n.canManage, unavailable: n.unavailable ?? null, busy: n.busy })),
  };
}

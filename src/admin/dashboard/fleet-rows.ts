// Pure: the dashboard's Fleet and Models views, as plain rows built from the registry's views. One
// row per node carries everything its table line shows, so the feed can send only the rows that
// changed (compared by their JSON text) instead of the whole fleet on every update.

import { budgetFor, ctxFor, residencyOf, slotsFor, type Usage } from '#src/capacity/index.ts';
import { isWaking, servingNow, type NodeView } from '#src/nodes/index.ts';
import type { RemoteModels } from './site-rows.ts';
import { latestFailure, type NodeFailure } from './node-failures.ts';

/** One word for a node's state, shown as text and as the row's data-state attribute. */
export type NodeState = 'healthy' | 'degraded' | 'dead' | 'asleep' | 'waking' | 'ejected' | 'unknown';

export interface NodeModelRow {
  readonly id: string;
  /**
   * How the node serves it now (servingNow, the meaning /v1/models and /admin/models share): asleep
   * = listed, but the node sleeps and must be woken first; unavailable = in its last listing, but it
   * serves nothing now (dead, or its listing expired).
   */
  readonly residency: 'loaded' | 'on_demand' | 'asleep' | 'unavailable';
  readonly n_ctx: number | null;
  readonly slots: number | null;
  /** Context tokens not leased right now (llama.cpp budgets only; null where the server keeps its own). */
  readonly free_ctx: number | null;
}

export interface FleetRow {
  readonly name: string;
  readonly state: NodeState;
  readonly health: string;
  readonly discovery: string;
  readonly group: string | null;
  readonly kind: string;
  readonly url: string;
  /** Where the node came from: `static` (the [[nodes]] list) or its [[node_sources]] entry's name. */
  readonly source: string;
  readonly in_flight: number;
  /** Slots of the loaded models, summed; null when no server reported any. */
  readonly slots: number | null;
  /** Requests waiting for the models this node serves. */
  readonly queue: number;
  readonly last_error: string | null;
  /** When the node's state last changed with that error (epoch ms), for its age. */
  readonly last_error_at: number | null;
  /** null: the node does not sleep. */
  readonly wake: { readonly waking: boolean; readonly last_sent_at: number | null } | null;
  readonly models: readonly NodeModelRow[];
}

export interface FleetInput {
  readonly views: readonly NodeView[];
  readonly inFlight: (node: string) => number;
  readonly usage: (node: string, model: string) => Usage;
  readonly queueDepths: Readonly<Record<string, number>>;
  readonly now: number;
  /** The node's last failed request or ejection (node-failures.ts); absent = none remembered. */
  readonly failure?: (node: string) => NodeFailure | undefined;
}

export function nodeState(view: NodeView, now: number): NodeState {
  if (view.ejectedUntil !== undefined && now < view.ejectedUntil) return 'ejected';
  if (view.health.status === 'asleep' && isWaking(view, now)) return 'waking';
  return view.health.status;
}

export function fleetRow(view: NodeView, input: FleetInput): FleetRow {
  const name = view.spec.name;
  let slots: number | null = null;
  let queue = 0;
  const models = view.discovery.models.map((model): NodeModelRow => {
    const residency = residencyOf(view, model.id);
    const serving = servingNow(view, model.id);
    queue += input.queueDepths[model.id] ?? 0;
    const nCtx = ctxFor(view, model.id);
    const modelSlots = slotsFor(view, model.id) ?? null;
    if (residency.state === 'loaded' && modelSlots !== null) slots = (slots ?? 0) + modelSlots;
    const budget = budgetFor(view, model.id);
    return {
      id: model.id,
      residency: serving === undefined ? 'unavailable' : serving.asleep ? 'asleep' : serving.how,
      n_ctx: nCtx > 0 ? nCtx : null,
      slots: modelSlots,
      free_ctx: budget === undefined ? null : Math.max(0, budget - input.usage(name, model.id).tokens),
    };
  });
  const healthError = view.health.lastError;
  const discoveryError = view.discovery.lastError;
  const last = latestFailure(
    healthError === undefined ? undefined : { text: healthError, at: view.health.changedAt },
    discoveryError === undefined ? undefined : { text: discoveryError, at: view.discovery.changedAt },
    input.failure?.(name),
  );
  return {
    name,
    state: nodeState(view, input.now),
    health: view.health.status,
    discovery: view.discovery.phase,
    group: view.spec.group ?? null,
    kind: view.spec.kind,
    url: view.spec.url,
    source: view.spec.source ?? 'static',
    in_flight: input.inFlight(name),
    slots,
    queue,
    last_error: last?.text ?? null,
    last_error_at: last?.at ?? null,
    wake: view.spec.wake === undefined ? null : { waking: isWaking(view, input.now), last_sent_at: view.wake.lastSentAt ?? null },
    models,
  };
}

export interface ModelRow {
  readonly id: string;
  readonly aliases: readonly string[];
  /** Nodes with the model loaded and able to serve it now ("served now by": servingNow, never a dead node or an expired listing). */
  readonly nodes: readonly string[];
  /** Nodes that list it but would load it first. */
  readonly on_demand: readonly string[];
  /** Nodes that list it but sleep: a request would wake one. */
  readonly after_wake: readonly string[];
  /** Largest context over the local nodes (remote sites state their own, in `sites`). */
  readonly largest_ctx: number | null;
  readonly queue: number;
  /** [mesh]: fresh remote sites whose record lists the model (forwarding may go there). */
  readonly sites: readonly RemoteModelSite[];
  /** [mesh]: sites whose last record lists it but is stale: not served from there until a newer record. */
  readonly stale_sites: readonly string[];
}

export interface RemoteModelSite {
  readonly site: string;
  readonly ctx: number | null;
  readonly on_demand: boolean;
}

interface ModelEntry {
  readonly nodes: string[];
  readonly on_demand: string[];
  readonly after_wake: string[];
  largest: number;
  readonly sites: RemoteModelSite[];
  readonly stale_sites: string[];
}

const emptyEntry = (): ModelEntry => ({ nodes: [], on_demand: [], after_wake: [], largest: 0, sites: [], stale_sites: [] });

/**
 * Every model some node lists or some remote site's record lists, with where it is served and how;
 * aliases from the config. A model only remote sites serve gets a row with no nodes.
 */
export function modelRows(
  rows: readonly FleetRow[],
  aliases: ReadonlyMap<string, string>,
  queueDepths: Readonly<Record<string, number>>,
  remote: readonly RemoteModels[] = [],
): ModelRow[] {
  const byModel = new Map<string, ModelEntry>();
  for (const row of rows) {
    for (const model of row.models) {
      // A node that serves nothing now is shown in the Fleet view (its last listing), never as serving.
      if (model.residency === 'unavailable') continue;
      const entry = byModel.get(model.id) ?? emptyEntry();
      const list =
        model.residency === 'loaded' ? entry.nodes : model.residency === 'on_demand' ? entry.on_demand : entry.after_wake;
      list.push(row.name);
      entry.largest = Math.max(entry.largest, model.n_ctx ?? 0);
      byModel.set(model.id, entry);
    }
  }
  for (const site of [...remote].sort((a, b) => (a.site < b.site ? -1 : a.site > b.site ? 1 : 0))) {
    for (const model of site.models) {
      const entry = byModel.get(model.id) ?? emptyEntry();
      if (site.fresh) entry.sites.push({ site: site.site, ctx: model.ctx ?? null, on_demand: model.on_demand === true });
      else entry.stale_sites.push(site.site);
      byModel.set(model.id, entry);
    }
  }
  const aliasesOf = new Map<string, string[]>();
  for (const [alias, target] of aliases) aliasesOf.set(target, [...(aliasesOf.get(target) ?? []), alias]);
  return [...byModel.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, e]) => ({
      id,
      aliases: aliasesOf.get(id) ?? [],
      nodes: e.nodes,
      on_demand: e.on_demand,
      after_wake: e.after_wake,
      largest_ctx: e.largest > 0 ? e.largest : null,
      queue: queueDepths[id] ?? 0,
      sites: e.sites,
      stale_sites: e.stale_sites,
    }));
}

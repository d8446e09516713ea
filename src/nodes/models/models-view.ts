// Pure: GET /admin/models — desired against observed state. Per model: where it runs, where it
// would load on demand (both only nodes that serve it now: serving-now.ts, as /v1/models and the
// dashboard read it), where its last listing has it but the node cannot serve it now (dead, listing
// expired), its desired state (pin / preload / warm) and whether it holds, what the
// reconciler would do next for it (its plan), and the loads that failed with their reasons. Per
// node: whether it manages models, why it is unavailable, what it runs (and the requests in flight
// per model), and the switch under way.
// Per model too: where an operator's load (or unload) holds it against the reconciler, through
// which replica, and until when; and where the holds are kept ([cluster]: the store every replica
// reads; a lost store: the holds this replica knows, with the reason).

import type { DesiredModelState } from '#src/config/index.ts';
import type { NodeFacts } from './model-decision.ts';
import type { FailedOp } from './backoff.ts';
import type { ReconcileStep } from './reconcile-plan.ts';
import type { SwitchTicket } from './switch-book.ts';
import type { HoldsState, OperatorHold } from './operator-holds.ts';

export interface ModelsViewInput {
  readonly nodes: readonly NodeFacts[];
  readonly desired: ReadonlyMap<string, DesiredModelState>;
  readonly failures: readonly (FailedOp & { readonly node: string; readonly model: string })[];
  readonly nowMs: number;
  /** What the reconciler's next round would do (reconciler.plan()). */
  readonly plan?: readonly ReconcileStep[];
  /** The switch book's tickets held now. */
  readonly switches?: readonly (readonly [node: string, ticket: SwitchTicket])[];
  /** Per router that queues itself: the loads it holds the gateway's requests for, oldest first (the scheduler's). */
  readonly routerLoads?: ReadonlyMap<string, readonly RouterHeldLoad[]>;
  /** The operator's holds in force (monotonic ms, as `nowMs`), and the epoch ms of `nowMs` to date their end. */
  readonly holds?: readonly OperatorHold[];
  readonly epochMs?: number;
  /** The reconciler's rounds ended so far and where the holds are kept. */
  readonly reconciler?: HoldsState & { readonly rounds: number };
}

/** A load a router that queues itself (docs/protocols.md §7.z5) holds the gateway's requests for. */
export interface RouterHeldLoad {
  readonly model: string;
  /** The gateway's requests waiting in the router for it. */
  readonly requests: number;
  /** How long the oldest of them has waited. */
  readonly waitedMs: number;
}

export interface ModelRow {
  readonly model: string;
  readonly loaded_on: string[];
  readonly on_demand: string[];
  /** Nodes whose last listing has it but that do not serve it now (dead, listing expired): never counted as serving. */
  readonly unavailable_on: string[];
  readonly desired: { readonly pin: boolean; readonly preload: boolean; readonly warm: number } | null;
  /** Whether observed meets desired: `warm` nodes up and running it (null without a desired state). */
  readonly warm_now: number;
  readonly satisfied: boolean | null;
  /** The reconciler's next steps for this model. */
  readonly next: { readonly action: 'load'; readonly node: string; readonly why: 'warm' | 'preload' }[];
  readonly failures: {
    readonly node: string;
    readonly reason: string;
    readonly failures: number;
    readonly retry_in_ms: number;
  }[];
  /**
   * Nodes whose router status says more than loaded or not: sleeping, loading (with its progress),
   * downloading / downloaded (not routable yet), failed (with the exit code; not routed), or a status
   * value this gateway does not know (kept, routed as on demand).
   */
  readonly states: {
    readonly node: string;
    readonly status: string;
    readonly exit_code: number | null;
    readonly progress: number | null;
    readonly not_routed: string | null;
    readonly unknown_status: boolean;
  }[];
  /** Nodes where an admin load holds it (`loaded`: the reconciler does not unload it there) or an admin unload holds it off (`unloaded`: nor load it there), until `until`. */
  readonly held: {
    readonly node: string;
    readonly state: 'loaded' | 'unloaded';
    readonly by: 'operator';
    readonly replica: string | null;
    readonly until: string | null;
    readonly expires_in_ms: number;
  }[];
}

export interface NodeRow {
  readonly name: string;
  readonly manages_models: boolean;
  readonly unavailable: string | null;
  readonly busy: boolean;
  readonly max_instances: number | null;
  readonly loaded: string[];
  /** Requests in flight on the node now, per model it serves (only models with some): what an unload would wait for. */
  readonly in_flight: Record<string, number>;
  /**
   * The switch (load or unload) under way on the node, and for whom; null = none. On a router that holds its
   * switches' requests itself, the load its oldest request of ours waits for there (`by: "router"`: the router
   * runs it, no ticket of the gateway's), unless a ticket of the gateway's is held.
   */
  readonly switch: {
    readonly action: 'load' | 'unload';
    readonly model: string;
    readonly by: string;
    readonly loaded: boolean;
    readonly victim: string | null;
  } | null;
  /** The loads the router holds the gateway's requests for in its own queue, oldest first; empty elsewhere. */
  readonly router_queue: { readonly model: string; readonly requests: number; readonly waited_ms: number }[];
}

/** The reconciler's rounds, and where the operator's holds are kept: `cluster` (every replica reads them) or `gateway`; `holds_lost`: why the store is not read now (the holds this replica knows stand meanwhile). */
export interface ReconcilerRow {
  readonly rounds: number;
  readonly holds_kept_in: 'cluster' | 'gateway';
  readonly holds_lost: string | null;
}

export function modelsView(input: ModelsViewInput): { models: ModelRow[]; nodes: NodeRow[]; reconciler?: ReconcilerRow } {
  const rows = new Map<string, ModelRow>();
  const row = (model: string): ModelRow => {
    let found = rows.get(model);
    if (found === undefined) {
      found = {
        model,
        loaded_on: [],
        on_demand: [],
        unavailable_on: [],
        desired: input.desired.get(model) ?? null,
        warm_now: 0,
        satisfied: null,
        next: [],
        failures: [],
        states: [],
        held: [],
      };
      rows.set(model, found);
    }
    return found;
  };
  for (const node of input.nodes) {
    for (const model of node.models) {
      const r = row(model.id);
      (!model.serving ? r.unavailable_on : model.running ? r.loaded_on : r.on_demand).push(node.name);
      const state = model.state;
      if (state !== undefined)
        r.states.push({
          node: node.name,
          status: state.status,
          exit_code: state.exitCode ?? null,
          progress: state.fraction ?? null,
          not_routed: state.hold ?? null,
          unknown_status: state.unknown,
        });
    }
  }
  for (const model of input.desired.keys()) row(model);
  for (const failed of input.failures) {
    row(failed.model).failures.push({
      node: failed.node,
      reason: failed.reason,
      failures: failed.failures,
      retry_in_ms: Math.max(0, Math.round(failed.untilMs - input.nowMs)),
    });
  }
  for (const step of input.plan ?? []) row(step.model).next.push({ action: 'load', node: step.node, why: step.why });
  for (const hold of input.holds ?? []) {
    const left = Math.max(0, Math.round(hold.untilMs - input.nowMs));
    row(hold.model).held.push({
      node: hold.node,
      state: hold.kind,
      by: 'operator',
      replica: hold.replica,
      until: input.epochMs === undefined ? null : new Date(input.epochMs + left).toISOString(),
      expires_in_ms: left,
    });
  }
  const up = new Set(input.nodes.filter((n) => n.unavailable === undefined).map((n) => n.name));
  const models = [...rows.values()].map((r) => {
    const warmNow = r.loaded_on.filter((n) => up.has(n)).length;
    const satisfied =
      r.desired === null ? null : warmNow >= r.desired.warm && (!r.desired.preload || r.next.every((s) => s.why !== 'preload'));
    return { ...r, warm_now: warmNow, satisfied };
  });
  const switches = new Map(input.switches ?? []);
  const r = input.reconciler;
  return {
    ...(r === undefined ? {} : { reconciler: { rounds: r.rounds, holds_kept_in: r.scope, holds_lost: r.lost } }),
    models: models.sort((a, b) => a.model.localeCompare(b.model)),
    nodes: input.nodes.map((n) => {
      const ticket = switches.get(n.name);
      const held = input.routerLoads?.get(n.name) ?? [];
      const routerLoad = held[0];
      return {
        name: n.name,
        manages_models: n.canManage,
        unavailable: n.unavailable ?? null,
        busy: n.busy,
        max_instances: n.maxInstances ?? null,
        loaded: n.models.filter((m) => m.running && m.serving).map((m) => m.id),
        in_flight: Object.fromEntries(n.models.filter((m) => m.inFlight > 0).map((m) => [m.id, m.inFlight])),
        switch:
          ticket !== undefined
            ? { action: ticket.action, model: ticket.model, by: ticket.by, loaded: ticket.loaded, victim: ticket.victim ?? null }
            : routerLoad !== undefined
              ? { action: 'load', model: routerLoad.model, by: 'router', loaded: false, victim: null }
              : null,
        router_queue: held.map((l) => ({ model: l.model, requests: l.requests, waited_ms: Math.round(l.waitedMs) })),
      };
    }),
  };
}

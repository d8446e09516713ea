// The routing filter pipeline, in one place for every side that routes or judges a failover:
// the configured filters with router-room after fits-context, and the same pipeline without
// has-capacity for "is there another node worth trying" (a busy node queues, so it counts). A
// request worker runs these same functions over its mirror, fed the owner's router rooms (below),
// so both hosts of the request plane answer hasAlternative alike (test/contract/ports.contract.test.ts).

import type { RoutingSnapshot } from '#src/nodes/index.ts';
import { filterCandidates } from './route.ts';
import type { Filter } from './filter.ts';
import type { RouteRequest } from './route-request.ts';
import { modelLimit, routerRoom, type RouterSwitchLookup, type RouterSwitchView } from './filters/router-room.ts';
import { connectionVerdict } from './filters/has-capacity.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { Exclusion } from './exclusion.ts';

/**
 * The router-room filter goes right after fits-context (which already prefers nodes with the model
 * loaded); has-capacity, where present, lets a router that queues itself take what its queue and its
 * children's slots would (only the connection limit holds): held here too, its running model would go
 * idle between our requests and the router would switch at every one (docs/protocols.md §7.z5).
 */
export function withRouterRoom(filters: readonly Filter[], lookup: RouterSwitchLookup): readonly Filter[] {
  const room = routerRoom(lookup);
  const sized = filters.map((f) => (f.name === 'has-capacity' ? routerQueueCapacity(f, lookup) : f));
  const at = sized.findIndex((f) => f.name === 'fits-context');
  return at < 0 ? [...sized, room] : [...sized.slice(0, at + 1), room, ...sized.slice(at + 1)];
}

/** has-capacity for every node but a limited router that queues itself, which the connection limit alone holds. */
function routerQueueCapacity(inner: Filter, lookup: RouterSwitchLookup): Filter {
  const queuesItself = (node: NodeView): boolean =>
    modelLimit(node) !== undefined && lookup(node.spec.name, node).routerQueues === true;
  return {
    name: inner.name,
    refines: inner,
    apply(req, candidates, snapshot) {
      // No limited router queueing itself among the candidates (nearly every request): the filter as it is.
      if (!candidates.some(queuesItself)) return inner.apply(req, candidates, snapshot);
      const others = candidates.filter((node) => !queuesItself(node));
      const judged = inner.apply(req, others, snapshot);
      const kept: NodeView[] = [...judged.kept];
      const excluded: Exclusion[] = [...judged.excluded];
      for (const node of candidates) {
        if (!queuesItself(node)) continue;
        const verdict = connectionVerdict(node, snapshot);
        if (verdict === undefined) kept.push(node);
        else excluded.push(verdict);
      }
      // The candidates' order is routing's preference: kept as it came.
      kept.sort((a, b) => candidates.indexOf(a) - candidates.indexOf(b));
      return { kept, excluded };
    },
  };
}

/** The pipeline a failover is judged by: the scheduler's own, without has-capacity. */
export function alternativeFilters(pipeline: readonly Filter[]): readonly Filter[] {
  return pipeline.filter((f) => f.name !== 'has-capacity');
}

/** Pure: whether `pipeline` (an alternativeFilters result) keeps any node for the request. */
export function hasAlternativeIn(req: RouteRequest, snapshot: RoutingSnapshot, pipeline: readonly Filter[]): boolean {
  return filterCandidates(req, snapshot, pipeline).kept.length > 0;
}

/** One limited router's switch state and busy models, as plain data (it crosses to the workers). */
export interface RouterRoom {
  readonly node: string;
  readonly pending: RouterSwitchView['pending'];
  readonly switchDue: boolean;
  readonly failedLoads: readonly (readonly [model: string, reason: string])[];
  /** Models with a request of ours (or, [cluster], of another replica) in flight on the router (router-room never evicts those). */
  readonly busy: readonly string[];
  /** Models a request never switches out (pin), and those switched out last (warm, preload). */
  readonly pinned?: readonly string[];
  readonly wanted?: readonly string[];
  /** The router holds the requests waiting for its switches (scheduler/queue-holder.ts). */
  readonly routerQueues?: boolean;
  /** Running models it may be unloading for a load sent there. */
  readonly evicting?: readonly string[];
}

/** Pure: every limited router's room in `snapshot` (the routers router-room judges; the others pass it). */
export function routerRoomsOf(snapshot: RoutingSnapshot, lookup: RouterSwitchLookup): RouterRoom[] {
  const rooms: RouterRoom[] = [];
  for (const node of snapshot.nodes) {
    if (modelLimit(node) === undefined) continue;
    const name = node.spec.name;
    const view = lookup(name, node);
    // [cluster]: a model another replica is using counts as busy here too.
    const busy = [...node.modelsById.keys()].filter(
      (model) => snapshot.usage(name, model).requests > 0 || view.busyElsewhere?.has(model) === true,
    );
    const pinned = [...(view.pinned ?? [])];
    const wanted = [...(view.wanted ?? [])];
    rooms.push({
      node: name,
      pending: view.pending,
      switchDue: view.switchDue,
      failedLoads: [...view.failedLoads],
      busy,
      pinned,
      wanted,
      ...(view.routerQueues === true ? { routerQueues: true } : {}),
      ...(view.evicting === undefined || view.evicting.size === 0 ? {} : { evicting: [...view.evicting] }),
    });
  }
  return rooms;
}

const NO_SWITCH: RouterSwitchView = Object.freeze({
  pending: undefined,
  switchDue: false,
  failedLoads: new Map<string, string>(),
});

/** The switch view router-room reads, from a room (none known: no switch, nothing failed). */
export function switchViewOf(room: RouterRoom | undefined): RouterSwitchView {
  if (room === undefined) return NO_SWITCH;
  return {
    pending: room.pending,
    switchDue: room.switchDue,
    failedLoads: new Map(room.failedLoads),
    pinned: new Set(room.pinned ?? []),
    wanted: new Set(room.wanted ?? []),
    ...(room.routerQueues === true ? { routerQueues: true } : {}),
    ...(room.evicting === undefined ? {} : { evicting: new Set(room.evicting) }),
  };
}

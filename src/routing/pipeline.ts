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

/** The router-room filter goes right after fits-context (which already prefers nodes with the model loaded). */
export function withRouterRoom(filters: readonly Filter[], lookup: RouterSwitchLookup): readonly Filter[] {
  const room = routerRoom(lookup);
  const at = filters.findIndex((f) => f.name === 'fits-context');
  return at < 0 ? [...filters, room] : [...filters.slice(0, at + 1), room, ...filters.slice(at + 1)];
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
}

/** Pure: every limited router's room in `snapshot` (the routers router-room judges; the others pass it). */
export function routerRoomsOf(snapshot: RoutingSnapshot, lookup: RouterSwitchLookup): RouterRoom[] {
  const rooms: RouterRoom[] = [];
  for (const node of snapshot.nodes) {
    if (modelLimit(node) === undefined) continue;
    const name = node.spec.name;
    const view = lookup(name);
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
  };
}

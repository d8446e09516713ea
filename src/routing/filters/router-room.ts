// A llama-server router holds at most `max_instances` models (PROTOCOLS.md §1.4, §7.y). A request
// for a model it does not run makes it evict the least recently used idle model; with none idle the
// router queues the request itself and (build b10587) never wakes it when a model goes idle. So the
// gateway holds such requests in its own queue until a model the router would evict has no request
// of ours in flight, runs one switch per router at a time, and lets a loaded model's traffic flow
// unless a switch has waited past routing.swap_after. The switch bookkeeping is the scheduler's;
// this filter only reads it.

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import { isLoadingEntry, isRunningEntry } from '#src/kinds/index.ts';
import type { Exclusion } from '../exclusion.ts';
import type { Filter } from '../filter.ts';

const NAME = 'router-room';

/** What the scheduler knows about one router's switches right now. */
export interface RouterSwitchView {
  /** The model a load sent by the gateway is bringing up, and whether it answered (is loaded). */
  readonly pending: { readonly model: string; readonly loaded: boolean } | undefined;
  /** A request has waited for a switch on this node longer than routing.swap_after. */
  readonly switchDue: boolean;
  /** Models that recently failed to load here, each with the reason. */
  readonly failedLoads: ReadonlyMap<string, string>;
}

export type RouterSwitchLookup = (node: string) => RouterSwitchView;

/** The router's `max_instances` when routing must respect it: known and not 0 (unlimited). */
export function modelLimit(node: NodeView): number | undefined {
  const max = node.capacity.role === 'router' ? node.capacity.router?.maxInstances : undefined;
  return max !== undefined && max > 0 ? max : undefined;
}

/** Pure: why `model` must wait for (or skip) this router now, or undefined when a request may go. */
export function routerRoomVerdict(
  model: string,
  node: NodeView,
  snapshot: RoutingSnapshot,
  view: RouterSwitchView,
): Pick<Exclusion, 'code' | 'detail'> | undefined {
  const max = modelLimit(node);
  const entry = node.modelsById.get(model);
  if (max === undefined || entry === undefined) return undefined;
  const name = node.spec.name;
  const busy = (id: string): boolean => snapshot.usage(name, id).requests > 0;
  const running = [...node.modelsById.values()].filter(isRunningEntry);
  const isRunning = isRunningEntry(entry);
  const failed = view.failedLoads.get(model);
  // Held off until the listing shows it loaded (one still `loading` is the load that timed out).
  if (failed !== undefined && !entry.loaded) return { code: 'load_failed', detail: failed };
  const { pending } = view;
  if (pending !== undefined) {
    if (pending.model === model) return pending.loaded ? undefined : { code: 'switching', detail: `loading ${model}; follows once it is loaded` };
    // A model mid-request is never the router's victim; any other may have been evicted for the switch.
    if (isRunning && busy(model)) return undefined;
    return { code: 'switching', detail: `the router is switching to ${pending.model}; one switch at a time` };
  }
  if (isRunning) {
    return view.switchDue ? { code: 'switch_due', detail: 'a switch to another model has waited past routing.swap_after' } : undefined;
  }
  if (running.length < max) return undefined;
  if (running.some((m) => !isLoadingEntry(m) && !busy(m.id))) return undefined;
  return { code: 'models_full', detail: `${running.length}/${max} models loaded (max_instances), none idle; waits for one to go idle` };
}

/** The filter over the scheduler's switch bookkeeping; nodes that are not limited routers pass. */
export function routerRoom(lookup: RouterSwitchLookup): Filter {
  return {
    name: NAME,
    apply(req, candidates, snapshot) {
      const kept: NodeView[] = [];
      const excluded: Exclusion[] = [];
      for (const node of candidates) {
        const verdict = routerRoomVerdict(req.model, node, snapshot, lookup(node.spec.name));
        if (verdict === undefined) kept.push(node);
        else excluded.push({ node: node.spec.name, filter: NAME, ...verdict });
      }
      return { kept, excluded };
    },
  };
}

// A llama-server router holds at most `max_instances` models (PROTOCOLS.md §1.4, §7.y). A request
// for a model it does not run makes it evict the least recently used idle model; with none idle a
// router from build 10313 queues the request itself (docs/protocols.md §7.z5). Where the scheduler
// lets the router queue (`routerQueues`: scheduler/queue-holder.ts) such a request goes to it, and
// only the router's running models' new requests are held, once a load the router holds has waited
// past routing.swap_after (the bound the router lacks). Elsewhere the
// gateway holds such requests in its own queue until a model the router would evict has no request
// of ours in flight, runs one switch per router at a time, and lets a loaded model's traffic flow
// unless a switch has waited past routing.swap_after. On a full router the gateway picks the victim
// itself (chooseVictim: idle, never pinned) and unloads it before the request loads its model, so
// the router never evicts one the gateway would not; only a pinned model standing in the way
// excludes the node (`pinned`). The switch bookkeeping is the one switch book's; this only reads it.

import type { NodeView, RoutingSnapshot, SwitchTicket } from '#src/nodes/index.ts';
import { isLoadingEntry, isRunningEntry } from '#src/kinds/index.ts';
import type { Exclusion } from '../exclusion.ts';
import type { Filter } from '../filter.ts';

const NAME = 'router-room';

/** A switch (or a load or unload) under way on the router, from the one switch book. */
export type PendingSwitch = Pick<SwitchTicket, 'model' | 'loaded'> &
  Partial<Pick<SwitchTicket, 'action' | 'victim' | 'replica' | 'settled'>>;

/** What the scheduler knows about one router's switches right now. */
export interface RouterSwitchView {
  /** The model a load sent by the gateway is bringing up, and whether it answered (is loaded). */
  readonly pending: PendingSwitch | undefined;
  /** A request has waited for a switch on this node longer than routing.swap_after. */
  readonly switchDue: boolean;
  /** Models that recently failed to load here, each with the reason. */
  readonly failedLoads: ReadonlyMap<string, string>;
  /** Models never switched out for a request (`[[models.available]] pin = true`). */
  readonly pinned?: ReadonlySet<string>;
  /** Models the reconciler keeps loaded (warm, preload): switched out for a request only when no other idle model is. */
  readonly wanted?: ReadonlySet<string>;
  /** [cluster]: models other replicas have requests in flight on (their slot leases): never a victim. */
  readonly busyElsewhere?: ReadonlySet<string>;
  /** The router holds the requests that wait for its switches (its own queue); the gateway holds none. */
  readonly routerQueues?: boolean;
  /** Where the router queues: running models it may be unloading for a load sent there (their new requests wait it out). */
  readonly evicting?: ReadonlySet<string>;
}

/** The switch view of a node by name (its view given where the caller has it). */
export type RouterSwitchLookup = (node: string, view?: NodeView) => RouterSwitchView;

/** The router's `max_instances` when routing must respect it: known and not 0 (unlimited). */
export function modelLimit(node: NodeView): number | undefined {
  const max = node.capacity.role === 'router' ? node.capacity.router?.maxInstances : undefined;
  return max !== undefined && max > 0 ? max : undefined;
}

/** Which model a switch to `model` on a full router would unload, or why none may be. */
export type VictimChoice =
  | { readonly kind: 'room' }
  | { readonly kind: 'victim'; readonly model: string }
  /** Every model that could go is mid-request (or loading): wait for one to go idle. */
  | { readonly kind: 'busy'; readonly running: number; readonly max: number }
  /** Every running model the router could give up is pinned: never switched out for a request. */
  | { readonly kind: 'pinned'; readonly running: number; readonly max: number; readonly pinned: readonly string[] };

/**
 * Pure: the idle model the gateway unloads before a request loads `model` on a limited router. Never
 * a pinned model, a model mid-request or still loading; an unwanted model before one the reconciler
 * keeps warm or preloaded, one with nothing queued before one with requests waiting, then by name.
 */
export function chooseVictim(
  model: string,
  node: NodeView,
  snapshot: RoutingSnapshot,
  view: Pick<RouterSwitchView, 'pinned' | 'wanted' | 'busyElsewhere'>,
  queued: (model: string) => number = () => 0,
): VictimChoice {
  const max = modelLimit(node);
  if (max === undefined) return { kind: 'room' };
  const running = [...node.modelsById.values()].filter((m) => m.id !== model && isRunningEntry(m));
  if (running.length < max) return { kind: 'room' };
  const pinned = running.filter((m) => view.pinned?.has(m.id) === true);
  const name = node.spec.name;
  const idle = running.filter(
    (m) =>
      view.pinned?.has(m.id) !== true &&
      !isLoadingEntry(m) &&
      snapshot.usage(name, m.id).requests === 0 &&
      view.busyElsewhere?.has(m.id) !== true,
  );
  const rank = (id: string): number => (view.wanted?.has(id) === true ? 2 : 0) + (queued(id) > 0 ? 1 : 0);
  const best = idle.map((m) => m.id).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))[0];
  if (best !== undefined) return { kind: 'victim', model: best };
  if (pinned.length === running.length) return { kind: 'pinned', running: running.length, max, pinned: pinned.map((m) => m.id) };
  return { kind: 'busy', running: running.length, max };
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
  const isRunning = isRunningEntry(entry);
  const failed = view.failedLoads.get(model);
  // Held off until the listing shows it loaded (one still `loading` is the load that timed out).
  if (failed !== undefined && !entry.loaded) return { code: 'load_failed', detail: failed };
  const { pending } = view;
  if (pending !== undefined) return duringSwitch(model, node, isRunning && busy(model), isRunning, pending, max);
  if (view.routerQueues === true && view.evicting?.has(model) === true)
    return {
      code: 'switching',
      detail: `the router may be unloading ${model} for a load sent there; follows once its listing shows that`,
    };
  if (view.routerQueues === true)
    return isRunning && view.switchDue
      ? { code: 'switch_due', detail: 'a request the router holds for a load has waited past routing.swap_after' }
      : undefined;
  if (isRunning) {
    return view.switchDue
      ? { code: 'switch_due', detail: 'a switch to another model has waited past routing.swap_after' }
      : undefined;
  }
  const choice = chooseVictim(model, node, snapshot, view);
  if (choice.kind === 'room' || choice.kind === 'victim') return undefined;
  if (choice.kind === 'pinned') {
    return {
      code: 'pinned',
      detail: `its slots are held by pinned model(s) ${choice.pinned.join(', ')} (${choice.running}/${choice.max} loaded, max_instances = its --models-max); a request never switches out a pinned model`,
    };
  }
  return {
    code: 'models_full',
    detail: `${choice.running}/${choice.max} models loaded (max_instances), none idle and unpinned; waits for one to go idle`,
  };
}

/** While a switch is under way: its model's followers wait for it, its victim waits, one switch at a time. */
function duringSwitch(
  model: string,
  node: NodeView,
  busyHere: boolean,
  isRunning: boolean,
  pending: PendingSwitch,
  max: number,
): Pick<Exclusion, 'code' | 'detail'> | undefined {
  const by =
    pending.replica === undefined
      ? ''
      : ` (replica ${pending.replica}'s switch${pending.settled === true ? ", this replica's listing catching up" : ''})`;
  const switching = (detail: string): Pick<Exclusion, 'code' | 'detail'> => ({ code: 'switching', detail: `${detail}${by}` });
  if (pending.action === 'unload') {
    if (pending.model === model) return switching(`${model} is being unloaded here; loads again after it`);
    return isRunning ? undefined : switching(`the router is unloading ${pending.model}; one switch at a time`);
  }
  if (pending.model === model) return pending.loaded ? undefined : switching(`loading ${model}; follows once it is loaded`);
  if (pending.victim === model) return switching(`${model} is unloaded to make room for ${pending.model}`);
  // Another replica's switch on a one-model router: any other model would be a load (the store refuses it too: cluster/lua.ts).
  if (pending.replica !== undefined && max === 1)
    return switching(`the router is switching to ${pending.model}; one switch at a time`);
  // A model mid-request is never the router's victim; with the gateway's own victim named, no other is.
  if (isRunning && (busyHere || pending.victim !== undefined || !fullWithout(node, pending.model, max))) return undefined;
  return switching(`the router is switching to ${pending.model}; one switch at a time`);
}

/** Whether the router is full even without the model being switched to (its own LRU pick is then unknown). */
function fullWithout(node: NodeView, switching: string, max: number): boolean {
  return [...node.modelsById.values()].filter((m) => m.id !== switching && isRunningEntry(m)).length >= max;
}

/** The filter over the scheduler's switch bookkeeping; nodes that are not limited routers pass. */
export function routerRoom(lookup: RouterSwitchLookup): Filter {
  return {
    name: NAME,
    apply(req, candidates, snapshot) {
      const kept: NodeView[] = [];
      const excluded: Exclusion[] = [];
      for (const node of candidates) {
        const verdict = routerRoomVerdict(req.model, node, snapshot, lookup(node.spec.name, node));
        if (verdict === undefined) kept.push(node);
        else excluded.push({ node: node.spec.name, filter: NAME, ...verdict });
      }
      return { kept, excluded };
    },
  };
}

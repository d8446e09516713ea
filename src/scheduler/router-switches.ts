// The scheduler's side of model switches on llama-server routers. Which switch a router is under
// (one at a time per router) is kept in the one switch book the model manager shares
// (nodes/models/switch-book.ts: a reconciler or admin load takes the same ticket); kept here: when a
// node's last switch settled (the fairness clock of routing.swap_after restarts there), and which
// models recently failed to load (routing.load_timeout, or their victim would not unload). Plain
// state with the clock injected; the router-room filter reads it.

import type { Clock } from '#src/core/clock.ts';
import type { NodeView, SwitchBook, SwitchTicket } from '#src/nodes/index.ts';
import { residencyOf } from '#src/capacity/index.ts';
import { isRunningEntry } from '#src/kinds/index.ts';
import { chooseVictim, modelLimit, type PendingSwitch, type RouterSwitchView } from '#src/routing/index.ts';
import type { RoutingSnapshot } from '#src/nodes/index.ts';

/** How a request that loads a model ended, as far as the load is concerned. */
export type LoadOutcome = 'loaded' | 'failed' | 'timed_out';

/**
 * How long a loaded switch is trusted over a listing that does not show it yet. The scheduler asks
 * for a fresh listing when the load answers, so this only bounds a listing that keeps failing.
 */
export const LISTING_CATCH_UP_MS = 30_000;

interface FailedLoad {
  readonly untilMs: number;
  readonly detail: string;
}

export class RouterSwitches {
  readonly #clock: Clock;
  readonly #book: SwitchBook;
  /** Monotonic ms when a request's switch answered, by node (the listing catches up from there). */
  readonly #loadedAtMs = new Map<string, number>();
  readonly #settledAtMs = new Map<string, number>();
  readonly #failed = new Map<string, Map<string, FailedLoad>>();

  constructor(clock: Clock, book: SwitchBook) {
    this.#clock = clock;
    this.#book = book;
  }

  /** The switch under way on `node`, whoever took it (a request, the reconciler, an admin). */
  pending(node: string): PendingSwitch | undefined {
    return this.#book.current(node);
  }

  /** Monotonic ms of the node's last settled load (0 = none): a switch waits for swap_after from here. */
  settledAtMs(node: string): number {
    return this.#settledAtMs.get(node) ?? 0;
  }

  /** A request that loads `model` on `node` (after unloading `victim`) takes the node's ticket; false when it is held. */
  start(node: string, model: string, victim: string | undefined): boolean {
    const taken = this.#book.take(node, { model, action: 'load', by: 'request', loaded: false, victim });
    if (!taken.ok) return false;
    this.#loadedAtMs.delete(node);
    this.#failed.get(node)?.delete(model);
    return true;
  }

  /** [cluster]: the switch just started waits for its claim across replicas (undefined: nothing to wait for). */
  confirm(node: string, model: string): Promise<{ readonly ok: boolean }> | undefined {
    return this.#book.confirm?.(node, model);
  }

  /** The loading request answered, failed or timed out; a timeout marks the model failing for `failForMs`. */
  settle(node: string, model: string, outcome: LoadOutcome, failForMs: number): void {
    const pending = this.#book.current(node);
    if (pending?.model !== model || pending.by !== 'request' || pending.loaded || pending.replica !== undefined) return;
    const now = this.#clock.monotonicMs();
    this.#settledAtMs.set(node, now);
    if (outcome === 'loaded') {
      this.#book.markLoaded(node, model);
      this.#loadedAtMs.set(node, now);
      return;
    }
    this.#book.release(node, model);
    if (outcome === 'timed_out') this.markTimedOut(node, model, failForMs);
  }

  /** A load of `model` did not answer within routing.load_timeout: held off `node` for as long. */
  markTimedOut(node: string, model: string, forMs: number): void {
    this.markFailed(node, model, `did not load within ${forMs}ms (routing.load_timeout); not sent here again for as long`, forMs);
  }

  /** The victim of a request's switch would not unload: the ticket goes back, the model is held off here for `forMs`. */
  evictionFailed(node: string, model: string, detail: string, forMs: number): void {
    const pending = this.#book.current(node);
    if (pending?.model !== model || pending.by !== 'request' || pending.replica !== undefined) return;
    this.#book.release(node, model);
    this.#settledAtMs.set(node, this.#clock.monotonicMs());
    this.markFailed(node, model, detail, forMs);
  }

  markFailed(node: string, model: string, detail: string, forMs: number): void {
    const failed = this.#failed.get(node) ?? new Map<string, FailedLoad>();
    failed.set(model, { untilMs: this.#clock.monotonicMs() + forMs, detail });
    this.#failed.set(node, failed);
  }

  /** Drops a request's loaded switch once the node's listing shows the model running (or after LISTING_CATCH_UP_MS). */
  reconcile(nodes: readonly NodeView[]): void {
    const now = this.#clock.monotonicMs();
    for (const [name, pending] of this.#book.held()) {
      const view = nodes.find((n) => n.spec.name === name);
      if (pending.replica !== undefined) {
        if (pending.settled === true && remoteCaughtUp(pending, view)) this.#book.caughtUp?.(name);
        continue;
      }
      if (pending.by !== 'request' || !pending.loaded) continue;
      const entry = view?.modelsById.get(pending.model);
      const listed = entry !== undefined && isRunningEntry(entry);
      if (view === undefined || listed || now - (this.#loadedAtMs.get(name) ?? 0) >= LISTING_CATCH_UP_MS) {
        this.#book.release(name, pending.model);
        this.#loadedAtMs.delete(name);
      }
    }
  }

  /** Models that failed to load on `node` and are still held off, with the reason. */
  failedLoads(node: string): ReadonlyMap<string, string> {
    const failed = this.#failed.get(node);
    if (failed === undefined) return new Map();
    const now = this.#clock.monotonicMs();
    const current = new Map<string, string>();
    for (const [model, mark] of failed) {
      if (mark.untilMs > now) current.set(model, mark.detail);
      else failed.delete(model);
    }
    return current;
  }
}

/**
 * Pure: whether this replica's listing of `node` shows what another replica's released switch did
 * (a load: its model running; a failed load: its victim gone; an unload: the model gone), so the
 * switch no longer needs to stand in for it. No listing of the node: nothing to wait for.
 */
export function remoteCaughtUp(
  pending: Pick<SwitchTicket, 'model' | 'action' | 'loaded' | 'victim'>,
  node: NodeView | undefined,
): boolean {
  if (node === undefined) return true;
  const running = (id: string): boolean => {
    const entry = node.modelsById.get(id);
    return entry !== undefined && isRunningEntry(entry);
  };
  if (pending.action === 'unload') return !running(pending.model);
  if (pending.loaded) return running(pending.model);
  return pending.victim === undefined || !running(pending.victim);
}

/**
 * Pure: whether `model` is loaded nowhere and a router that holds a limited number of models would
 * load it: a request for it waits for a switch and a load, not only for a slot.
 */
export function awaitsRouterLoad(model: string, nodes: readonly NodeView[]): boolean {
  let limitedRouter = false;
  for (const node of nodes) {
    const residency = residencyOf(node, model);
    if (residency.state === 'loaded') return false;
    if (residency.state === 'on_demand' && modelLimit(node) !== undefined) limitedRouter = true;
  }
  return limitedRouter;
}

/**
 * Pure: whether `model` runs on a limited router (or one is switching to it): a request for it
 * costs no switch there. `pending` names the model a node's switch is bringing up.
 */
export function runsOnLimitedRouter(
  model: string,
  nodes: readonly NodeView[],
  pending: (node: string) => string | undefined,
): boolean {
  return nodes.some((node) => {
    if (modelLimit(node) === undefined) return false;
    const entry = node.modelsById.get(model);
    return (entry !== undefined && isRunningEntry(entry)) || pending(node.spec.name) === model;
  });
}

/** What sending a request for `model` to `node` means for the node's models. */
export interface LoadPlan {
  /** The node does not have the model running: the request loads it (load_timeout applies). */
  readonly loads: boolean;
  /** This load is the limited router's next switch (none pending, the model not already coming up). */
  readonly startsSwitch: boolean;
  /** The router is full: the load evicts a model (a switch in the metrics' sense). */
  readonly evicts: boolean;
  /** The idle model the gateway unloads first (never pinned, never mid-request); undefined = none. */
  readonly victim: string | undefined;
}

/**
 * Pure: the load plan, given the switch the router is already under, if any, and the pins. On a full
 * router the victim is the gateway's choice (router-room's chooseVictim), unloaded before the load.
 */
/** Pure: whether a request for `model` sent to `node` loads it (not running there, nor loaded by the pending switch). */
export function loadsModel(model: string, node: NodeView, pending: PendingSwitch | undefined): boolean {
  return !(pending?.model === model && pending.loaded) && residencyOf(node, model).state === 'on_demand';
}

export function loadPlan(
  model: string,
  node: NodeView,
  pending: PendingSwitch | undefined,
  snapshot?: RoutingSnapshot,
  view?: Pick<RouterSwitchView, 'pinned' | 'wanted'>,
  queued?: (model: string) => number,
): LoadPlan {
  if (!loadsModel(model, node, pending)) {
    return { loads: false, startsSwitch: false, evicts: false, victim: undefined };
  }
  const max = modelLimit(node);
  const entry = node.modelsById.get(model);
  // A model listed `loading` is coming up already: its requests wait for it, no new switch.
  const startsSwitch = max !== undefined && pending === undefined && entry !== undefined && !isRunningEntry(entry);
  const running = [...node.modelsById.values()].filter(isRunningEntry).length;
  const evicts = startsSwitch && running >= (max ?? Infinity);
  const choice = evicts && snapshot !== undefined ? chooseVictim(model, node, snapshot, view ?? {}, queued) : undefined;
  return { loads: true, startsSwitch, evicts, victim: choice?.kind === 'victim' ? choice.model : undefined };
}

// The scheduler's bookkeeping of model loads it sent to llama-server routers: which model a router
// is bringing up for us (one at a time per router), when its last switch settled (the fairness
// clock of routing.swap_after restarts there), and which models recently failed to load
// (routing.load_timeout). Plain state with the clock injected; the router-room filter reads it.

import type { Clock } from '#src/core/clock.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { residencyOf } from '#src/capacity/index.ts';
import { isRunningEntry } from '#src/kinds/index.ts';
import { modelLimit } from '#src/routing/index.ts';

/** How a request that loads a model ended, as far as the load is concerned. */
export type LoadOutcome = 'loaded' | 'failed' | 'timed_out';

/**
 * How long a loaded switch is trusted over a listing that does not show it yet. The scheduler asks
 * for a fresh listing when the load answers, so this only bounds a listing that keeps failing.
 */
export const LISTING_CATCH_UP_MS = 30_000;

interface Pending {
  readonly model: string;
  readonly loaded: boolean;
  /** Monotonic ms when the load answered (undefined while loading). */
  readonly loadedAtMs: number | undefined;
}

interface FailedLoad {
  readonly untilMs: number;
  readonly detail: string;
}

export class RouterSwitches {
  readonly #clock: Clock;
  readonly #pending = new Map<string, Pending>();
  readonly #settledAtMs = new Map<string, number>();
  readonly #failed = new Map<string, Map<string, FailedLoad>>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  pending(node: string): { readonly model: string; readonly loaded: boolean } | undefined {
    return this.#pending.get(node);
  }

  /** Monotonic ms of the node's last settled load (0 = none): a switch waits for swap_after from here. */
  settledAtMs(node: string): number {
    return this.#settledAtMs.get(node) ?? 0;
  }

  /** A request that loads `model` on `node` was sent. */
  start(node: string, model: string): void {
    this.#pending.set(node, { model, loaded: false, loadedAtMs: undefined });
    this.#failed.get(node)?.delete(model);
  }

  /** The loading request answered, failed or timed out; a timeout marks the model failing for `failForMs`. */
  settle(node: string, model: string, outcome: LoadOutcome, failForMs: number): void {
    const pending = this.#pending.get(node);
    if (pending?.model !== model || pending.loaded) return;
    const now = this.#clock.monotonicMs();
    this.#settledAtMs.set(node, now);
    if (outcome === 'loaded') {
      this.#pending.set(node, { model, loaded: true, loadedAtMs: now });
      return;
    }
    this.#pending.delete(node);
    if (outcome === 'timed_out') {
      const failed = this.#failed.get(node) ?? new Map<string, FailedLoad>();
      failed.set(model, { untilMs: now + failForMs, detail: `did not load within ${failForMs}ms (routing.load_timeout); not sent here again for as long` });
      this.#failed.set(node, failed);
    }
  }

  /** Drops a loaded switch once the node's listing shows the model running (or after LISTING_CATCH_UP_MS). */
  reconcile(nodes: readonly NodeView[]): void {
    const now = this.#clock.monotonicMs();
    for (const [name, pending] of this.#pending) {
      if (pending.loadedAtMs === undefined) continue;
      const view = nodes.find((n) => n.spec.name === name);
      const entry = view?.modelsById.get(pending.model);
      const listed = entry !== undefined && isRunningEntry(entry);
      if (view === undefined || listed || now - pending.loadedAtMs >= LISTING_CATCH_UP_MS) this.#pending.delete(name);
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

/** What sending a request for `model` to `node` means for the node's models. */
export interface LoadPlan {
  /** The node does not have the model running: the request loads it (load_timeout applies). */
  readonly loads: boolean;
  /** This load is the limited router's next switch (none pending, the model not already coming up). */
  readonly startsSwitch: boolean;
  /** The router is full: the load evicts a model (a switch in the metrics' sense). */
  readonly evicts: boolean;
}

/** Pure: the load plan, given the switch the router is already bringing up for us, if any. */
export function loadPlan(model: string, node: NodeView, pending: { readonly model: string; readonly loaded: boolean } | undefined): LoadPlan {
  if ((pending?.model === model && pending.loaded) || residencyOf(node, model).state !== 'on_demand') {
    return { loads: false, startsSwitch: false, evicts: false };
  }
  const max = modelLimit(node);
  const entry = node.modelsById.get(model);
  // A model listed `loading` is coming up already: its requests wait for it, no new switch.
  const startsSwitch = max !== undefined && pending === undefined && entry !== undefined && !isRunningEntry(entry);
  const running = [...node.modelsById.values()].filter(isRunningEntry).length;
  return { loads: true, startsSwitch, evicts: startsSwitch && running >= (max ?? Infinity) };
}

// Requests the gateway sent to a router that queues itself, for a model it does not run yet: they
// wait inside the router (docs/protocols.md §7.z5) until its load answers. Kept so the gateway can
// keep the one bound the router lacks — a load held there past routing.swap_after holds new
// requests for the router's running models (router-room's `switch_due`) — and count one switch per
// model brought up. Plain state; the clock's readings are passed in.

import type { RouterHeldLoad } from '#src/nodes/index.ts';

interface RouterWait {
  readonly model: string;
  readonly sinceMs: number;
  readonly boundMs: number;
  /** The idle running models the router may unload for this load (its LRU pick among them). */
  readonly victims: readonly string[];
}

const NONE: ReadonlySet<string> = new Set();

export class RouterWaits {
  readonly #byNode = new Map<string, Set<RouterWait>>();
  /** Monotonic ms a load the router held answered, by node: the model it brought up runs from there. */
  readonly #answeredAtMs = new Map<string, number>();

  /**
   * A request for `model` went to `node` to wait for its load; the returned function ends the wait
   * (`loadedAtMs`: when its load answered, undefined when it failed or gave up).
   */
  start(
    node: string,
    model: string,
    sinceMs: number,
    boundMs: number,
    victims: readonly string[] = [],
  ): (loadedAtMs: number | undefined) => void {
    const wait: RouterWait = { model, sinceMs, boundMs, victims };
    const waits = this.#byNode.get(node) ?? new Set<RouterWait>();
    waits.add(wait);
    this.#byNode.set(node, waits);
    return (loadedAtMs) => {
      if (!waits.delete(wait)) return;
      if (loadedAtMs !== undefined) this.#answeredAtMs.set(node, Math.max(loadedAtMs, this.#answeredAtMs.get(node) ?? 0));
      if (waits.size === 0 && this.#byNode.get(node) === waits) this.#byNode.delete(node);
    };
  }

  /** Whether a request for another model than `model` waits in `node`. */
  waitingOtherThan(node: string, model: string): boolean {
    for (const wait of this.#byNode.get(node) ?? []) if (wait.model !== model) return true;
    return false;
  }

  /** Whether a request for `model` already waits in `node` (the router loads it once for all of them). */
  waiting(node: string, model: string): boolean {
    for (const wait of this.#byNode.get(node) ?? []) if (wait.model === model) return true;
    return false;
  }

  /**
   * The models the router may be unloading on `node` for a load held there: a victim still listed
   * running while the model it makes room for is not yet listed coming up (`comingUp`). The router
   * lists a victim `loaded` until its child has exited and proxies a request for it to that exiting
   * child (500 "Could not establish connection", §7.z5), so their new requests wait until then.
   */
  evicting(node: string, running: (model: string) => boolean, comingUp: (model: string) => boolean): ReadonlySet<string> {
    const waits = this.#byNode.get(node);
    if (waits === undefined) return NONE;
    let evicting: Set<string> | undefined;
    for (const wait of waits) {
      if (wait.victims.length === 0 || comingUp(wait.model)) continue;
      for (const victim of wait.victims) if (running(victim)) (evicting ??= new Set()).add(victim);
    }
    return evicting ?? NONE;
  }

  /** The loads held now per node, oldest first (the router's FIFO order as the gateway sent them), with their requests. */
  report(nowMs: number): ReadonlyMap<string, readonly RouterHeldLoad[]> {
    const out = new Map<string, RouterHeldLoad[]>();
    for (const [node, waits] of this.#byNode) {
      const byModel = new Map<string, { requests: number; sinceMs: number }>();
      for (const wait of waits) {
        const seen = byModel.get(wait.model);
        byModel.set(wait.model, {
          requests: (seen?.requests ?? 0) + 1,
          sinceMs: Math.min(seen?.sinceMs ?? wait.sinceMs, wait.sinceMs),
        });
      }
      const rows = [...byModel].map(([model, w]) => ({
        model,
        requests: w.requests,
        waitedMs: Math.max(0, nowMs - w.sinceMs),
        sinceMs: w.sinceMs,
      }));
      rows.sort((a, b) => a.sinceMs - b.sinceMs || a.model.localeCompare(b.model));
      if (rows.length > 0)
        out.set(
          node,
          rows.map(({ model, requests, waitedMs }) => ({ model, requests, waitedMs })),
        );
    }
    return out;
  }

  /** Whether a wait on `node` has passed its bound, counted from its start or the node's last answered load if later. */
  due(node: string, nowMs: number): boolean {
    const waits = this.#byNode.get(node);
    if (waits === undefined) return false;
    const settled = this.#answeredAtMs.get(node) ?? 0;
    for (const wait of waits) if (nowMs - Math.max(wait.sinceMs, settled) >= wait.boundMs) return true;
    return false;
  }
}

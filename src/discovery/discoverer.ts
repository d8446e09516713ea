// The discovery loop: polls each node's model list on its own timer and hands every result to
// `onResult`. It holds no discovery state (the registry does); it only decides when to fetch.
//
// Isolation contract: each node has at most one fetch in flight, and nothing waits on another
// node's fetch. A node whose fetch hangs just has its later rounds skipped until that fetch
// settles (the fetcher's own timeout normally ends it); other nodes keep their cadence.

import { diffNodes, type NodeChange, type NodeSpec } from '#src/config/index.ts';
import type { Clock, Timer } from '#src/core/clock.ts';
import { spreadDelayMs } from '#src/core/poll-spread.ts';
import type { Service } from '#src/core/lifecycle.ts';
import type { DiscoveryResult } from './discovery-state.ts';

export type FetchModels = (node: NodeSpec, signal: AbortSignal) => Promise<DiscoveryResult>;

export interface DiscovererOptions {
  readonly clock: Clock;
  /** Time between two scheduled rounds for one node, measured from round start to round start. */
  readonly intervalMs: number;
  /** Must honour `signal`; should never reject (a rejection is reported as a failed result). */
  readonly fetch: FetchModels;
  /**
   * Called synchronously once per finished fetch of a node still configured and not stopped, with
   * when (the clock's monotonic ms) that fetch was started;
   * results of aborted fetches (node removed or replaced, discoverer stopped) are dropped.
   * Should not throw; if it does, `onError` is told and the node's loop goes on.
   */
  readonly onResult: (nodeName: string, result: DiscoveryResult, askedAtMs: number) => void;
  readonly onError?: (nodeName: string, error: unknown) => void;
  /** Minimum time between two fetches started by `refresh` for one node. */
  readonly minRefreshIntervalMs: number;
}

interface Fetching {
  readonly controller: AbortController;
  /** Resolves once `onResult` has run, or at once when the fetch is aborted. Never rejects. */
  readonly done: Promise<void>;
}

interface NodeEntry {
  spec: NodeSpec;
  timer: Timer | undefined;
  fetching: Fetching | undefined;
  lastRefreshAtMs: number | undefined;
}

export class Discoverer implements Service {
  readonly name = 'discoverer';
  readonly #options: DiscovererOptions;
  #intervalMs: number;
  #minRefreshIntervalMs: number;
  #nodes = new Map<string, NodeEntry>();
  #running = false;
  #stopped = false;

  constructor(options: DiscovererOptions) {
    this.#options = options;
    this.#intervalMs = options.intervalMs;
    this.#minRefreshIntervalMs = options.minRefreshIntervalMs;
  }

  /**
   * Starts one round for every node at once, then one per node every interval (a large fleet's
   * second rounds spread over one interval, so the rounds stay spread).
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#running || this.#stopped) return;
    if (signal.aborted) {
      await this.stop();
      return;
    }
    this.#running = true;
    signal.addEventListener('abort', () => void this.stop(), { once: true });
    let index = 0;
    const count = this.#nodes.size;
    for (const entry of this.#nodes.values()) this.#activate(entry, spreadDelayMs(index++, count, this.#intervalMs));
  }

  /** Replaces the node set, judging each node against the set polled now (see `applyChange`). */
  setNodes(nodes: readonly NodeSpec[]): void {
    this.applyChange(
      diffNodes(
        [...this.#nodes.values()].map((entry) => entry.spec),
        nodes,
      ),
    );
  }

  /**
   * Applies a reload's node change, computed against the set polled now. A kept node keeps its
   * timer and in-flight fetch; an added, relisted or replaced node is polled at once (its listing
   * may now differ); a removed, relisted or replaced node's in-flight fetch is aborted and its
   * result dropped.
   */
  applyChange(change: NodeChange): void {
    if (this.#stopped) return;
    const carriedOn = new Set(change.nodesKept.map((pair) => pair.next.name));
    const next = new Map<string, NodeEntry>();
    for (const spec of change.nodes) {
      const existing = this.#nodes.get(spec.name);
      if (existing !== undefined && carriedOn.has(spec.name)) {
        existing.spec = spec;
        next.set(spec.name, existing);
        continue;
      }
      next.set(spec.name, { spec, timer: undefined, fetching: undefined, lastRefreshAtMs: undefined });
    }
    for (const [name, entry] of this.#nodes) {
      if (next.get(name) !== entry) retire(entry);
    }
    const added = [...next.values()].filter((entry) => !this.#isTracked(entry));
    this.#nodes = next;
    if (this.#running) for (const entry of added) this.#activate(entry);
  }

  /**
   * Applies new timing (config reload). A changed interval restarts every node's timer from now,
   * so a shorter interval does not wait out the old one; rounds in flight are left alone.
   */
  setTiming(timing: { readonly intervalMs: number; readonly minRefreshIntervalMs: number }): void {
    this.#minRefreshIntervalMs = timing.minRefreshIntervalMs;
    if (timing.intervalMs === this.#intervalMs) return;
    this.#intervalMs = timing.intervalMs;
    if (!this.#running) return;
    for (const entry of this.#nodes.values()) {
      entry.timer?.cancel();
      this.#schedule(entry);
    }
  }

  /**
   * Runs a round now for the named nodes (unknown names are ignored) and resolves when those
   * rounds have been reported. A node with a fetch in flight joins it; a node whose last refresh
   * started less than minRefreshIntervalMs ago is skipped. Never rejects, but waits as long as
   * the fetches take: callers that must not wait long race it against their own deadline.
   * Before start and after stop it fetches nothing and resolves at once.
   *
   * `fresh`: the listing must be asked after this call (a model was just loaded or unloaded): the
   * cool-down does not apply, and a fetch already in flight is waited for, then followed by a new one.
   */
  async refresh(nodeNames: readonly string[], options: { readonly fresh?: boolean } = {}): Promise<void> {
    if (!this.#running) return;
    const rounds: Promise<void>[] = [];
    const nowMs = this.#options.clock.monotonicMs();
    for (const name of new Set(nodeNames)) {
      const entry = this.#nodes.get(name);
      if (entry === undefined) continue;
      if (options.fresh === true) {
        entry.lastRefreshAtMs = nowMs;
        rounds.push(this.#freshRound(entry));
        continue;
      }
      if (entry.fetching !== undefined) {
        rounds.push(entry.fetching.done);
        continue;
      }
      if (entry.lastRefreshAtMs !== undefined && nowMs - entry.lastRefreshAtMs < this.#minRefreshIntervalMs) continue;
      entry.lastRefreshAtMs = nowMs;
      rounds.push(this.#poll(entry).done);
    }
    await Promise.all(rounds);
  }

  /** Aborts every in-flight fetch and cancels every timer; later results are dropped. Final. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#running = false;
    for (const entry of this.#nodes.values()) retire(entry);
    this.#nodes = new Map();
  }

  /** A round started after any round in flight now has been reported (unless the node goes away meanwhile). */
  async #freshRound(entry: NodeEntry): Promise<void> {
    const earlier = entry.fetching;
    if (earlier !== undefined) await earlier.done;
    if (!this.#running || !this.#isTracked(entry)) return;
    // Another caller may have started the round after ours began waiting: that one is fresh too.
    const current = entry.fetching;
    await (current !== undefined && current !== earlier ? current : this.#poll(entry)).done;
  }

  #isTracked(entry: NodeEntry): boolean {
    return this.#nodes.get(entry.spec.name) === entry;
  }

  #activate(entry: NodeEntry, spreadMs = 0): void {
    this.#schedule(entry, spreadMs);
    this.#poll(entry);
  }

  #schedule(entry: NodeEntry, spreadMs = 0): void {
    entry.timer = this.#options.clock.setTimeout(() => {
      if (!this.#running || !this.#isTracked(entry)) return;
      this.#schedule(entry);
      // A round still in flight makes this one a no-op: at most one fetch per node.
      this.#poll(entry);
    }, this.#intervalMs + spreadMs);
  }

  #poll(entry: NodeEntry): Fetching {
    if (entry.fetching !== undefined) return entry.fetching;
    const controller = new AbortController();
    const { promise: done, resolve } = Promise.withResolvers<void>();
    const fetching: Fetching = { controller, done };
    const settle = (): void => {
      if (entry.fetching === fetching) entry.fetching = undefined;
      resolve();
    };
    entry.fetching = fetching;
    // Joiners must not wait on a fetch that ignores its signal once nobody wants its result.
    controller.signal.addEventListener('abort', settle, { once: true });
    const spec = entry.spec;
    const askedAtMs = this.#options.clock.monotonicMs();
    void invokeFetch(this.#options.fetch, spec, controller.signal).then((result) => {
      if (controller.signal.aborted) return;
      try {
        this.#options.onResult(spec.name, result, askedAtMs);
      } catch (error) {
        // A throwing consumer must not become an unhandled rejection, nor stop this node's loop.
        this.#options.onError?.(spec.name, error);
      } finally {
        settle();
      }
    });
    return fetching;
  }
}

function retire(entry: NodeEntry): void {
  entry.timer?.cancel();
  entry.timer = undefined;
  entry.fetching?.controller.abort(new Error(`discovery of node '${entry.spec.name}' stopped`));
}

async function invokeFetch(fetch: FetchModels, spec: NodeSpec, signal: AbortSignal): Promise<DiscoveryResult> {
  try {
    return await fetch(spec, signal);
  } catch (error) {
    return { ok: false, reason: 'error', error: error instanceof Error ? error.message : String(error) };
  }
}

// The shape the health and load loops share: each node on its own timer, at most one round in
// flight per node, a reload's node change applied without disturbing the nodes it keeps. It holds no
// state about the nodes' answers; every finished round goes to `onResult`.

import type { Clock, Timer } from '#src/core/clock.ts';
import { diffNodes, type NodeChange, type NodeSpec } from '#src/config/index.ts';
import { spreadDelayMs } from '#src/core/poll-spread.ts';

export interface PerNodeLoopOptions<R> {
  readonly clock: Clock;
  readonly intervalMs: number;
  /** One round for a node; must honour `signal`. */
  readonly run: (node: NodeSpec, signal: AbortSignal) => Promise<R>;
  /** The result a rejected round stands for. */
  readonly failed: (error: unknown) => R;
  /** Called for a round that finished while its node is still watched and the loop runs. */
  readonly onResult: (node: NodeSpec, result: R) => void;
  /** A node's cadence when it differs from the loop's (e.g. while it wakes); undefined = the loop's. */
  readonly cadenceOf?: (nodeName: string) => number | undefined;
}

interface Watched {
  spec: NodeSpec;
  timer: Timer | undefined;
  inFlight: AbortController | undefined;
}

export class PerNodeLoop<R> {
  readonly #options: PerNodeLoopOptions<R>;
  readonly #watched = new Map<string, Watched>();
  #intervalMs: number;
  #running = false;

  constructor(options: PerNodeLoopOptions<R>) {
    this.#options = options;
    this.#intervalMs = options.intervalMs;
  }

  /** Starts every node's first round at once; a large fleet's later rounds are spread over one interval. */
  start(signal: AbortSignal): void {
    this.#running = true;
    signal.addEventListener('abort', () => this.stop(), { once: true });
    let index = 0;
    const count = this.#watched.size;
    for (const watched of this.#watched.values()) this.#tick(watched, spreadDelayMs(index++, count, this.#intervalMs));
  }

  stop(): void {
    this.#running = false;
    for (const watched of this.#watched.values()) this.#forget(watched);
  }

  /** A new cadence takes effect at once (each node's next round is rescheduled), not after the old one. */
  setIntervalMs(intervalMs: number): void {
    if (intervalMs === this.#intervalMs) return;
    this.#intervalMs = intervalMs;
    if (!this.#running) return;
    for (const watched of this.#watched.values()) {
      watched.timer?.cancel();
      this.#schedule(watched, intervalMs);
    }
  }

  /** Replaces the watched set, judging each node against the set watched now (see `applyChange`). */
  setNodes(nodes: readonly NodeSpec[]): void {
    this.applyChange(
      diffNodes(
        [...this.#watched.values()].map((w) => w.spec),
        nodes,
      ),
    );
  }

  /**
   * Applies a reload's node change, computed against the set watched now: kept and relisted nodes
   * keep their cadence (with the new spec); added and replaced ones start a round at once; removed
   * and replaced ones stop (their round is aborted).
   */
  applyChange(change: NodeChange): void {
    for (const spec of change.nodesRemoved) {
      const watched = this.#watched.get(spec.name);
      if (watched === undefined) continue;
      this.#forget(watched);
      this.#watched.delete(spec.name);
    }
    const carriedOn = new Set([...change.nodesKept, ...change.nodesRelisted].map((pair) => pair.next.name));
    for (const spec of change.nodes) {
      const existing = this.#watched.get(spec.name);
      if (existing !== undefined && carriedOn.has(spec.name)) {
        existing.spec = spec;
        continue;
      }
      if (existing !== undefined) this.#forget(existing);
      const watched: Watched = { spec, timer: undefined, inFlight: undefined };
      this.#watched.set(spec.name, watched);
      if (this.#running) this.#tick(watched);
    }
  }

  /** Starts a node's round now (unless one is running) and reschedules its timer from now. */
  runNow(nodeName: string): void {
    const watched = this.#watched.get(nodeName);
    if (watched !== undefined && this.#running) this.#tick(watched);
  }

  has(nodeName: string): boolean {
    return this.#watched.has(nodeName);
  }

  /** The node's next round in `ms`; the timer that fires is forgotten first (a fired timer is not cancelled). */
  #schedule(watched: Watched, ms: number): void {
    const timer = this.#options.clock.setTimeout(() => {
      if (watched.timer === timer) watched.timer = undefined;
      this.#tick(watched);
    }, ms);
    watched.timer = timer;
  }

  #tick(watched: Watched, spreadMs = 0): void {
    watched.timer?.cancel();
    const cadence = this.#options.cadenceOf?.(watched.spec.name) ?? this.#intervalMs;
    this.#schedule(watched, cadence + spreadMs);
    if (watched.inFlight !== undefined) return;
    const controller = new AbortController();
    watched.inFlight = controller;
    const spec = watched.spec;
    this.#options
      .run(spec, controller.signal)
      .catch((error: unknown) => this.#options.failed(error))
      .then((result) => {
        if (watched.inFlight !== controller) return;
        watched.inFlight = undefined;
        if (this.#watched.get(spec.name) === watched && this.#running) this.#options.onResult(spec, result);
      });
  }

  #forget(watched: Watched): void {
    watched.timer?.cancel();
    watched.timer = undefined;
    watched.inFlight?.abort();
    watched.inFlight = undefined;
  }
}

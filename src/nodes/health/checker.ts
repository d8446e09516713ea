// The health loop: each node is probed on its own timer, at most one probe in flight per node.
// It holds no health state; outcomes go to `onProbe`, and the registry applies observeProbe().

import type { Clock, Timer } from '#src/core/clock.ts';
import type { Service } from '#src/core/lifecycle.ts';
import { diffNodes, type NodeChange, type NodeSpec } from '#src/config/index.ts';
import type { ProbeOutcome } from './health-state.ts';

export interface HealthCheckerOptions {
  readonly clock: Clock;
  readonly intervalMs: number;
  readonly probe: (node: NodeSpec, signal: AbortSignal) => Promise<ProbeOutcome>;
  readonly onProbe: (nodeName: string, outcome: ProbeOutcome) => void;
}

interface Watched {
  spec: NodeSpec;
  timer: Timer | undefined;
  inFlight: AbortController | undefined;
  /** A faster cadence until this monotonic time (a node being woken). */
  fast: { intervalMs: number; untilMs: number } | undefined;
}

export class HealthChecker implements Service {
  readonly name = 'health-checker';
  readonly #options: HealthCheckerOptions;
  readonly #watched = new Map<string, Watched>();
  #intervalMs: number;
  #running = false;

  constructor(options: HealthCheckerOptions) {
    this.#options = options;
    this.#intervalMs = options.intervalMs;
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#running = true;
    signal.addEventListener('abort', () => void this.stop(), { once: true });
    for (const watched of this.#watched.values()) this.#tick(watched);
  }

  async stop(): Promise<void> {
    this.#running = false;
    for (const watched of this.#watched.values()) this.#forget(watched);
  }

  /** A new cadence takes effect at once (each node's next probe is rescheduled), not after the old one. */
  setIntervalMs(intervalMs: number): void {
    if (intervalMs === this.#intervalMs) return;
    this.#intervalMs = intervalMs;
    if (!this.#running) return;
    for (const watched of this.#watched.values()) {
      watched.timer?.cancel();
      watched.timer = this.#options.clock.setTimeout(() => this.#tick(watched), intervalMs);
    }
  }

  /** Replaces the watched set, judging each node against the set watched now (see `applyChange`). */
  setNodes(nodes: readonly NodeSpec[]): void {
    this.applyChange(diffNodes([...this.#watched.values()].map((w) => w.spec), nodes));
  }

  /**
   * Applies a reload's node change, computed against the set watched now: kept and relisted nodes
   * keep their cadence (with the new spec); added and replaced ones are probed at once; removed
   * and replaced ones stop (their probe is aborted).
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
      const watched: Watched = { spec, timer: undefined, inFlight: undefined, fast: undefined };
      this.#watched.set(spec.name, watched);
      if (this.#running) this.#tick(watched);
    }
  }

  /** Probes one node now (unless a probe is already running) instead of waiting for its timer. */
  probeNow(nodeName: string): void {
    const watched = this.#watched.get(nodeName);
    if (watched !== undefined && this.#running) this.#tick(watched);
  }

  /** Probes a node every `intervalMs` for `durationMs` (e.g. while it wakes), starting now. */
  probeFaster(nodeName: string, intervalMs: number, durationMs: number): void {
    const watched = this.#watched.get(nodeName);
    if (watched === undefined) return;
    watched.fast = { intervalMs, untilMs: this.#options.clock.monotonicMs() + durationMs };
    if (this.#running) this.#tick(watched);
  }

  /** Back to the normal cadence for a node (it answered). */
  probeNormally(nodeName: string): void {
    const watched = this.#watched.get(nodeName);
    if (watched !== undefined) watched.fast = undefined;
  }

  #tick(watched: Watched): void {
    watched.timer?.cancel();
    const fast = watched.fast !== undefined && watched.fast.untilMs > this.#options.clock.monotonicMs() ? watched.fast : undefined;
    if (fast === undefined) watched.fast = undefined;
    watched.timer = this.#options.clock.setTimeout(() => this.#tick(watched), fast?.intervalMs ?? this.#intervalMs);
    if (watched.inFlight !== undefined) return;
    const controller = new AbortController();
    watched.inFlight = controller;
    this.#options
      .probe(watched.spec, controller.signal)
      .catch((error: unknown): ProbeOutcome => ({ ok: false, error: String(error) }))
      .then((outcome) => {
        if (watched.inFlight !== controller) return;
        watched.inFlight = undefined;
        if (this.#watched.get(watched.spec.name) === watched && this.#running) {
          this.#options.onProbe(watched.spec.name, outcome);
        }
      });
  }

  #forget(watched: Watched): void {
    watched.timer?.cancel();
    watched.timer = undefined;
    watched.inFlight?.abort();
    watched.inFlight = undefined;
  }
}

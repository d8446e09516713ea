// The health loop: each node is probed on its own timer, at most one probe in flight per node
// (the per-node loop), faster for a while when asked (a node being woken). It holds no health
// state; outcomes go to `onProbe`, and the registry applies observeProbe().

import type { Clock } from '#src/core/clock.ts';
import type { Service } from '#src/core/lifecycle.ts';
import type { NodeChange, NodeSpec } from '#src/config/index.ts';
import { PerNodeLoop } from '../per-node-loop.ts';
import type { ProbeOutcome } from './health-state.ts';

export interface HealthCheckerOptions {
  readonly clock: Clock;
  readonly intervalMs: number;
  readonly probe: (node: NodeSpec, signal: AbortSignal) => Promise<ProbeOutcome>;
  readonly onProbe: (nodeName: string, outcome: ProbeOutcome) => void;
}

export class HealthChecker implements Service {
  readonly name = 'health-checker';
  readonly #clock: Clock;
  readonly #loop: PerNodeLoop<ProbeOutcome>;
  /** Nodes probed at a faster cadence until a monotonic time (nodes being woken). */
  readonly #fast = new Map<string, { intervalMs: number; untilMs: number }>();

  constructor(options: HealthCheckerOptions) {
    this.#clock = options.clock;
    this.#loop = new PerNodeLoop<ProbeOutcome>({
      clock: options.clock,
      intervalMs: options.intervalMs,
      run: options.probe,
      failed: (error) => ({ ok: false, error: String(error) }),
      onResult: (node, outcome) => options.onProbe(node.name, outcome),
      cadenceOf: (node) => this.#fastCadence(node),
    });
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#loop.start(signal);
  }

  async stop(): Promise<void> {
    this.#loop.stop();
  }

  setIntervalMs(intervalMs: number): void {
    this.#loop.setIntervalMs(intervalMs);
  }

  setNodes(nodes: readonly NodeSpec[]): void {
    this.#loop.setNodes(nodes);
  }

  applyChange(change: NodeChange): void {
    for (const spec of change.nodesRemoved) this.#fast.delete(spec.name);
    for (const pair of change.nodesReplaced) this.#fast.delete(pair.next.name);
    this.#loop.applyChange(change);
  }

  /** Probes one node now (unless a probe is already running) instead of waiting for its timer. */
  probeNow(nodeName: string): void {
    this.#loop.runNow(nodeName);
  }

  /** Probes a node every `intervalMs` for `durationMs` (e.g. while it wakes), starting now. */
  probeFaster(nodeName: string, intervalMs: number, durationMs: number): void {
    if (!this.#loop.has(nodeName)) return;
    this.#fast.set(nodeName, { intervalMs, untilMs: this.#clock.monotonicMs() + durationMs });
    this.#loop.runNow(nodeName);
  }

  /** Back to the normal cadence for a node (it answered). */
  probeNormally(nodeName: string): void {
    this.#fast.delete(nodeName);
  }

  #fastCadence(nodeName: string): number | undefined {
    const fast = this.#fast.get(nodeName);
    if (fast === undefined) return undefined;
    if (fast.untilMs > this.#clock.monotonicMs()) return fast.intervalMs;
    this.#fast.delete(nodeName);
    return undefined;
  }
}

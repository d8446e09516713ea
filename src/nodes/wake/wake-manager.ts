// Wakes sleeping nodes on demand: at most one wake per node per wake window (its wake_timeout),
// however many requests or operators ask (wake-decision.ts); while it wakes its health is probed
// at a faster cadence.

import type { Clock } from '#src/core/clock.ts';
import type { WakeSpec } from '#src/config/types.ts';
import type { NodeRegistry } from '../registry.ts';
import type { WakeDelivery } from './send-wake.ts';
import { decideWake } from './wake-decision.ts';

export type WakeResult = 'sent' | 'in_window' | 'failed' | 'not_wakeable' | 'unknown_node';

export interface WakeManagerOptions {
  readonly clock: Clock;
  readonly registry: NodeRegistry;
  /** Delivers the wake; `target` names the node and its window (replicas send one per window between them). */
  readonly send: (spec: WakeSpec, target: { readonly node: string; readonly windowMs: number }) => Promise<WakeDelivery>;
  /** Start a faster health cadence for the node for `durationMs`. */
  readonly probeFaster: (nodeName: string, durationMs: number) => void;
  readonly onResult: (nodeName: string, result: WakeResult, detail: { reason: string; error?: string }) => void;
}

export class WakeManager {
  readonly #options: WakeManagerOptions;
  /** Nodes whose wake is being delivered now; checked and set with no await in between. */
  readonly #inFlight = new Set<string>();

  constructor(options: WakeManagerOptions) {
    this.#options = options;
  }

  /** Wakes `nodeName` unless a wake is in flight or its window is open (then: 'in_window'). */
  async wake(nodeName: string, reason: string): Promise<WakeResult> {
    const { registry, clock } = this.#options;
    const view = registry.view(nodeName);
    const report = (result: WakeResult, error?: string): WakeResult => {
      this.#options.onResult(nodeName, result, error === undefined ? { reason } : { reason, error });
      return result;
    };
    if (view === undefined) return report('unknown_node');
    const spec = view.spec.wake;
    if (spec === undefined) return report('not_wakeable');
    const decision = decideWake({
      inFlight: this.#inFlight.has(nodeName),
      lastSentAt: view.wake.lastSentAt,
      windowMs: view.spec.wakeTimeoutMs,
      now: clock.now(),
    });
    if (decision === 'in_window') return report('in_window');
    this.#inFlight.add(nodeName);
    try {
      registry.markWakeSent(nodeName);
      this.#options.probeFaster(nodeName, view.spec.wakeTimeoutMs);
      const delivery = await this.#options.send(spec, { node: nodeName, windowMs: view.spec.wakeTimeoutMs });
      if (delivery.ok) return report(delivery.elsewhere === true ? 'in_window' : 'sent');
      return report('failed', delivery.error);
    } finally {
      this.#inFlight.delete(nodeName);
    }
  }
}

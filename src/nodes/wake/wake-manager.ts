// Wakes sleeping nodes on demand: at most one wake per node per wake window (its wake_timeout),
// however many requests are waiting; while it wakes its health is probed at a faster cadence.

import type { Clock } from '#src/core/clock.ts';
import type { WakeSpec } from '#src/config/types.ts';
import type { NodeRegistry } from '../registry.ts';
import type { WakeDelivery } from './send-wake.ts';

export type WakeResult = 'sent' | 'in_window' | 'failed' | 'not_wakeable' | 'unknown_node';

export interface WakeManagerOptions {
  readonly clock: Clock;
  readonly registry: NodeRegistry;
  readonly send: (spec: WakeSpec) => Promise<WakeDelivery>;
  /** Start a faster health cadence for the node for `durationMs`. */
  readonly probeFaster: (nodeName: string, durationMs: number) => void;
  readonly onResult: (nodeName: string, result: WakeResult, detail: { reason: string; error?: string }) => void;
}

export class WakeManager {
  readonly #options: WakeManagerOptions;

  constructor(options: WakeManagerOptions) {
    this.#options = options;
  }

  /**
   * Wakes `nodeName` unless a wake is already under way (`force` sends anyway, for a manual wake).
   * The window opens before the packet goes out, so concurrent callers never send twice.
   */
  async wake(nodeName: string, reason: string, force = false): Promise<WakeResult> {
    const { registry } = this.#options;
    const view = registry.view(nodeName);
    const report = (result: WakeResult, error?: string): WakeResult => {
      this.#options.onResult(nodeName, result, error === undefined ? { reason } : { reason, error });
      return result;
    };
    if (view === undefined) return report('unknown_node');
    const spec = view.spec.wake;
    if (spec === undefined) return report('not_wakeable');
    if (view.wake.waking && !force) return report('in_window');
    registry.markWakeSent(nodeName);
    this.#options.probeFaster(nodeName, view.spec.wakeTimeoutMs);
    const delivery = await this.#options.send(spec);
    return delivery.ok ? report('sent') : report('failed', delivery.error);
  }
}

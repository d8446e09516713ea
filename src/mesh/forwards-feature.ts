// The forwards feature, wiring only: the requests this gateway forwards to other sites and those
// that reach it claiming to be forwarded — their series (forwarding/forward-metrics.ts) and their
// transition logs (forwarding/forward-log.ts). On every gateway, [mesh] or not: a request plane
// without [mesh] refuses a claimed forward, and counts and logs it (proxy/sites/refused-forwards.ts).
// Nothing of it runs for a request that is no forward.

import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Feature } from '#src/core/feature.ts';
import type { GatewayConfig } from '#src/config/types.ts';
import type { ForwardEvents } from './forwarding/forward-events.ts';
import { subscribeForwardLogs } from './forwarding/forward-log.ts';
import { registerForwardMetrics } from './forwarding/forward-metrics.ts';

export interface ForwardsFeatureDeps {
  readonly logger: Logger;
  /** The request plane's forwarding events (subscribed by the feature list). */
  readonly events: ForwardEvents;
}

export class ForwardsFeature implements Feature<GatewayConfig> {
  readonly name = 'forwards';
  readonly #events: ForwardEvents;
  readonly #offs: (() => void)[];

  constructor(deps: ForwardsFeatureDeps) {
    this.#events = deps.events;
    this.#offs = subscribeForwardLogs(deps.logger, deps.events);
  }

  metrics(registry: Registry): void {
    this.#offs.push(...registerForwardMetrics(registry, this.#events));
  }

  start(): void {}

  stop(): void {
    for (const off of this.#offs.splice(0)) off();
  }
}

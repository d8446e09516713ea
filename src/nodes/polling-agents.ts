// The HTTP agents the control loops poll the fleet through: one per purpose, so a slow listing
// never holds up a health probe. Each keeps one keep-alive connection per node (undici then makes
// a `Client` per origin, not a `Pool`: a pool carries a 2,048-slot request queue, about 16 KB, and
// 1,000 nodes × 3 purposes of them were a third of the live heap). One connection is enough: the
// loops send at most one round per node at a time, and a router's per-model capacity requests take
// their turn on it within the round's deadline.

import { Agent, type Dispatcher } from 'undici';

/** How long an idle polling connection is kept: longer than any poll interval worth keeping one for. */
export const POLL_KEEP_ALIVE_MS = 10_000;

export interface PollingAgents {
  readonly health: Dispatcher;
  readonly discovery: Dispatcher;
  readonly capacity: Dispatcher;
  readonly load: Dispatcher;
  /** Closes every connection at once (shutdown). */
  destroy(): Promise<void>;
}

export function pollingAgents(): PollingAgents {
  const agent = (): Agent => new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: POLL_KEEP_ALIVE_MS });
  const health = agent();
  const discovery = agent();
  const capacity = agent();
  const load = agent();
  return {
    health,
    discovery,
    capacity,
    load,
    async destroy() {
      await Promise.all([health.destroy(), discovery.destroy(), capacity.destroy(), load.destroy()]);
    },
  };
}

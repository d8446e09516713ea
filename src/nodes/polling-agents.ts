// The HTTP agents the control loops poll the fleet through: one for health probes, one for every
// read of a node's state (its model listing, the capacity requests that follow it in the same round,
// its load scrape). Each keeps one keep-alive connection per node (undici then makes a `Client` per
// origin, not a `Pool`: a pool carries a 2,048-slot request queue, about 16 KB, and 1,000 nodes × 3
// purposes of them were a third of the live heap), so a node costs two polling connections.
// A connection (socket, stream state, HTTP parser, undici client, timers) is about 3 KB of heap:
// four per node were ~12 MB at 1,000 nodes (issue 28, lean process).
// The probe has its own connection so that a slow or hung listing never holds up a health probe;
// a load scrape may wait behind its node's listing round, which the discovery timeout bounds (each
// request also keeps its own deadline, counted from when it was asked).
// A router's model event stream (model-push.ts) holds its connection open: it has an agent of its
// own, so a router costs a third connection and no other node any.

import type { Dispatcher } from 'undici';
import { Agent } from '#src/core/undici-parts.ts';

/** How long an idle polling connection is kept: longer than any poll interval worth keeping one for. */
export const POLL_KEEP_ALIVE_MS = 10_000;

export interface PollingAgents {
  readonly health: Dispatcher;
  readonly discovery: Dispatcher;
  readonly capacity: Dispatcher;
  readonly load: Dispatcher;
  /** Model event streams: one long-lived connection per router node. */
  readonly events: Dispatcher;
  /** Closes every connection at once (shutdown). */
  destroy(): Promise<void>;
}

export function pollingAgents(): PollingAgents {
  const agent = (): Agent => new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: POLL_KEEP_ALIVE_MS });
  const probes = agent();
  const reads = agent();
  const streams = agent();
  return {
    health: probes,
    discovery: reads,
    capacity: reads,
    load: reads,
    events: streams,
    async destroy() {
      await Promise.all([probes.destroy(), reads.destroy(), streams.destroy()]);
    },
  };
}

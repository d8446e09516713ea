// Pure: the load a site's record carries — requests in flight through the gateway, requests waiting
// in its queues, and the slots of its healthy nodes (the figure remote sites rank it by).

import type { NodeView } from '#src/nodes/index.ts';
import type { SiteRecordLoad } from './site-record.ts';

/** A node's slots: a single server's own figure, else the sum over the models it reports; 0 = unknown. */
export function nodeSlots(view: NodeView): number {
  const host = view.capacity.host?.slots;
  if (host !== undefined && host > 0) return host;
  let slots = 0;
  for (const figures of Object.values(view.capacity.models)) slots += Math.max(0, figures.slots ?? 0);
  return slots;
}

export function siteLoad(
  views: readonly NodeView[],
  inFlight: (node: string) => number,
  queueDepths: Readonly<Record<string, number>>,
): SiteRecordLoad {
  let in_flight = 0;
  let slots = 0;
  for (const view of views) {
    in_flight += inFlight(view.spec.name);
    if (view.health.status === 'healthy') slots += nodeSlots(view);
  }
  const queued = Object.values(queueDepths).reduce((sum, n) => sum + n, 0);
  return { in_flight, queued, slots };
}

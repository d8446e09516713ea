// How many more of a job's lines for one model may start now (pure): only into room that
// interactive and standard work does not want — the free slots of the healthy nodes that list the
// model (each node's slots less its requests in flight, batch lines among them), none while anyone
// waits in the model's queue, and never more of the runner's own lines in flight than those nodes
// have slots (a line sent but not yet admitted is not counted in flight by the fleet). An idle fleet
// gets as many lines as it has slots: as fast as it allows.
//
// A node whose slots the gateway does not know (no capacity figures for the model: vLLM, SGLang)
// is not queued for by the gateway — a request goes to it at once and its engine batches it in —
// so there the batch must never fill the node past where its own scheduler starts to queue: it is
// counted `[batch] unknown_node_slots` slots (4), and none is free while the node's own fresh load
// figures ([load]: vLLM `num_requests_waiting`, SGLang `num_queue_reqs`) say requests wait inside
// it — past its real concurrency (`max_num_seqs`, its KV cache), where a line would make an
// interactive request wait in a queue the gateway cannot put it first in. Docs: docs/batch.md, "Spare capacity".

import { slotsFor } from '#src/capacity/index.ts';
import type { NodeView } from '#src/nodes/index.ts';

/** The default count of slots of a node whose slots are not known ([batch] unknown_node_slots). */
export const UNKNOWN_SLOTS = 4;

export interface PaceAsk {
  readonly model: string;
  readonly views: readonly NodeView[];
  readonly inFlight: (node: string) => number;
  /** Requests waiting in the model's queue (any class). */
  readonly queued: number;
  /** The runner's own lines of this model in flight (sent, not yet answered). */
  readonly own: number;
  /** The runner's room left under [batch] max_in_flight. */
  readonly cap: number;
  /** Slots counted for a node whose slots are not known ([batch] unknown_node_slots); absent = UNKNOWN_SLOTS. */
  readonly unknownSlots?: number;
  /** Requests the node's own fresh load figures say wait inside it; undefined = no fresh figures. */
  readonly waitingInside?: (node: string) => number | undefined;
}

export function batchRoom(ask: PaceAsk): number {
  if (ask.queued > 0 || ask.cap <= 0) return 0;
  let slots = 0;
  let free = 0;
  for (const view of ask.views) {
    if (view.health.status !== 'healthy' || !view.modelsById.has(ask.model)) continue;
    const known = slotsFor(view, ask.model);
    const node = known ?? ask.unknownSlots ?? UNKNOWN_SLOTS;
    slots += node;
    // Slots not known: a node that queues inside itself has no room, whatever the count says.
    if (known === undefined && (ask.waitingInside?.(view.spec.name) ?? 0) > 0) continue;
    free += Math.max(0, node - ask.inFlight(view.spec.name));
  }
  // No node lists the name (an alias the gateway resolves, a model gone): one line at a time, answered as the gateway answers it.
  if (slots === 0) return Math.min(ask.cap, Math.max(0, 1 - ask.own));
  return Math.max(0, Math.min(ask.cap, free, slots - ask.own));
}

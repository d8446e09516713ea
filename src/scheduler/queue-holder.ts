// Pure: who holds the requests that wait for a model switch on one limited router — the router
// itself (a llama-server router from build 10313 queues per model: FIFO, waiters merged, a busy model
// never evicted; docs/protocols.md §7.z5) or the gateway (router-room, one switch at a time, its own
// victim unloaded first). The gateway never queues a second time where the router would; it holds
// them where the router cannot be trusted with them, or where something the router does not know
// (pins, tenants' shares, other replicas) decides the order. Decided per node over plain data.

import type { RouterQueueFact } from '#src/kinds/index.ts';

/** `[routing] router_queue`: `auto` lets a router that queues itself do so; `gateway` always holds in the gateway. */
export type RouterQueueMode = 'auto' | 'gateway';

/** What the gateway's config says about queueing, read for every limited router. */
export interface SwitchQueueConfig {
  readonly mode: RouterQueueMode;
  /** Tenants whose requests the gateway's fair queue orders (priority classes, weights). */
  readonly tenants: number;
  /** `[cluster]`: replicas claim a router's switches in the store. */
  readonly replicas: boolean;
}

export interface QueueHolderFacts extends SwitchQueueConfig {
  /** The router's `--models-max` (undefined: not a limited router). */
  readonly maxInstances: number | undefined;
  /** Whether its build queues itself (kinds/router-queue.ts). */
  readonly routerQueue: RouterQueueFact;
  /** How many models the router lists. */
  readonly models: number;
  /** Its listed models the gateway keeps loaded or never switches out (pin, warm, preload). */
  readonly protectedModels: readonly string[];
}

export interface QueueHolder {
  readonly holder: 'router' | 'gateway';
  readonly reason: string;
}

/** The default config: the router queues where it can, nothing else to order. */
export const SWITCH_QUEUE_DEFAULT: SwitchQueueConfig = Object.freeze({ mode: 'auto', tenants: 0, replicas: false });

export function queueHolder(facts: QueueHolderFacts): QueueHolder {
  const gateway = (reason: string): QueueHolder => ({ holder: 'gateway', reason });
  const max = facts.maxInstances;
  if (max === undefined || max <= 0) return gateway('not a limited router: no switch to wait for');
  if (facts.mode === 'gateway') return gateway('routing.router_queue = "gateway"');
  if (facts.routerQueue.state !== 'queues') return gateway(facts.routerQueue.detail);
  if (facts.replicas) return gateway('[cluster] replicas claim its switches in the store');
  if (facts.tenants > 1)
    return gateway(`${facts.tenants} tenants share its queue by class and weight; the router's queue is FIFO`);
  if (facts.protectedModels.length > 0)
    return gateway(`${facts.protectedModels.join(', ')} must stay loaded (pin, warm, preload); the router's LRU would unload it`);
  if (facts.models > max + 1)
    return gateway(
      `${facts.models} models for --models-max ${max}: two models queued while one victim exits both count on it, and the second then waits for a new request (§7.z5)`,
    );
  return { holder: 'router', reason: `${facts.routerQueue.detail}; the gateway does not hold its switches` };
}

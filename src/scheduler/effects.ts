// The scheduler's only ways to reach outside itself (llama-swap's Scheduler/Effects split: events
// in, effects out). The gateway wires them to the registry, discoverer and wake manager; tests use
// a recording fake, so every waiting rule is checked synchronously, without processes or sleeps.

import type { Lease, RoutingSnapshot } from '#src/nodes/index.ts';
import type { RouteRequest, RoutingDecision } from '#src/routing/index.ts';

/** Something the scheduler tells the outside world about without expecting an answer. */
export type SchedulerNotice =
  /** The first routing decision of a request, when it excluded a node (metrics count its exclusions). */
  | { readonly kind: 'decided'; readonly req: RouteRequest; readonly decision: RoutingDecision }
  /** A refresh-on-miss re-listing failed (the request goes on with what routing knows). */
  | { readonly kind: 'refresh-failed'; readonly error: unknown }
  /** A request was sent that makes a full router evict a model to load `model` (gateway_model_switches_total). */
  | { readonly kind: 'switch'; readonly node: string; readonly model: string };

export interface SchedulerEffects {
  /** The fleet as routing sees it right now (nodes, in-flight counts, slot and budget usage). */
  snapshot(): RoutingSnapshot;
  /** Takes one lease on a node in the same tick as the decision; undefined if the node is gone. */
  claim(node: string, model: string, tokens: number): Lease | undefined;
  /** Re-lists these nodes' models now; settles when their listings have been applied. */
  refreshListings(nodes: readonly string[]): Promise<unknown>;
  /** Sends a wake to an asleep node (fire and forget: the registry tracks the wake window). */
  wake(node: string, reason: string): void;
  notify(notice: SchedulerNotice): void;
  /**
   * Unloads the idle `victim` on `node` (confirmed by its listing) before a request loads `model`
   * there: the router then has room and evicts nothing of its own choosing. Absent: the router picks.
   */
  evict?(node: string, victim: string, model: string): Promise<EvictionResult>;
}

export type EvictionResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

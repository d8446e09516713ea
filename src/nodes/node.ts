// What the rest of the gateway sees of a node: a frozen projection of the registry's state.

import type { NodeSpec } from '#src/config/types.ts';
import type { DiscoveryState } from '#src/discovery/index.ts';
import type { HealthState } from './health/health-state.ts';

export interface NodeView {
  readonly spec: NodeSpec;
  readonly health: HealthState;
  readonly discovery: DiscoveryState;
}

/** What routing decides over: the active nodes and their live in-flight counts. */
export interface RoutingSnapshot {
  readonly nodes: readonly NodeView[];
  inFlight(nodeName: string): number;
}

/** A claim on one node for one upstream attempt; release exactly once (extra calls are ignored). */
export interface NodeLease {
  readonly nodeName: string;
  release(): void;
}

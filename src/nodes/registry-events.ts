// The events the registry publishes when node state changes; metrics, transition logs, the
// admission queue and passive-health re-probes subscribe to them (nothing imports the registry for this).

import type { DiscoveryResult, DiscoveryState, PushOutcome, StreamStop } from '#src/discovery/index.ts';
import type { ModelEvent } from '#src/kinds/index.ts';
import type { NodeCapacity } from '#src/capacity/index.ts';
import type { HealthState, ProbeOutcome } from './health/health-state.ts';

export interface RegistryEvents {
  'node:health-changed': { readonly node: string; readonly from: HealthState; readonly to: HealthState };
  'node:probed': { readonly node: string; readonly outcome: ProbeOutcome };
  'node:discovery': {
    readonly node: string;
    readonly result: DiscoveryResult;
    readonly from: DiscoveryState;
    readonly to: DiscoveryState;
  };
  'node:capacity': { readonly node: string; readonly capacity: NodeCapacity };
  'node:wake': { readonly node: string; readonly result: string; readonly reason: string; readonly error?: string };
  'node:ejected': { readonly node: string; readonly untilMs: number };
  'node:readmitted': { readonly node: string };
  'node:added': { readonly node: string };
  'node:removed': { readonly node: string; readonly inFlight: number };
  /** A node's model event stream opened, stopped (with why and when it is tried again), or sent a frame it could not read. */
  'node:model-events': { readonly node: string; readonly open: boolean; readonly stop?: StreamStop; readonly badFrame?: string };
  /** One pushed model event read, and what came of it (`models`: applied; `relist`: a listing was asked; `none`: nothing changed). */
  'node:model-event': { readonly node: string; readonly event: ModelEvent; readonly applied: PushOutcome['kind'] | 'ignored' };
}

// Federation's share of the gateway's parts: the remote sites' connection pools and the request
// path's forwarding dependencies, built only when the gateway is a site of a mesh.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { UpstreamConfig } from '#src/config/types.ts';
import type { MeshLink } from '#src/mesh/forwarding/index.ts';
import { remoteDeps, UpstreamPools, type HeldBytesBudget, type ProxyEvents, type RemoteDeps } from '#src/proxy/index.ts';

export function sitePoolsFor(mesh: MeshLink | undefined, upstream: UpstreamConfig, clock: Clock): UpstreamPools | undefined {
  return mesh === undefined ? undefined : new UpstreamPools(upstream, { clock });
}

export interface RemoteParts {
  readonly pools: UpstreamPools | undefined;
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
  readonly heldBudget: HeldBytesBudget;
}

export function remoteDepsFor(mesh: MeshLink | undefined, parts: RemoteParts): RemoteDeps | undefined {
  const { pools } = parts;
  return mesh === undefined || pools === undefined ? undefined : remoteDeps(mesh, { ...parts, pools });
}

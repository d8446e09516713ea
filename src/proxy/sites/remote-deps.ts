// The request path's forwarding dependencies for one event loop: the mesh link, that loop's pools
// to the remote sites, its unreachable-site back-off and its round-robin turn. Built by the gateway
// (one thread) and by each request worker alike.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { MeshLink } from '#src/mesh/forwarding/index.ts';
import { SiteReachability } from '#src/routing/index.ts';
import type { HeldBytesBudget } from '../attempt/held-answer.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import type { RemoteDeps } from './site-target.ts';
import type { UpstreamPools } from '../attempt/upstream-pools.ts';

export interface RemoteParts {
  readonly pools: UpstreamPools;
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
  readonly heldBudget: HeldBytesBudget;
}

export function remoteDeps(mesh: MeshLink, parts: RemoteParts): RemoteDeps {
  const turn = { next: 0 };
  return {
    mesh,
    pools: parts.pools,
    reachability: new SiteReachability(
      () => parts.clock.monotonicMs(),
      (site, reachable, detail) => parts.events.emit('mesh:site-reachability', { site, reachable, detail }),
    ),
    nextTurn: () => turn.next++,
    clock: parts.clock,
    events: parts.events,
    heldBudget: parts.heldBudget,
  };
}

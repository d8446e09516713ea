// Builds a site's gossip transport from its `[mesh]` settings: what the composition root hands the
// gateway as its mesh transport factory. The key is loaded first (it is async: a file read), so the
// factory itself is synchronous, as the gateway's mesh part expects.

import type { PrivateKey } from '@libp2p/interface';
import type { Clock } from '../../core/clock.ts';
import { Libp2pTransport, type TransportEvents } from './libp2p-transport.ts';

export interface GossipFactoryDeps {
  /** The site key as libp2p wants it (mesh-trust's `libp2pPrivateKey(siteKey)`). */
  readonly privateKey: PrivateKey;
  /** `[mesh] max_message_bytes`. */
  readonly maxMessageBytes: number;
  readonly clock: Clock;
  readonly random: () => number;
  readonly events?: TransportEvents;
}

/** The site's addresses come from `[mesh] listen` and `[mesh] peers` (the latter replaced on reload by setPeers). */
export function gossipTransportFactory(
  deps: GossipFactoryDeps,
): (site: { readonly listen: readonly string[]; readonly peers: readonly string[] }) => Libp2pTransport {
  return (site) =>
    new Libp2pTransport({
      privateKey: deps.privateKey,
      listen: site.listen,
      peers: site.peers,
      maxMessageBytes: deps.maxMessageBytes,
      clock: deps.clock,
      random: deps.random,
      ...(deps.events === undefined ? {} : { events: deps.events }),
    });
}

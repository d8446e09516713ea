// The production gossip transport of a site: libp2p gossipsub with the site key as its identity,
// its connection events logged. The mesh part uses it unless a caller injects another transport
// (tests use the in-process memory bus).

import type { Logger } from 'pino';
import type { Clock } from '#src/core/clock.ts';
import type { MeshConfig } from '#src/mesh/config/mesh-config.ts';
import type { MeshTransportFactory } from '#src/mesh/index.ts';
import { gossipTransportFactory } from '#src/mesh/gossip/index.ts';
import { libp2pPrivateKey } from '#src/mesh/site-key-file.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Peers named in the once-per-peer log lines below (a bounded memory: a flood of ids cannot grow it). */
const MAX_NAMED_PEERS = 1_024;

export function libp2pTransportFor(key: SiteKey, config: MeshConfig, clock: Clock, logger: Logger): MeshTransportFactory {
  const refused = new Set<string>();
  const throttled = new Set<string>();
  const once = (seen: Set<string>, peer: string): boolean => {
    if (seen.has(peer)) return false;
    if (seen.size >= MAX_NAMED_PEERS) seen.clear();
    seen.add(peer);
    return true;
  };
  return gossipTransportFactory({
    privateKey: libp2pPrivateKey(key),
    maxMessageBytes: config.maxMessageBytes,
    clock,
    random: Math.random,
    events: {
      dialFailed: (target, attempt, error, nextMs) =>
        logger.warn(
          { peer: target.peerId, addr: target.addr, attempt, next_ms: nextMs, err: message(error) },
          'mesh peer dial failed',
        ),
      badAddress: (addr, problem) => logger.warn({ addr, problem }, 'mesh peer address skipped'),
      oversized: (peer, bytes) =>
        logger.warn({ peer, bytes, max: config.maxMessageBytes }, 'mesh message over max_message_bytes dropped'),
      refused: (peer) => {
        if (once(refused, peer))
          logger.info(
            { peer },
            'mesh connection refused: the peer is no pinned site and not in [mesh] allowed_peers (logged once per peer)',
          );
      },
      throttled: (peer) => {
        if (once(throttled, peer))
          logger.warn(
            { peer, max: config.maxPeerMessagesPerSecond },
            'mesh peer over [mesh] max_peer_messages_per_second: the rest of each second is dropped unjudged (logged once per peer)',
          );
      },
      connected: (peer) => logger.info({ peer }, 'mesh peer connected'),
      disconnected: (peer) => logger.info({ peer }, 'mesh peer disconnected'),
      handlerFailed: (error) => logger.error({ err: error }, 'mesh message handler failed'),
    },
  });
}

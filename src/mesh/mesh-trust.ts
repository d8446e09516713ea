// What one site's config says it trusts in gossip: the pinned keys and urls of the other sites,
// and the peers admitted to stay connected and be heard. Derived afresh from each config (start
// and every reload); pure but for the key decoding the codec does.

import type { KeyObject } from 'node:crypto';
import type { MeshConfig } from '#src/mesh/config/mesh-config.ts';
import type { MeshCodec } from './mesh-codec.ts';
import { addressPeerId } from './site-peer-id.ts';
import type { PeerAdmission } from './transport.ts';

export interface MeshTrust {
  /** Each other pinned site's key, by site id. */
  readonly pins: ReadonlyMap<string, KeyObject>;
  /** The url pinned for each other site that pins one (`[[mesh.sites]] url`). */
  readonly pinnedUrls: ReadonlyMap<string, string>;
  /** Pinned sites' peer ids (a site's peer id is its key), `allowed_peers` and the peers `[mesh] peers` names. */
  readonly admitted: ReadonlySet<string>;
  /** What the transport is told: who may stay connected, and the per-peer message bound. */
  readonly admission: PeerAdmission;
}

export function meshTrust(config: MeshConfig, codec: Pick<MeshCodec, 'pinnedKey' | 'peerIdOf'>): MeshTrust {
  const others = config.sites.filter((p) => p.id !== config.site);
  const pins = new Map(others.map((p) => [p.id, codec.pinnedKey(p.publicKey)] as const));
  const pinnedUrls = new Map(others.flatMap((p) => (p.url !== undefined ? [[p.id, p.url] as const] : [])));
  const bootstrap = config.peers.flatMap((addr) => addressPeerId(addr) ?? []);
  const admitted: ReadonlySet<string> = new Set([
    ...others.map((p) => codec.peerIdOf(p.publicKey)),
    ...config.allowedPeers,
    ...bootstrap,
  ]);
  return { pins, pinnedUrls, admitted, admission: { peers: admitted, maxMessagesPerSecond: config.maxPeerMessagesPerSecond } };
}

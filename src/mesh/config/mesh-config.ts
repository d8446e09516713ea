// The loaded form of `[mesh]` (mesh/mesh-table.ts produces it), its defaults, and how it joins
// GatewayConfig (declaration merging: config/config-table.ts).

import { NODE_NAME_RULE } from '#src/config/schema-parts.ts';

declare module '#src/config/types.ts' {
  interface GatewayConfig {
    /** Federation (`[mesh]`); undefined = the gateway runs alone. */
    readonly mesh?: MeshConfig | undefined;
  }
}

/** Site ids travel in records, metrics labels, headers and logs: the node-name rule keeps them safe there. */
export function isSiteId(text: string): boolean {
  return NODE_NAME_RULE.test(text);
}

/** `[mesh]` has no defaults for site, url, key_file and listen: they are required when the table is present. */
export interface MeshDefaults extends Pick<
  MeshConfig,
  | 'peers'
  | 'maxPeerMessagesPerSecond'
  | 'heartbeatMs'
  | 'maxModelsPerSite'
  | 'maxClockSkewMs'
  | 'maxRememberedForwards'
  | 'maxMessageBytes'
> {
  /** freshness defaults to this many heartbeats. */
  readonly freshnessHeartbeats: number;
}

// docs/config.md restates these; test/unit/config/defaults.test.ts keeps them honest.
// Three missed heartbeats make a site stale: one lost message is not an outage.
export const MESH_DEFAULTS: MeshDefaults = Object.freeze({
  peers: Object.freeze([]),
  maxPeerMessagesPerSecond: 200,
  heartbeatMs: 5_000,
  freshnessHeartbeats: 3,
  maxModelsPerSite: 256,
  maxClockSkewMs: 30_000,
  maxRememberedForwards: 65_536,
  maxMessageBytes: 256 * 1024,
});

/** A trusted site and the Ed25519 key pinned for it (`[[mesh.sites]]`). */
export interface MeshSitePin {
  readonly id: string;
  /** The raw 32-byte Ed25519 public key, as configured in base64url (no padding). */
  readonly publicKey: string;
  /**
   * The only gateway URL this site's records may name (normalised); undefined = whatever its signed
   * record says. Pinning it keeps a compromised site key from steering forwarded requests elsewhere.
   */
  readonly url?: string | undefined;
  /** The tenant this site's forwarded requests are admitted as; undefined = no tenant limits (as before tenants). */
  readonly tenant?: string | undefined;
}

/** A model published by the `static` discovery source (backends that cannot be listed). */
export interface MeshStaticModel {
  readonly id: string;
  readonly ctx?: number | undefined;
}

export interface MeshConfig {
  /** This site's id (what its records say in `site`). */
  readonly site: string;
  /** This site's gateway URL for requests other sites forward here. */
  readonly url: string;
  /** The Ed25519 key file written by `switchyard keygen` (libp2p identity and record signer). */
  readonly keyFile: string;
  /**
   * This process's own libp2p identity (a key file as keygen writes it); absent = the site key's.
   * With [cluster], each replica of a site needs its own: peers keep one gossip stream per peer id.
   */
  readonly peerKeyFile?: string | undefined;
  /** libp2p listen multiaddrs, e.g. "/ip4/127.0.0.1/tcp/4001". */
  readonly listen: readonly string[];
  /** Bootstrap peers: multiaddrs ending in /p2p/<peer id>, redialled with back-off. */
  readonly peers: readonly string[];
  /**
   * Peer ids kept connected though they are not a pinned site (a relay, say). Pinned sites (their
   * peer id is their key) and the peers named by `peers` are always admitted.
   */
  readonly allowedPeers: readonly string[];
  /** Gossip messages judged per connected peer per second; more are dropped unjudged (not relayed). */
  readonly maxPeerMessagesPerSecond: number;
  readonly heartbeatMs: number;
  /** A remote set is fresh while a newer revision was accepted within this (default 3 × heartbeat). */
  readonly freshnessMs: number;
  readonly maxModelsPerSite: number;
  /** How far in the future a record's issued_at (or a forwarded request's signature) may be. */
  readonly maxClockSkewMs: number;
  /**
   * Forwarded-request signatures remembered for replay checks, all pinned sites together; each
   * remote site pinned has an even share of it (mesh/forwarding/replay-window.ts).
   */
  readonly maxRememberedForwards: number;
  /** Largest gossip message accepted or sent. */
  readonly maxMessageBytes: number;
  /** Models the `static` discovery source adds to this site's set. */
  readonly staticModels: readonly MeshStaticModel[];
  /** Trusted sites (this site's own entry is allowed and ignored for routing). */
  readonly sites: readonly MeshSitePin[];
}

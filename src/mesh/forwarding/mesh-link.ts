// What the request path needs from the mesh to forward and to accept forwarded requests: this
// site's id, url and key, the remote sites as the site store sees them (mesh-state's MeshService),
// the pins and skew in force (re-read per request, so a reload applies them), and the memory of
// accepted signatures (one per gateway, whatever thread verifies). Absent = no [mesh]: the request
// path does no federation work at all.

import type { KeyObject } from 'node:crypto';
import type { RemoteSiteView } from '#src/routing/index.ts';
import type { MeshConfig } from '#src/mesh/config/mesh-config.ts';
import { partKey, type PartKey } from '#src/core/part-key.ts';
import type { SiteKey } from '../site-key.ts';
import { decodePinnedKey, pinsOf } from './pinned-key.ts';
import type { ReplayGuard } from './seen-forwards.ts';

/** The source of remote site views: MeshService in the gateway, a fake in tests. */
export interface SitesSource {
  /** Every pinned remote site, fresh or stale. */
  sites(): readonly RemoteSiteView[];
}

export interface MeshLink {
  /** This site's id (`[mesh] site`). */
  readonly site: string;
  /** This site's `[mesh] url` (as started: a restart-only setting): what forwards to it are signed for. */
  readonly url: () => string;
  /** This site's key, once loaded; undefined = nothing is forwarded (a request cannot be signed). */
  readonly key: () => SiteKey | undefined;
  readonly source: SitesSource;
  /** The pinned keys by site id (`[[mesh.sites]]`). */
  readonly pins: () => ReadonlyMap<string, KeyObject>;
  /** `[mesh] max_clock_skew`: the signature lifetime when forwarding, the window when verifying. */
  readonly maxClockSkewMs: () => number;
  /** Where each accepted forward's signature is recorded, so that it is good once. */
  readonly replay: ReplayGuard;
}

/**
 * The sites port among a request plane's feature ports: the mesh's link ([mesh] only; absent =
 * this gateway runs alone). In-thread: the owner's mesh feature's link; in a request worker: the
 * link over the mirror of the sites and the owner's replay memory (../worker-sites.ts).
 */
export const SITES_PORT: PartKey<MeshLink> = partKey('sites');

/**
 * The link for a gateway whose config has `[mesh]`: pins and skew are read from the config in
 * force on each call (a reload applies them), the decoded pins cached per `[[mesh.sites]]` list.
 * `decode` is mesh-trust's `pinnedPublicKey` once merged (pinned-key.ts stands in until then).
 */
export function meshLinkFor(
  config: () => { readonly mesh?: MeshConfig | undefined },
  key: () => SiteKey | undefined,
  source: SitesSource,
  replay: ReplayGuard,
  decode: (b64url: string) => KeyObject = decodePinnedKey,
): MeshLink | undefined {
  const first = config().mesh;
  if (first === undefined) return undefined;
  let cached: { sites: MeshConfig['sites']; pins: ReadonlyMap<string, KeyObject> } | undefined;
  return {
    site: first.site,
    url: () => first.url,
    key,
    source,
    pins: () => {
      const sites = config().mesh?.sites ?? [];
      if (cached?.sites !== sites) cached = { sites, pins: pinsOf(sites, decode) };
      return cached.pins;
    },
    maxClockSkewMs: () => config().mesh?.maxClockSkewMs ?? first.maxClockSkewMs,
    replay,
  };
}

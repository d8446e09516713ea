// What the request path needs from the mesh to forward and to accept forwarded requests: this
// site's id and key, the remote sites as the site store sees them (mesh-state's MeshService), and
// the pins and skew in force (re-read per request, so a reload applies them). Absent = no [mesh]:
// the request path does no federation work at all.

import type { KeyObject } from 'node:crypto';
import type { RemoteSiteView } from '#src/routing/index.ts';
import type { SiteKey } from '../site-key.ts';

/** The source of remote site views: MeshService in the gateway, a fake in tests. */
export interface SitesSource {
  /** Every pinned remote site, fresh or stale. */
  sites(): readonly RemoteSiteView[];
}

export interface MeshLink {
  /** This site's id (`[mesh] site`). */
  readonly site: string;
  readonly key: SiteKey;
  readonly source: SitesSource;
  /** The pinned keys by site id (`[[mesh.sites]]`). */
  readonly pins: () => ReadonlyMap<string, KeyObject>;
  /** `[mesh] max_clock_skew`: the signature lifetime when forwarding, the window when verifying. */
  readonly maxClockSkewMs: () => number;
}

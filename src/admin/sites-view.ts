// GET /admin/sites: every pinned remote site (fresh or stale, revision, age, models, load, last
// rejection and its reason), and this site's own published set. Without [mesh]: mesh = false.

import type { OwnSiteRow, SiteAdminRow } from '#src/mesh/index.ts';

export interface SitesSource {
  readonly own: () => OwnSiteRow;
  readonly remote: () => readonly SiteAdminRow[];
}

export interface SitesDocument {
  readonly mesh: boolean;
  readonly site?: OwnSiteRow;
  readonly sites: readonly SiteAdminRow[];
}

export function sitesView(source: SitesSource | undefined): SitesDocument {
  if (source === undefined) return { mesh: false, sites: [] };
  const sites = [...source.remote()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { mesh: true, site: source.own(), sites };
}

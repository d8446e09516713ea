// GET /admin/sites ([mesh]'s admin view, laid into the admin table by mesh-feature.ts): every pinned
// remote site (fresh or stale, revision, age, models, load, last rejection and its reason), and
// this site's own published set. Before the mesh runs: mesh = false. What a remote record wrote is
// shown through its documented fields only (core/site-rows.ts, the allow-list).

import { documentedRow, type OwnSiteRow, type SiteAdminRow, type SitesSource } from '#src/core/site-rows.ts';

export interface SitesDocument {
  readonly mesh: boolean;
  readonly site?: OwnSiteRow;
  readonly sites: readonly SiteAdminRow[];
}

export function sitesDocument(source: SitesSource | undefined): SitesDocument {
  if (source === undefined) return { mesh: false, sites: [] };
  const sites = [...source.remote()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(documentedRow);
  return { mesh: true, site: source.own(), sites };
}

// GET /admin/sites: every pinned remote site (fresh or stale, revision, age, models, load, last
// rejection and its reason), and this site's own published set. Without [mesh]: mesh = false.
// A record may carry fields this version does not know (they are signed, and kept for a newer
// reader), but what a remote site wrote is shown only through the documented fields of its models
// and load (docs/federation.md, "The record"): an allow-list, so a site cannot put text of its
// choosing into this site's admin answers and dashboard.

import type { OwnSiteRow, SiteAdminRow } from '#src/mesh/index.ts';

type SiteRecordModel = SiteAdminRow['models'][number];
type SiteRecordLoad = NonNullable<SiteAdminRow['load']>;

export interface SitesSource {
  readonly own: () => OwnSiteRow;
  readonly remote: () => readonly SiteAdminRow[];
}

export interface SitesDocument {
  readonly mesh: boolean;
  readonly site?: OwnSiteRow;
  readonly sites: readonly SiteAdminRow[];
}

/** A record's model as documented: `id`, and `ctx` and `on_demand` when stated; nothing else. */
export function documentedModel(model: SiteRecordModel): SiteRecordModel {
  return {
    id: model.id,
    ...(model.ctx === undefined ? {} : { ctx: model.ctx }),
    ...(model.on_demand === undefined ? {} : { on_demand: model.on_demand }),
  };
}

/** A record's load as documented: `in_flight`, `queued`, `slots`; nothing else. */
export function documentedLoad(load: SiteRecordLoad): SiteRecordLoad {
  return { in_flight: load.in_flight, queued: load.queued, slots: load.slots };
}

/** One remote row with what the remote record wrote cut to its documented fields. */
export function documentedRow(row: SiteAdminRow): SiteAdminRow {
  return { ...row, models: row.models.map(documentedModel), load: row.load === undefined ? undefined : documentedLoad(row.load) };
}

export function sitesView(source: SitesSource | undefined): SitesDocument {
  if (source === undefined) return { mesh: false, sites: [] };
  const sites = [...source.remote()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(documentedRow);
  return { mesh: true, site: source.own(), sites };
}

// The mesh's rows as the admin side reads them ([mesh]: /admin/sites, the dashboard's Sites and
// Models views), and the allow-list of what a remote site's record may show there. Shared
// vocabulary: the mesh (src/mesh/) produces rows of these shapes and lays /admin/sites over them;
// the dashboard (src/admin/) reads them without naming a [mesh] file.
//
// A record may carry fields this version does not know (they are signed, and kept for a newer
// reader), but what a remote site wrote is shown only through the documented fields of its models
// and load (docs/federation.md, "The record"): an allow-list, so a site cannot put text of its
// choosing into this site's admin answers and dashboard.

/** A remote record's model, by its documented fields. */
export interface SiteRecordModel {
  readonly id: string;
  readonly ctx?: number;
  readonly on_demand?: boolean;
}

/** A remote record's load, by its documented fields. */
export interface SiteRecordLoad {
  readonly in_flight: number;
  readonly queued: number;
  readonly slots: number;
}

/** A held rejection as /admin/sites shows it: its class, and its age by the receiver's clock. */
export interface ShownRejection {
  readonly reason: string;
  readonly class: 'ordering' | 'trust';
  readonly detail: string;
  readonly peer: string;
  readonly age_ms: number;
}

/** One pinned remote site as the mesh reports it. */
export interface SiteAdminRow {
  readonly id: string;
  readonly fresh: boolean;
  readonly url: string | undefined;
  readonly revision: number | undefined;
  readonly age_ms: number | undefined;
  readonly models: readonly SiteRecordModel[];
  readonly load: SiteRecordLoad | undefined;
  readonly load_score: number;
  readonly last_rejection: ShownRejection | undefined;
  readonly last_trust_failure: ShownRejection | undefined;
}

/** This site's own published set as the mesh reports it. */
export interface OwnSiteRow {
  readonly id: string;
  readonly url: string;
  readonly revision: number | undefined;
  readonly models: readonly SiteRecordModel[];
  readonly published_at: string | undefined;
  readonly peers: number;
}

/** This site's row and every pinned one's (the mesh, once it runs). */
export interface SitesSource {
  readonly own: () => OwnSiteRow;
  readonly remote: () => readonly SiteAdminRow[];
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

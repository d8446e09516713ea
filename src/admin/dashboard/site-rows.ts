// Pure: the dashboard's Sites view ([mesh] only) as plain rows, built from /admin/sites' rows and
// what the hub remembers from the mesh and forwarding events. Times are wall-clock instants, not
// ages, so a row's JSON changes only when something about the site changed (a new record, a
// rejection, a back-off, a rejection aged out) and the feed sends it only then; the page turns
// instants into ages. A rejection carries its class: only a trust failure is an alarm; an ordering
// rejection (a start-up race, a replayed older revision) is harmless and soon aged out by the mesh.

import {
  documentedModel,
  type OwnSiteRow,
  type ShownRejection,
  type SiteAdminRow,
  type SitesSource,
} from '#src/core/site-rows.ts';

/** One word for a remote site's knowledge, shown as text and as the row's data-state attribute. */
export type SiteState = 'fresh' | 'stale';

export interface SiteRow {
  readonly id: string;
  readonly state: SiteState;
  /** Where forwards go (its record's url); null before any record. */
  readonly url: string | null;
  readonly revision: number | null;
  /** When its last record was accepted (epoch ms); null = never. */
  readonly record_at: number | null;
  readonly models: number;
  readonly load: { readonly in_flight: number; readonly queued: number; readonly slots: number } | null;
  /** Forwarding backs off from it since `since` (epoch ms) because of `detail`; null = reachable. */
  readonly unreachable: { readonly detail: string; readonly since: number } | null;
  /** Its latest rejection not yet aged out, of either class. */
  readonly last_rejection: SiteRejectionRow | null;
  /** Its latest trust failure not yet aged out (the same as `last_rejection` when that is one). */
  readonly last_trust_failure: SiteRejectionRow | null;
}

export interface SiteRejectionRow {
  readonly reason: string;
  /** 'trust' (shown as an alarm) or 'ordering' (harmless, shown muted). */
  readonly class: 'ordering' | 'trust';
  readonly detail: string;
  readonly peer: string;
  readonly at: number;
}

export interface OwnSite {
  readonly id: string;
  readonly url: string;
  readonly revision: number | null;
  readonly models: readonly { readonly id: string; readonly ctx?: number; readonly on_demand?: boolean }[];
  readonly published_at: string | null;
  readonly peers: number;
}

/** What the Sites view shows; `mesh: false` when the gateway runs alone (or its mesh has not started). */
export interface SitesPanel {
  readonly mesh: boolean;
  readonly own: OwnSite | null;
  readonly sites: readonly SiteRow[];
}

export const NO_MESH: SitesPanel = { mesh: false, own: null, sites: [] };

/** What the hub heard, by site: instants the admin rows give only as ages, and forwarding back-offs. */
export interface SiteMemory {
  readonly acceptedAt: ReadonlyMap<string, number>;
  /** The instant of each site's latest rejection (of either class). */
  readonly rejectedAt: ReadonlyMap<string, number>;
  readonly unreachable: ReadonlyMap<string, { readonly detail: string; readonly since: number }>;
}

export function sitesPanel(source: SitesSource | undefined, memory: SiteMemory, now: number): SitesPanel {
  if (source === undefined) return NO_MESH;
  const sites = [...source.remote()]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((row) => siteRow(row, memory, now));
  return { mesh: true, own: ownSite(source.own()), sites };
}

export function siteRow(row: SiteAdminRow, memory: SiteMemory, now: number): SiteRow {
  const rejectionRow = (shown: ShownRejection | undefined): SiteRejectionRow | null =>
    shown === undefined ? null : rejectionOf(shown, memory.rejectedAt.get(row.id), now);
  return {
    id: row.id,
    state: row.fresh ? 'fresh' : 'stale',
    url: row.url ?? null,
    revision: row.revision ?? null,
    record_at: row.age_ms === undefined ? null : (memory.acceptedAt.get(row.id) ?? approximately(now - row.age_ms)),
    models: row.models.length,
    load: row.load === undefined ? null : { in_flight: row.load.in_flight, queued: row.load.queued, slots: row.load.slots },
    unreachable: memory.unreachable.get(row.id) ?? null,
    last_rejection: rejectionRow(row.last_rejection),
    last_trust_failure: rejectionRow(row.last_trust_failure),
  };
}

/** How far the hub's instant may lie from one computed from an age and still be that rejection's. */
const SAME_REJECTION_MS = 1_000;

/**
 * A held rejection with its instant: the hub's, when the hub heard the site's latest rejection and
 * this is that one (its age agrees); else whole seconds of its age, as for one heard before.
 */
function rejectionOf(shown: ShownRejection, heard: number | undefined, now: number): SiteRejectionRow {
  const fromAge = now - shown.age_ms;
  const at = heard !== undefined && Math.abs(heard - fromAge) <= SAME_REJECTION_MS ? heard : approximately(fromAge);
  return { reason: shown.reason, class: shown.class, detail: shown.detail, peer: shown.peer, at };
}

function ownSite(own: OwnSiteRow): OwnSite {
  return {
    id: own.id,
    url: own.url,
    revision: own.revision ?? null,
    models: own.models,
    published_at: own.published_at ?? null,
    peers: own.peers,
  };
}

/** An instant known only as an age (heard before the hub listened): whole seconds, so it stays put between ticks. */
function approximately(at: number): number {
  return Math.floor(at / 1000) * 1000;
}

/** A remote site's share of the Models view: the models its last accepted record lists, and whether that is fresh. */
export interface RemoteModels {
  readonly site: string;
  readonly fresh: boolean;
  readonly models: readonly { readonly id: string; readonly ctx?: number; readonly on_demand?: boolean }[];
}

export function remoteModelsOf(source: SitesSource | undefined): RemoteModels[] {
  if (source === undefined) return [];
  return source.remote().map((row) => ({ site: row.id, fresh: row.fresh, models: row.models.map(documentedModel) }));
}

/** Sets `key` in a map that keeps at most `limit` entries (the oldest written goes first). */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > limit) {
    const oldest = map.keys().next();
    if (oldest.done !== true) map.delete(oldest.value);
  }
}

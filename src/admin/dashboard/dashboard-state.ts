// Pure: what the page is sent. A full snapshot when a client connects, then per tick only what
// changed: the node rows whose JSON differs from the last tick's, the model table when it changed,
// the remote sites' rows (and this site's own) that changed, new transitions and the traffic
// buckets written since.

import type { FleetRow, ModelRow } from './fleet-rows.ts';
import type { OwnSite, SiteRow, SitesPanel } from './site-rows.ts';
import type { Transition } from './transitions.ts';
import type { TrafficSeries } from './traffic-history.ts';

export interface DashboardSnapshot {
  readonly now: number;
  readonly nodes: readonly FleetRow[];
  readonly models: readonly ModelRow[];
  readonly sites: SitesPanel;
  readonly transitions: readonly Transition[];
  readonly traffic: TrafficSeries;
  readonly traffic_bucket_ms: number;
  readonly traffic_window_ms: number;
}

export interface NodesDelta {
  readonly changed: readonly FleetRow[];
  readonly removed: readonly string[];
  /** The fleet's order of node names when it changed (a node added or removed), else absent. */
  readonly order?: readonly string[];
}

/** Row key (node name, site id) → the row's JSON text as last sent. */
export type SentRows = ReadonlyMap<string, string>;

/** Rows keyed by `keyOf`: the ones whose JSON changed, the ones gone, and the order when membership changed. */
export function keyedDelta<T>(
  rows: readonly T[],
  keyOf: (row: T) => string,
  sent: SentRows,
): { delta: { changed: T[]; removed: string[]; order?: string[] } | undefined; sent: Map<string, string> } {
  const next = new Map<string, string>();
  const changed: T[] = [];
  for (const row of rows) {
    const key = keyOf(row);
    const text = JSON.stringify(row);
    next.set(key, text);
    if (sent.get(key) !== text) changed.push(row);
  }
  const removed = [...sent.keys()].filter((key) => !next.has(key));
  const reordered = removed.length > 0 || rows.some((row) => !sent.has(keyOf(row)));
  if (changed.length === 0 && !reordered) return { delta: undefined, sent: next };
  return { delta: { changed, removed, ...(reordered ? { order: rows.map(keyOf) } : {}) }, sent: next };
}

export function rowsDelta(
  rows: readonly FleetRow[],
  sent: SentRows,
): { delta: NodesDelta | undefined; sent: Map<string, string> } {
  return keyedDelta(rows, nodeName, sent);
}

const nodeName = (row: FleetRow): string => row.name;

/** The `sites` event: the site rows that changed, and `mesh` / `own` whenever anything in the panel did. */
export interface SitesDelta {
  readonly mesh: boolean;
  readonly own: OwnSite | null;
  readonly changed: readonly SiteRow[];
  readonly removed: readonly string[];
  readonly order?: readonly string[];
}

/** What was last sent of the Sites view: each row's JSON, and the rest (mesh, own) as one text. */
export interface SentSites {
  readonly rows: SentRows;
  readonly head: string;
}

export const NOTHING_SENT: SentSites = { rows: new Map(), head: '' };

export function sitesSent(panel: SitesPanel): SentSites {
  return {
    rows: new Map(panel.sites.map((row) => [row.id, JSON.stringify(row)])),
    head: JSON.stringify([panel.mesh, panel.own]),
  };
}

export function sitesDelta(panel: SitesPanel, sent: SentSites): { delta: SitesDelta | undefined; sent: SentSites } {
  const rows = keyedDelta(panel.sites, siteId, sent.rows);
  const head = JSON.stringify([panel.mesh, panel.own]);
  const next = { rows: rows.sent, head };
  if (rows.delta === undefined && head === sent.head) return { delta: undefined, sent: next };
  return { delta: { mesh: panel.mesh, own: panel.own, ...(rows.delta ?? { changed: [], removed: [] }) }, sent: next };
}

const siteId = (row: SiteRow): string => row.id;

/** One server-sent event: `event:` and a single `data:` line (JSON has no raw newlines). */
export function sseEvent(name: string, value: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(value)}\n\n`;
}

// Pure: what the page is sent. A full snapshot when a client connects, then per tick only what
// changed: the node rows whose JSON differs from the last tick's, the model table when it changed,
// new transitions and the traffic buckets written since.

import type { FleetRow, ModelRow } from './fleet-rows.ts';
import type { Transition } from './transitions.ts';
import type { TrafficSeries } from './traffic-history.ts';

export interface DashboardSnapshot {
  readonly now: number;
  readonly nodes: readonly FleetRow[];
  readonly models: readonly ModelRow[];
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

/** Node name → the row's JSON text as last sent. */
export type SentRows = ReadonlyMap<string, string>;

export function rowsDelta(rows: readonly FleetRow[], sent: SentRows): { delta: NodesDelta | undefined; sent: Map<string, string> } {
  const next = new Map<string, string>();
  const changed: FleetRow[] = [];
  for (const row of rows) {
    const text = JSON.stringify(row);
    next.set(row.name, text);
    if (sent.get(row.name) !== text) changed.push(row);
  }
  const removed = [...sent.keys()].filter((name) => !next.has(name));
  const reordered = removed.length > 0 || rows.some((row) => !sent.has(row.name));
  if (changed.length === 0 && !reordered) return { delta: undefined, sent: next };
  return { delta: { changed, removed, ...(reordered ? { order: rows.map((r) => r.name) } : {}) }, sent: next };
}

/** One server-sent event: `event:` and a single `data:` line (JSON has no raw newlines). */
export function sseEvent(name: string, value: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(value)}\n\n`;
}

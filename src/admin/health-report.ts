// Pure: the detailed /health document from node views, for callers who pass the admin check
// (admin/admin-endpoints.ts). Anyone else gets the status alone (proxy/inference/fleet-status.ts).

import { isEjected, type NodeView } from '#src/nodes/index.ts';
import { fleetStatus, type FleetStatus } from '#src/proxy/index.ts';

export interface HealthReport {
  readonly status: FleetStatus;
  readonly nodes: number;
  readonly healthy: number;
  readonly models_ok: number;
  readonly details: readonly NodeHealthDetail[];
}

export interface NodeHealthDetail {
  readonly name: string;
  readonly url: string;
  readonly kind: string;
  readonly group: string | null;
  readonly status: string;
  readonly fails: number;
  readonly last_error: string | null;
  /** ISO time until which passive health skips the node; null when it is not ejected. */
  readonly ejected_until: string | null;
  readonly models: {
    readonly state: string;
    readonly names: readonly string[];
    readonly age_seconds: number | null;
    readonly fails: number;
    readonly last_error: string | null;
  };
}

export function healthReport(views: readonly NodeView[], now: number): HealthReport {
  const details = views.map((v): NodeHealthDetail => ({
    name: v.spec.name,
    url: v.spec.url,
    kind: v.spec.kind,
    group: v.spec.group ?? null,
    status: v.health.status,
    fails: v.health.fails,
    last_error: v.health.lastError ?? null,
    ejected_until: v.ejectedUntil !== undefined && isEjected(v, now) ? new Date(v.ejectedUntil).toISOString() : null,
    models: {
      state: v.discovery.phase,
      names: v.discovery.models.map((m) => m.id),
      age_seconds:
        v.discovery.lastSuccessAt === undefined ? null : Math.max(0, Math.round((now - v.discovery.lastSuccessAt) / 1000)),
      fails: v.discovery.fails,
      last_error: v.discovery.lastError ?? null,
    },
  }));
  return {
    status: fleetStatus(views),
    nodes: views.length,
    healthy: views.filter((v) => v.health.status === 'healthy').length,
    models_ok: views.filter((v) => v.discovery.phase === 'known' || v.discovery.phase === 'known_empty').length,
    details,
  };
}

/**
 * Pure: the report as a feature that degrades it says (a failing state store, [server] state_dir):
 * an "ok" fleet is "degraded" (still served, still 200); the public /health shows that status too,
 * the detailed one why (the feature's part beside the fleet's).
 */
export function withDegraded(report: HealthReport, degraded: boolean): HealthReport {
  return degraded && report.status === 'ok' ? { ...report, status: 'degraded' } : report;
}

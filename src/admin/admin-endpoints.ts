// The admin endpoint table: /admin/*, /metrics, and the detailed /health. Without [admin] listen it
// is merged over the public table on the main listener (its /health wins); with it, it has its own
// listener. /health is never refused here (a probe may carry any header): a caller without admin
// rights gets the public answer, the status alone.

import { healthHttpStatus, sendJson, TableBuilder, type EndpointTable } from '#src/proxy/index.ts';
import { healthReport, withDegraded, type HealthReport } from './health-report.ts';
import { adminRoutes } from './admin-routes.ts';
import { modelsRoutes } from './models-routes.ts';
import type { AdminDeps } from './admin-deps.ts';
import { adminGuard } from './admin-guard.ts';
import { dashboardRoutes } from './dashboard/dashboard-routes.ts';
import type { FeedPanelSources } from './dashboard/feed-panels.ts';

type HealthDeps = Pick<AdminDeps, 'registry' | 'clock' | 'degraded'>;

/** The fleet's report now, degraded by a feature that says so (a failing state store). */
const healthNow = (deps: HealthDeps): HealthReport =>
  withDegraded(healthReport(deps.registry.freshViews(), deps.clock.now()), deps.degraded?.() === true);

/**
 * The status-only /health for the main listener when [admin] listen serves the detailed one: the
 * same status (the fleet's, degraded by a feature that says so: a failing state store), never the details.
 */
export function statusHealthEndpoint(deps: HealthDeps): EndpointTable {
  const table = new TableBuilder();
  table.add('GET', '/health', (_req, res) => {
    const { status } = healthNow(deps);
    sendJson(res, healthHttpStatus(status), { status });
  });
  return table.table();
}

export function adminEndpoints(deps: AdminDeps): EndpointTable {
  const { guard, mayRead, mayAct } = adminGuard(deps.config);
  const table = new TableBuilder();
  table.add('GET', '/health', (req, res) => {
    const report = healthNow(deps);
    sendJson(
      res,
      healthHttpStatus(report.status),
      mayRead(req) ? { ...report, ...deps.healthDetails?.() } : { status: report.status },
    );
  });
  table.add(
    'GET',
    '/metrics',
    guard('read', async (_req, res) => {
      const text = await deps.metrics.text();
      res.writeHead(200, { 'content-type': deps.metrics.contentType(), 'content-length': Buffer.byteLength(text) });
      res.end(text);
    }),
  );
  adminRoutes(table, deps, guard);
  modelsRoutes(table, deps, guard);
  const models = deps.models;
  dashboardRoutes(
    table,
    {
      feed: deps.liveFeed,
      requests: deps.requests,
      mayAct,
      // The tenants' /admin/tenants view, when a feature gives one (the feed's Tenants view reads the same).
      tenants: deps.views?.['/admin/tenants'] as FeedPanelSources['tenants'],
      modelsAdmin: models === undefined ? undefined : () => models.view(),
      // [cluster]'s figures, as GET /admin/runtime and the detailed /health carry them.
      cluster: () => deps.healthDetails?.().cluster,
      // The batch feature's /admin/batches view, when one runs (GET /admin/batches answers the same).
      batches: deps.views?.['/admin/batches'],
    },
    guard,
  );
  return table.table();
}

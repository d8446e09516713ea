// The node sources' metrics, read at scrape time from the fleet: changes per source, and whether each answers.

import { Gauge, type Registry } from 'prom-client';
import type { NodeFleet } from './node-fleet.ts';

export function registerFleetMetrics(registry: Registry, fleet: Pick<NodeFleet, 'reports'>): void {
  new Gauge({
    name: 'gateway_node_source_changes_total',
    help: "Times each node source's node set changed since start (a DNS answer with other addresses; a reload's new [[nodes]] list for 'static').",
    labelNames: ['source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const report of fleet.reports()) this.set({ source: report.name }, report.changes);
    },
  });
  new Gauge({
    name: 'gateway_node_source_up',
    help: "1 while the node source's last look succeeded, 0 while it fails (its last good nodes are kept; /admin/hosts says why).",
    labelNames: ['source', 'kind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const report of fleet.reports()) this.set({ source: report.name, kind: report.kind }, report.ok ? 1 : 0);
    },
  });
  new Gauge({
    name: 'gateway_node_source_nodes',
    help: 'Nodes each node source yields now.',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const report of fleet.reports()) this.set({ source: report.name }, report.nodes);
    },
  });
}

// The node sources' metrics, read at scrape time from the fleet: the nodes each source added,
// removed and moved (a new URL under a kept name), whether each answers, and how many nodes it yields.

import { Counter, Gauge, type Registry } from 'prom-client';
import type { NodeFleet } from './node-fleet.ts';

export function registerFleetMetrics(registry: Registry, fleet: Pick<NodeFleet, 'reports' | 'nodeChanges'>): void {
  new Counter({
    name: 'gateway_node_source_changes_total',
    help:
      "Nodes each node source changed since start, by change: 'added' (a name it gained: a new address, a pod turned ready), " +
      "'removed' (a name it lost, drained: an address gone, a pod terminating or deleted), 'moved' (a kept name at a new URL). " +
      "'static' counts a reload's new [[nodes]] list.",
    labelNames: ['source', 'change'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { source, change, count } of fleet.nodeChanges()) this.inc({ source, change }, count);
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

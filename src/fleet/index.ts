// The fleet folder's public surface: where nodes come from (node sources) and the set they make.
export type {
  NodeSource,
  NodeSourceConfig,
  NodeSourceDeps,
  NodeSourceFactory,
  SourceChange,
  SourceState,
  SourcedNode,
} from './node-source.ts';
export type { DnsLookup } from './dns-records.ts';
export { NODE_SOURCES } from './node-sources.ts';
export { STATIC_SOURCE } from './static-source.ts';
export { fleetNodes, type LeftOut } from './fleet-nodes.ts';
export { NodeFleet, type NodeFleetDeps, type NodeSourceReport } from './node-fleet.ts';
export { dnsNodeName, nextLookMs, nodesFromRecords, type DnsAnswer, type DnsRecord } from './dns-answer.ts';
export { lookupDns } from './dns-lookup.ts';
export { registerFleetMetrics } from './fleet-metrics.ts';
export type { KubeApi, KubeApiOpener, WatchEnd, WatchHandlers } from './k8s-api.ts';
// The Kubernetes source's protocol (k8s-slices.ts, k8s-watch.ts) and client load only when such a
// source starts: they are not exported here (a gateway without one loads none of them).

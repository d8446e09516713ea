// Pure: the settings a reload cannot apply to a running gateway (they shape its listening sockets),
// so the operator is told a restart is needed instead of believing the change took effect.

import type { GatewayConfig } from '#src/config/types.ts';

export function restartOnlyChanges(previous: GatewayConfig, next: GatewayConfig): string[] {
  const changed: string[] = [];
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
  if (!same(previous.server.listen, next.server.listen)) changed.push('server.listen');
  if (previous.server.maxHeaderBytes !== next.server.maxHeaderBytes) changed.push('server.max_header_bytes');
  if (previous.server.headerTimeoutMs !== next.server.headerTimeoutMs) changed.push('server.header_timeout');
  if (previous.server.requestTimeoutMs !== next.server.requestTimeoutMs) changed.push('server.request_timeout');
  // The worker threads are started once, with the listener.
  if (previous.server.workers !== next.server.workers) changed.push('server.workers');
  // The state file is opened once, at start (src/state/).
  if (previous.server.stateDir !== next.server.stateDir) changed.push('server.state_dir');
  if (!same(previous.admin.listen, next.admin.listen)) changed.push('admin.listen');
  // The cache-aware prefix tree is sized once, when it is built.
  if (previous.routing.cacheMaxTreeChars !== next.routing.cacheMaxTreeChars) changed.push('routing.cache_max_tree_chars');
  // The site's identity (key, id, url) and its libp2p sockets are fixed for the mesh's life; pins,
  // peers, timings and caps apply live (ConfigChange.meshChanged).
  if ((previous.mesh === undefined) !== (next.mesh === undefined)) changed.push('mesh');
  else if (previous.mesh !== undefined && next.mesh !== undefined) {
    if (previous.mesh.site !== next.mesh.site) changed.push('mesh.site');
    if (previous.mesh.url !== next.mesh.url) changed.push('mesh.url');
    if (previous.mesh.keyFile !== next.mesh.keyFile) changed.push('mesh.key_file');
    if (previous.mesh.peerKeyFile !== next.mesh.peerKeyFile) changed.push('mesh.peer_key_file');
    if (!same(previous.mesh.listen, next.mesh.listen)) changed.push('mesh.listen');
  }
  // [cluster]'s store connection and replica name are set up once, at start.
  if (!same(previous.cluster, next.cluster)) changed.push('cluster');
  // The request log's target is opened once, at start; SIGHUP reopens the same file (docs/observability.md).
  if (!same(previous.log, next.log)) changed.push('log');
  // Each request plane's tracer (provider and exporter) is built once, when it starts listening.
  if (!same(previous.tracing, next.tracing)) changed.push('tracing');
  return changed;
}

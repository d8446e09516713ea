// Pure: the settings a reload cannot apply to a running gateway (they shape its listening sockets),
// so the operator is told a restart is needed instead of believing the change took effect: the
// gateway's own tables', then each feature table's (src/config-tables.ts binds the list).

import type { AnyConfigTable } from './config-table.ts';
import type { GatewayConfig } from './types.ts';

/** The settings a reload changed that need a restart, in a config whose optional tables are `tables`. */
export type RestartOnlyChanges = (previous: GatewayConfig, next: GatewayConfig) => string[];

export function restartOnlyChecker(tables: readonly AnyConfigTable[]): RestartOnlyChanges {
  return (previous, next) => restartOnlyChanges(previous, next, tables);
}

function restartOnlyChanges(previous: GatewayConfig, next: GatewayConfig, tables: readonly AnyConfigTable[]): string[] {
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
  // Each feature table's own (config-table.ts `restartOnly`), in the list's order.
  for (const table of tables) changed.push(...(table.restartOnly?.(previous, next) ?? []));
  return changed;
}

// What a reload changes, as data: which nodes come and go, which keep their learned state (same name
// and URL), which restart fresh (same name, new URL), and which settings sections differ. Nodes are
// matched by name, the identity that logs, metrics and the admin API use.
import { isDeepStrictEqual } from 'node:util';
import type { GatewayConfig, NodeSpec } from './types.ts';

export interface NodePair {
  readonly old: NodeSpec;
  readonly next: NodeSpec;
}

export interface ConfigChange {
  /** In `next` order. */
  readonly nodesAdded: readonly NodeSpec[];
  /** In `old` order. */
  readonly nodesRemoved: readonly NodeSpec[];
  /** Same name and URL: keep health and discovery state; other fields (key, kind, group) may differ. */
  readonly nodesKept: readonly NodePair[];
  /** Same name, different URL: a different server, so its state starts fresh. */
  readonly nodesReplaced: readonly NodePair[];
  readonly modelsChanged: boolean;
  readonly healthChanged: boolean;
  readonly discoveryChanged: boolean;
  readonly upstreamChanged: boolean;
  /** Listen address or body limit; the listener cannot change in place. */
  readonly serverChanged: boolean;
}

export function diffConfig(old: GatewayConfig, next: GatewayConfig): ConfigChange {
  const oldByName = new Map(old.nodes.map((node) => [node.name, node]));
  const nextNames = new Set(next.nodes.map((node) => node.name));
  const nodesAdded: NodeSpec[] = [];
  const nodesKept: NodePair[] = [];
  const nodesReplaced: NodePair[] = [];
  for (const node of next.nodes) {
    const previous = oldByName.get(node.name);
    if (previous === undefined) nodesAdded.push(node);
    else if (previous.url === node.url) nodesKept.push({ old: previous, next: node });
    else nodesReplaced.push({ old: previous, next: node });
  }
  return {
    nodesAdded,
    nodesRemoved: old.nodes.filter((node) => !nextNames.has(node.name)),
    nodesKept,
    nodesReplaced,
    modelsChanged: !isDeepStrictEqual(old.models, next.models),
    healthChanged: !isDeepStrictEqual(old.health, next.health),
    discoveryChanged: !isDeepStrictEqual(old.discovery, next.discovery),
    upstreamChanged: !isDeepStrictEqual(old.upstream, next.upstream),
    serverChanged: !isDeepStrictEqual(old.server, next.server),
  };
}

// What a reload changes, as data, computed once per reload and handed to every component: which
// nodes come and go, which carry on as they were, which carry on but must be listed afresh, which
// restart fresh (see node-identity.ts, the one rule for that), and which settings sections differ.
import { isDeepStrictEqual } from 'node:util';
import type { GatewayConfig, NodeSpec } from './types.ts';
import { nodeContinuity, type NodeContinuity } from './node-identity.ts';

export interface NodePair {
  readonly old: NodeSpec;
  readonly next: NodeSpec;
}

/** How the node set changes. Every configured node of `nodes` is in exactly one of the other lists but `nodesRemoved`. */
export interface NodeChange {
  /** The new node set, in config order (the order views and loops follow). */
  readonly nodes: readonly NodeSpec[];
  /** In `next` order. */
  readonly nodesAdded: readonly NodeSpec[];
  /** In `old` order. */
  readonly nodesRemoved: readonly NodeSpec[];
  /** Same server, same listing: every state and timer carries on; only the spec is updated. */
  readonly nodesKept: readonly NodePair[];
  /** Same server (health and learned state carry on), but its model listing must be fetched afresh. */
  readonly nodesRelisted: readonly NodePair[];
  /** Same name, different URL: a different server, so its state starts fresh. */
  readonly nodesReplaced: readonly NodePair[];
}

export interface ConfigChange extends NodeChange {
  readonly modelsChanged: boolean;
  readonly healthChanged: boolean;
  readonly discoveryChanged: boolean;
  readonly upstreamChanged: boolean;
  /** Listen address or body limit; the listener cannot change in place. */
  readonly serverChanged: boolean;
}

/** Nodes are matched by name; `diffNodes([], nodes)` is the change that starts a gateway. */
export function diffNodes(old: readonly NodeSpec[], next: readonly NodeSpec[]): NodeChange {
  const oldByName = new Map(old.map((node) => [node.name, node]));
  const nextNames = new Set(next.map((node) => node.name));
  const nodesAdded: NodeSpec[] = [];
  const pairs: Record<NodeContinuity, NodePair[]> = { kept: [], relisted: [], replaced: [] };
  for (const node of next) {
    const previous = oldByName.get(node.name);
    if (previous === undefined) nodesAdded.push(node);
    else pairs[nodeContinuity(previous, node)].push({ old: previous, next: node });
  }
  return {
    nodes: next,
    nodesAdded,
    nodesRemoved: old.filter((node) => !nextNames.has(node.name)),
    nodesKept: pairs.kept,
    nodesRelisted: pairs.relisted,
    nodesReplaced: pairs.replaced,
  };
}

export function diffConfig(old: GatewayConfig, next: GatewayConfig): ConfigChange {
  return {
    ...diffNodes(old.nodes, next.nodes),
    modelsChanged: !isDeepStrictEqual(old.models, next.models),
    healthChanged: !isDeepStrictEqual(old.health, next.health),
    discoveryChanged: !isDeepStrictEqual(old.discovery, next.discovery),
    upstreamChanged: !isDeepStrictEqual(old.upstream, next.upstream),
    serverChanged: !isDeepStrictEqual(old.server, next.server),
  };
}

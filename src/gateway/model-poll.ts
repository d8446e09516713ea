// One discovery round for a node: its model list, then (on success) its per-model context and
// slots, asked only for models the list shows as loaded. Wiring: the parts give the agent, the
// settings in force and where the capacity goes.

import type { Dispatcher } from 'undici';
import type { Clock } from '#src/core/clock.ts';
import type { DiscoveryConfig, NodeSpec } from '#src/config/index.ts';
import { fetchModelList, type DiscoveryResult, type ListingCache } from '#src/discovery/index.ts';
import type { CapacityPoller } from '#src/capacity/index.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';

export interface ModelPollDeps {
  readonly dispatcher: Dispatcher;
  /** Each node's last listing answer: an unchanged one is not parsed again. */
  readonly listings: ListingCache;
  readonly clock: Clock;
  readonly discovery: () => DiscoveryConfig;
  readonly capacity: CapacityPoller;
  readonly registry: Pick<NodeRegistry, 'observeCapacity'>;
}

export async function pollModels(deps: ModelPollDeps, node: NodeSpec, signal: AbortSignal): Promise<DiscoveryResult> {
  const { timeoutMs, maxBodyBytes, maxModelsPerNode, maxModelIdBytes } = deps.discovery();
  const rules = { maxModels: maxModelsPerNode, maxIdBytes: maxModelIdBytes, allowed: node.allowedModels };
  const result = await fetchModelList(node, { dispatcher: deps.dispatcher, timeoutMs, maxBodyBytes, signal, clock: deps.clock, rules, cache: deps.listings });
  if (result.ok && result.models.length > 0 && !signal.aborted) {
    const capacity = await deps.capacity.poll(node, result.models, signal);
    if (!signal.aborted) deps.registry.observeCapacity(node.name, node.url, capacity);
  }
  return result;
}

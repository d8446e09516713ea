// One discovery round for a node: its model list, then (on success) its per-model context and
// slots, asked only for models the list shows as loaded, and only while the round is still wanted.
// The discoverer runs it per node; the parts give the agent, the settings in force and where the
// capacity goes.

import type { Dispatcher } from 'undici';
import type { Clock } from '#src/core/clock.ts';
import type { DiscoveryConfig, NodeSpec } from '#src/config/index.ts';
import { fetchModelList, type DiscoveryResult, type ListingCache } from '#src/discovery/index.ts';
import type { CapacityPoller } from '#src/capacity/index.ts';
import type { NodeRegistry } from './registry.ts';

export interface NodeRoundDeps {
  readonly dispatcher: Dispatcher;
  /** Each node's last listing answer: an unchanged one is not parsed again. */
  readonly listings: ListingCache;
  readonly clock: Clock;
  readonly discovery: () => DiscoveryConfig;
  readonly capacity: CapacityPoller;
  readonly registry: Pick<NodeRegistry, 'observeCapacity'>;
}

/** Pure: whether a listing is followed by a capacity poll (it succeeded with models, and the round still runs). */
export function wantsCapacity(result: DiscoveryResult, aborted: boolean): result is Extract<DiscoveryResult, { ok: true }> {
  return result.ok && result.models.length > 0 && !aborted;
}

export async function nodeRound(deps: NodeRoundDeps, node: NodeSpec, signal: AbortSignal): Promise<DiscoveryResult> {
  const { timeoutMs, maxBodyBytes, maxModelsPerNode, maxModelIdBytes } = deps.discovery();
  const rules = { maxModels: maxModelsPerNode, maxIdBytes: maxModelIdBytes, allowed: node.allowedModels };
  const result = await fetchModelList(node, {
    dispatcher: deps.dispatcher,
    timeoutMs,
    maxBodyBytes,
    signal,
    clock: deps.clock,
    rules,
    cache: deps.listings,
  });
  if (wantsCapacity(result, signal.aborted)) {
    const capacity = await deps.capacity.poll(node, result.models, signal);
    if (!signal.aborted) deps.registry.observeCapacity(node.name, node.url, capacity);
  }
  return result;
}

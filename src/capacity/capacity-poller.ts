// Capacity polls with memory: each node's router turns (capacity-round.ts) carry from one poll to
// the next, so a router with many loaded models has them all asked over a few polls. The memory of
// a node is dropped when it leaves the config or changes URL.

import type { NodeSpec } from '#src/config/types.ts';
import type { DiscoveredModel } from '#src/discovery/index.ts';
import { FIRST_ROUND, type RouterRound } from './capacity-round.ts';
import { fetchCapacity, type FetchCapacityOptions } from './fetch-capacity.ts';
import type { NodeCapacity } from './node-capacity.ts';

export type CapacityPollOptions = Omit<FetchCapacityOptions, 'round' | 'signal'>;

export class CapacityPoller {
  readonly #rounds = new Map<string, { readonly url: string; readonly round: RouterRound }>();
  readonly #options: () => CapacityPollOptions;

  /** `options` is read at every poll, so a reload's new limits apply from the next poll on. */
  constructor(options: () => CapacityPollOptions) {
    this.#options = options;
  }

  async poll(node: NodeSpec, models: readonly DiscoveredModel[], signal: AbortSignal): Promise<NodeCapacity> {
    const memory = this.#rounds.get(node.name);
    const round = memory?.url === node.url ? memory.round : FIRST_ROUND;
    const reading = await fetchCapacity(node, models, { ...this.#options(), signal, round });
    if (!signal.aborted) this.#rounds.set(node.name, { url: node.url, round: reading.round });
    return reading.capacity;
  }

  /** Forgets the nodes no longer configured (config reload). */
  setNodes(nodes: readonly NodeSpec[]): void {
    const names = new Set(nodes.map((node) => node.name));
    for (const name of this.#rounds.keys()) if (!names.has(name)) this.#rounds.delete(name);
  }
}

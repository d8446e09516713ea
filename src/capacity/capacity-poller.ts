// Capacity polls with memory: each node's router turns (capacity-round.ts) carry from one poll to
// the next, so a router with many loaded models has them all asked over a few polls; and what the
// node says of itself (its version, an `auto` node's kind: fetch-server-facts.ts) is asked on its
// first poll and every FACTS_EVERY_POLLS polls after, and rides on every reading in between. The
// memory of a node is dropped when it leaves the config or changes URL.

import type { NodeSpec } from '#src/config/types.ts';
import type { DiscoveredModel } from '#src/discovery/index.ts';
import type { ServerFacts } from '#src/kinds/index.ts';
import { FIRST_ROUND, type RouterRound } from './capacity-round.ts';
import { fetchCapacity, type FetchCapacityOptions } from './fetch-capacity.ts';
import { fetchServerFacts } from './fetch-server-facts.ts';
import type { NodeCapacity } from './node-capacity.ts';

export type CapacityPollOptions = Omit<FetchCapacityOptions, 'round' | 'signal'>;

/** Polls between two askings of a node's version (an upgrade is seen within this many polls, or at once when it changes URL). */
export const FACTS_EVERY_POLLS = 20;

interface Memory {
  /** Kind and URL the memory is of. */
  readonly url: string;
  readonly round: RouterRound;
  readonly facts: ServerFacts | undefined;
  /** Polls since the facts were asked. */
  readonly since: number;
}

/** Pure: whether this poll asks the node's facts. */
export function factsDue(memory: Pick<Memory, 'url' | 'since' | 'facts'> | undefined, url: string): boolean {
  return memory?.url !== url || memory.facts === undefined || memory.since + 1 >= FACTS_EVERY_POLLS;
}

export class CapacityPoller {
  readonly #memory = new Map<string, Memory>();
  readonly #options: () => CapacityPollOptions;

  /** `options` is read at every poll, so a reload's new limits apply from the next poll on. */
  constructor(options: () => CapacityPollOptions) {
    this.#options = options;
  }

  async poll(node: NodeSpec, models: readonly DiscoveredModel[], signal: AbortSignal): Promise<NodeCapacity> {
    const memory = this.#memory.get(node.name);
    // A new URL or kind is another server to the memory (its turns and facts start afresh).
    const at = `${node.kind} ${node.url}`;
    const same = memory?.url === at ? memory : undefined;
    const options = this.#options();
    const ask = factsDue(same, at);
    const [reading, asked] = await Promise.all([
      fetchCapacity(node, models, { ...options, signal, round: same?.round ?? FIRST_ROUND }),
      ask
        ? fetchServerFacts(node, {
            dispatcher: options.dispatcher,
            timeoutMs: options.timeoutMs,
            maxBytes: options.maxBytes,
            signal,
          })
        : undefined,
    ]);
    const facts = asked ?? same?.facts;
    if (!signal.aborted)
      this.#memory.set(node.name, { url: at, round: reading.round, facts, since: ask ? 0 : (same?.since ?? 0) + 1 });
    return facts === undefined || Object.keys(facts).length === 0 ? reading.capacity : { ...reading.capacity, server: facts };
  }

  /** Forgets the nodes no longer configured (config reload). */
  setNodes(nodes: readonly NodeSpec[]): void {
    const names = new Set(nodes.map((node) => node.name));
    for (const name of this.#memory.keys()) if (!names.has(name)) this.#memory.delete(name);
  }
}

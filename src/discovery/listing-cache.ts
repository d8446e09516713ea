// The last listing answer per node, so a poll whose body is byte-for-byte the previous one reuses
// the previous result instead of parsing, checking and bounding 50 models again. In a steady fleet
// that is nearly every poll: 1,000 nodes every 2 s would otherwise make ~25,000 short-lived objects
// a second, enough of which outlive a scavenge to grow the old generation between full collections.
//
// Bounded: one entry per node (a node's new answer replaces its old one), and at most `maxBytes` of
// answer text over all nodes (the oldest entries go first). An entry is used only for the same URL,
// kind and listing rules; a failed or aborted poll never lands here.

import type { NodeSpec } from '#src/config/types.ts';
import type { DiscoveryResult } from './discovery-state.ts';
import type { ListingRules } from './limit-listing.ts';

/** Default bound on cached answer text: 2 bytes per UTF-16 unit, so about 32 MB at most. */
export const LISTING_CACHE_MAX_CHARS = 16 * 1024 * 1024;

interface Cached {
  readonly url: string;
  readonly kind: NodeSpec['kind'];
  readonly rules: ListingRules | undefined;
  readonly text: string;
  readonly result: DiscoveryResult;
}

export class ListingCache {
  readonly #entries = new Map<string, Cached>();
  readonly #maxChars: number;
  #chars = 0;

  constructor(maxChars: number = LISTING_CACHE_MAX_CHARS) {
    this.#maxChars = maxChars;
  }

  /** The result parsed from the same answer text under the same settings, if this is it. */
  get(node: NodeSpec, rules: ListingRules | undefined, text: string): DiscoveryResult | undefined {
    const cached = this.#entries.get(node.name);
    if (cached === undefined || cached.text !== text || cached.url !== node.url || cached.kind !== node.kind) return undefined;
    return sameRules(cached.rules, rules) ? cached.result : undefined;
  }

  set(node: NodeSpec, rules: ListingRules | undefined, text: string, result: DiscoveryResult): void {
    this.forget(node.name);
    if (text.length > this.#maxChars) return;
    this.#entries.set(node.name, { url: node.url, kind: node.kind, rules, text, result });
    this.#chars += text.length;
    for (const [name, entry] of this.#entries) {
      if (this.#chars <= this.#maxChars) break;
      this.#entries.delete(name);
      this.#chars -= entry.text.length;
    }
  }

  forget(nodeName: string): void {
    const old = this.#entries.get(nodeName);
    if (old === undefined) return;
    this.#entries.delete(nodeName);
    this.#chars -= old.text.length;
  }

  /** Keeps only the nodes still configured (config reload). */
  setNodes(nodes: readonly NodeSpec[]): void {
    const names = new Set(nodes.map((n) => n.name));
    for (const name of [...this.#entries.keys()]) if (!names.has(name)) this.forget(name);
  }

  /** Answer text held now (tests and figures). */
  get chars(): number {
    return this.#chars;
  }
}

function sameRules(a: ListingRules | undefined, b: ListingRules | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return a.maxModels === b.maxModels && a.maxIdBytes === b.maxIdBytes && a.allowed === b.allowed;
}

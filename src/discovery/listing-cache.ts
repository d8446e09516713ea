// The last listing answer per node, so a poll whose body is byte-for-byte the previous one reuses
// the previous result instead of parsing, checking and bounding 50 models again. In a steady fleet
// that is nearly every poll: 1,000 nodes every 2 s would otherwise make ~25,000 short-lived objects
// a second, enough of which outlive a scavenge to grow the old generation between full collections.
//
// The answer is compared by its SHA-256 digest and length (~3 µs for a 50-model listing); its
// bytes are not kept: 1,000 nodes' answers were ~6 MB held only to be compared. (A string of the
// whole text kept per node made V8 allocate every listing's text straight into the old generation
// — allocation-site pretenuring — which grew by ~3 MB/s of dead text at 1,000 nodes.)
//
// Bounded: one entry per node (a node's new answer replaces its old one), and entries for at most
// `maxBytes` of answers over all nodes (the oldest entries go first; the parsed results they keep
// grow with their answers). An entry is used only for the same URL, kind and listing rules; a
// failed or aborted poll never lands here.

import { hash } from 'node:crypto';
import type { NodeSpec } from '#src/config/types.ts';
import type { DiscoveryResult } from './discovery-state.ts';
import type { ListingRules } from './limit-listing.ts';

/** Default bound on the answers kept, in bytes. */
export const LISTING_CACHE_MAX_BYTES = 16 * 1024 * 1024;

interface Cached {
  readonly url: string;
  readonly kind: NodeSpec['kind'];
  readonly rules: ListingRules | undefined;
  /** The answer's length and SHA-256 (base64). */
  readonly length: number;
  readonly digest: string;
  readonly result: DiscoveryResult;
}

export class ListingCache {
  readonly #entries = new Map<string, Cached>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes: number = LISTING_CACHE_MAX_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** The result parsed from the same answer under the same settings, if this is it. */
  get(node: NodeSpec, rules: ListingRules | undefined, bytes: Buffer): DiscoveryResult | undefined {
    const cached = this.#entries.get(node.name);
    if (cached === undefined || cached.url !== node.url || cached.kind !== node.kind || cached.length !== bytes.length)
      return undefined;
    if (cached.digest !== digestOf(bytes)) return undefined;
    return sameRules(cached.rules, rules) ? cached.result : undefined;
  }

  set(node: NodeSpec, rules: ListingRules | undefined, bytes: Buffer, result: DiscoveryResult): void {
    this.forget(node.name);
    if (bytes.length > this.#maxBytes) return;
    this.#entries.set(node.name, {
      url: node.url,
      kind: node.kind,
      rules,
      length: bytes.length,
      digest: digestOf(bytes),
      result,
    });
    this.#bytes += bytes.length;
    for (const [name, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(name);
      this.#bytes -= entry.length;
    }
  }

  forget(nodeName: string): void {
    const old = this.#entries.get(nodeName);
    if (old === undefined) return;
    this.#entries.delete(nodeName);
    this.#bytes -= old.length;
  }

  /** Keeps only the nodes still configured (config reload). */
  setNodes(nodes: readonly NodeSpec[]): void {
    const names = new Set(nodes.map((n) => n.name));
    for (const name of [...this.#entries.keys()]) if (!names.has(name)) this.forget(name);
  }

  /** Answer bytes the entries stand for now (tests and figures). */
  get bytes(): number {
    return this.#bytes;
  }
}

function digestOf(bytes: Buffer): string {
  return hash('sha256', bytes, 'base64');
}

function sameRules(a: ListingRules | undefined, b: ListingRules | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return a.maxModels === b.maxModels && a.maxIdBytes === b.maxIdBytes && a.allowed === b.allowed;
}

// Where each session's last turn went, and which node produced each Responses answer: a bounded
// in-process memory (one per gateway, in the policy context), keyed per tenant by a 53-bit hash of
// the session key or response id (no client string is held). An entry lives `ttl` after its last
// use; past `max` entries the least recently used go first. A session may be on a node (its name)
// or on another site ([mesh]: `site <id>`, siteSessionTarget; no node or site name holds a space).
// A [cluster] replica keeps its own
// table: a session that moved is kept there by the replica that moved it; another replica routes
// its next turn by the same hash (docs/routing.md, "Sessions").

import { fnv1a32 } from './hash.ts';

/** Entries held at most (each ~100 bytes: a number key, a node name shared with its spec, a time). */
export const SESSION_TABLE_MAX_ENTRIES = 65_536;

interface Entry {
  readonly node: string;
  readonly at: number;
}

/** A tenant-scoped key: the same session id under two tenants is two sessions. */
export function sessionHash(tenant: string, value: string): number {
  const text = `${tenant}\n${value}`;
  // Two independent 32-bit hashes (different offset bases), 53 bits of them kept: a safe integer.
  return fnv1a32(text) * 0x200000 + (fnv1a32(text, 0x050c5d1f) >>> 11);
}

/** What the table holds for a session served by another site ([mesh]): the site as a target kind, apart from every node name. */
export function siteSessionTarget(siteId: string): string {
  return `site ${siteId}`;
}

/** The site a session's target names, or undefined for a node. */
export function sessionSite(target: string): string | undefined {
  return target.startsWith('site ') ? target.slice(5) : undefined;
}

export class SessionTable {
  readonly #max: number;
  readonly #entries = new Map<number, Entry>();

  constructor(max = SESSION_TABLE_MAX_ENTRIES) {
    this.#max = max;
  }

  /** The node remembered for `key` if used within `ttlMs` of `now`; a stale entry is dropped. */
  get(key: number, now: number, ttlMs: number): string | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (now - entry.at > ttlMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.node;
  }

  /** Remembers `node` for `key` as of `now` (the most recently used). */
  set(key: number, node: string, now: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { node, at: now });
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}

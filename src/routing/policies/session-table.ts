// Where each session's last turn went, and which node produced each Responses answer: a bounded
// in-process memory (one per gateway, in the policy context), keyed per tenant by a 53-bit hash of
// the session key or response id (no client string is held). An entry lives `ttl` after its last
// use; past `max` entries the least recently used go first. A session may be on a node (its name)
// or on another site ([mesh]: `site <id>`, siteSessionTarget; no node or site name holds a space).
// With [cluster] the table is shared through the store (`share`): each new or changed entry (a
// session placed or moved, an answer's node) is written there with the TTL, fire and forget, and a
// session's entry (an answer's, when this replica holds none) is read from there before its request
// is routed (`readIn`); a store that fails leaves the table as it is (docs/routing.md, "Sessions").

import { fnv1a32 } from './hash.ts';

/** Entries held at most (each ~100 bytes: a number key, a node name shared with its spec, a time). */
export const SESSION_TABLE_MAX_ENTRIES = 65_536;

interface Entry {
  readonly node: string;
  readonly at: number;
  /** When it was last written to the share (refreshed past half the TTL); undefined = not shared. */
  readonly sharedAt: number | undefined;
}

/** Where a table's entries are shared beyond this process ([cluster]: the store). Neither call may throw or reject. */
export interface SessionShare {
  /** Writes `target` for `key`, to expire `ttlMs` after (fire and forget). */
  put(key: number, target: string, ttlMs: number): void;
  /** What another replica wrote for `key`; undefined = none, or the store failed. */
  get(key: number): Promise<string | undefined>;
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
  #share: { readonly to: SessionShare; readonly ttlMs: () => number } | undefined;

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

  /** [cluster]: shares the entries through `to` from now on, for `ttlMs` (`[routing] session_ttl`, read per write). */
  share(to: SessionShare, ttlMs: () => number): void {
    this.#share = { to, ttlMs };
  }

  /**
   * Remembers `node` for `key` as of `now` (the most recently used); shared when new, changed, or
   * last shared over half a TTL ago — `ttlMs` where the entry has its own (a conversation's), else
   * the share's.
   */
  set(key: number, node: string, now: number, ttlMs?: number): void {
    const old = this.#entries.get(key);
    this.#entries.delete(key);
    const share = this.#share;
    let sharedAt = old?.node === node ? old.sharedAt : undefined;
    if (share !== undefined) {
      const ttl = ttlMs ?? share.ttlMs();
      if (sharedAt === undefined || now - sharedAt > ttl / 2) {
        share.to.put(key, node, ttl);
        sharedAt = now;
      }
    }
    this.#put(key, { node, at: now, sharedAt });
  }

  /**
   * [cluster]: reads from the share what another replica wrote: `sessions` always (another replica
   * may have moved one this table still holds), `answers` only where this table holds none (an
   * answer's node never changes). What the share holds replaces this table's entry; none (or a
   * store that failed) leaves it. Undefined = nothing to read (no share, nothing asked).
   */
  readIn(sessions: readonly number[], answers: readonly number[], now: number): Promise<void> | undefined {
    const share = this.#share;
    if (share === undefined) return undefined;
    const ttl = share.ttlMs();
    const keys = [...sessions, ...answers.filter((key) => this.get(key, now, ttl) === undefined)];
    if (keys.length === 0) return undefined;
    return Promise.all(
      keys.map((key) =>
        share.to.get(key).then((node) => {
          if (node === undefined) return;
          // Held as shared already: not written back.
          this.#entries.delete(key);
          this.#put(key, { node, at: now, sharedAt: now });
        }),
      ),
    ).then(() => undefined);
  }

  #put(key: number, entry: Entry): void {
    this.#entries.set(key, entry);
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}

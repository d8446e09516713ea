// One undici Pool per node, with keep-alive. A node removed or moved by a reload gets its pool
// closed gracefully: `close()` lets requests already running finish.

import { Pool } from 'undici';
import type { NodeSpec, UpstreamConfig } from '#src/config/types.ts';

export class UpstreamPools {
  readonly #pools = new Map<string, { url: string; pool: Pool }>();
  #limits: UpstreamConfig;

  constructor(limits: UpstreamConfig) {
    this.#limits = limits;
  }

  get(node: NodeSpec): Pool {
    const existing = this.#pools.get(node.name);
    if (existing !== undefined && existing.url === node.url) return existing.pool;
    if (existing !== undefined) void existing.pool.close().catch(() => {});
    const pool = new Pool(new URL(node.url).origin, {
      connections: 256,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect: { timeout: this.#limits.connectTimeoutMs },
      headersTimeout: this.#limits.headersTimeoutMs,
      bodyTimeout: this.#limits.bodyIdleTimeoutMs,
    });
    this.#pools.set(node.name, { url: node.url, pool });
    return pool;
  }

  /** Applies a reload: pools of nodes no longer present (or with a new URL, or new limits) close. */
  setNodes(nodes: readonly NodeSpec[], limits: UpstreamConfig): void {
    const limitsChanged = JSON.stringify(limits) !== JSON.stringify(this.#limits);
    this.#limits = limits;
    const keep = new Map(nodes.map((n) => [n.name, n.url]));
    for (const [name, entry] of this.#pools) {
      if (limitsChanged || keep.get(name) !== entry.url) {
        this.#pools.delete(name);
        void entry.pool.close().catch(() => {});
      }
    }
  }

  /** Connection figures per node: open sockets, requests running and waiting for a socket. */
  stats(): Record<string, { connected: number; running: number; pending: number }> {
    const out: Record<string, { connected: number; running: number; pending: number }> = {};
    for (const [name, { pool }] of this.#pools) {
      const { connected, running, pending } = pool.stats;
      out[name] = { connected, running, pending };
    }
    return out;
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.pool.destroy().catch(() => {})));
  }
}

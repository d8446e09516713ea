// One connection pool per node, with keep-alive and a bounded wait for a connection. A node removed
// or moved by a reload gets its pool closed gracefully: `close()` lets requests already running finish.

import type { Dispatcher } from 'undici';
import type { Clock } from '#src/core/clock.ts';
import type { NodeChange, NodeSpec } from '#src/config/index.ts';
import { gatedPool, type GatedPool } from './gated-pool.ts';
import { samePoolSettings, type PoolSettings } from './pool-settings.ts';

/** Per node: the limit, open sockets, requests running and waiting for a connection, and whether all are taken. */
export interface PoolFigures {
  readonly limit: number;
  readonly connected: number;
  readonly running: number;
  readonly pending: number;
  readonly saturated: boolean;
}

export interface UpstreamPoolsOptions {
  readonly clock: Clock;
  /** A request to `node` waited `connection_wait` for a connection and gave up (to be logged). */
  readonly onConnectionWaitTimeout?: (node: string, figures: PoolFigures) => void;
}

export class UpstreamPools {
  readonly #pools = new Map<string, { url: string; gated: GatedPool }>();
  readonly #options: UpstreamPoolsOptions;
  #limits: PoolSettings;

  constructor(limits: PoolSettings, options: UpstreamPoolsOptions) {
    this.#limits = limits;
    this.#options = options;
  }

  /** The node's pool, behind its connection gate. */
  get(node: Pick<NodeSpec, 'name' | 'url'>): Dispatcher {
    const existing = this.#pools.get(node.name);
    if (existing !== undefined && existing.url === node.url) return existing.gated.dispatcher;
    if (existing !== undefined) closeGracefully(existing.gated);
    const gated: GatedPool = gatedPool(
      new URL(node.url).origin,
      {
        pipelining: 1,
        keepAliveTimeout: 30_000,
        connect: { timeout: this.#limits.connectTimeoutMs },
        headersTimeout: this.#limits.headersTimeoutMs,
        bodyTimeout: this.#limits.bodyIdleTimeoutMs,
      },
      {
        limit: this.#limits.maxConnections,
        waitMs: this.#limits.connectionWaitMs,
        clock: this.#options.clock,
        onWaitTimeout: () => this.#options.onConnectionWaitTimeout?.(node.name, figuresOf(gated)),
      },
    );
    this.#pools.set(node.name, { url: node.url, gated });
    return gated.dispatcher;
  }

  /**
   * Applies a reload: the pools of removed and replaced (moved) nodes close; a change of the pool
   * settings themselves closes every pool (new ones are built on the next request).
   */
  applyChange(change: NodeChange, limits: PoolSettings): void {
    const rebuildAll = !samePoolSettings(limits, this.#limits);
    this.#limits = limits;
    const gone = new Set([...change.nodesRemoved.map((n) => n.name), ...change.nodesReplaced.map((p) => p.next.name)]);
    for (const [name, entry] of this.#pools) {
      if (rebuildAll || gone.has(name)) {
        this.#pools.delete(name);
        closeGracefully(entry.gated);
      }
    }
  }

  /** Connection figures per node that has a pool. */
  stats(): Record<string, PoolFigures> {
    const out: Record<string, PoolFigures> = {};
    for (const [name, { gated }] of this.#pools) out[name] = figuresOf(gated);
    return out;
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(
      pools.map(({ gated }) => {
        gated.gate.abandonWaiting(new Error('the gateway is shutting down'));
        return gated.pool.destroy().catch(() => {});
      }),
    );
  }
}

function figuresOf({ pool, gate: connectionGate }: GatedPool): PoolFigures {
  const { connected, running, pending } = pool.stats;
  const gate = connectionGate.stats();
  return {
    limit: gate.limit,
    connected,
    running,
    // undici's own queue stays empty while the gate holds requests back; both count as waiting.
    pending: pending + gate.waiting,
    saturated: gate.running >= gate.limit,
  };
}

/** Requests still waiting for a connection fail over now; running ones may finish. */
function closeGracefully({ pool, gate }: GatedPool): void {
  gate.abandonWaiting(new Error('the node was reconfigured'));
  void pool.close().catch(() => {});
}

// The load loop: each node's metrics are scraped on its own timer, at most one scrape in flight
// per node (the per-node loop), separate from the health and discovery loops (its own timers,
// in-flight set, and the agent the caller's `scrape` uses). It holds no load state; results go to
// `onScrape`. The first scrape runs at start, so least-loaded has figures within a scrape's time.

import type { Clock } from '#src/core/clock.ts';
import type { Service } from '#src/core/lifecycle.ts';
import type { NodeChange, NodeSpec } from '#src/config/index.ts';
import { PerNodeLoop } from '../per-node-loop.ts';
import type { LoadScrape } from './load-reading.ts';

export interface LoadScraperOptions {
  readonly clock: Clock;
  readonly intervalMs: number;
  /** Undefined: the node has nothing to scrape (its kind exports no load metrics). */
  readonly scrape: (node: NodeSpec, signal: AbortSignal) => Promise<LoadScrape | undefined>;
  readonly onScrape: (node: NodeSpec, scrape: LoadScrape) => void;
}

export class LoadScraper implements Service {
  readonly name = 'load-scraper';
  readonly #loop: PerNodeLoop<LoadScrape | undefined>;

  constructor(options: LoadScraperOptions) {
    this.#loop = new PerNodeLoop<LoadScrape | undefined>({
      clock: options.clock,
      intervalMs: options.intervalMs,
      run: options.scrape,
      failed: (error) => ({ ok: false, error: String(error) }),
      onResult: (node, scrape) => {
        if (scrape !== undefined) options.onScrape(node, scrape);
      },
    });
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#loop.start(signal);
  }

  async stop(): Promise<void> {
    this.#loop.stop();
  }

  setIntervalMs(intervalMs: number): void {
    this.#loop.setIntervalMs(intervalMs);
  }

  /** Kept and relisted nodes keep their cadence (new spec); added and replaced ones are scraped at once. */
  applyChange(change: NodeChange): void {
    this.#loop.applyChange(change);
  }
}

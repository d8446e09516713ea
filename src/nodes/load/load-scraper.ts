// The load loop: each node's metrics are scraped on its own timer, at most one scrape in flight
// per node, separate from the health and discovery loops (its own timers, in-flight set, and the
// agent the caller's `scrape` uses). It holds no load state; results go to `onScrape`.

import type { Clock, Timer } from '#src/core/clock.ts';
import type { Service } from '#src/core/lifecycle.ts';
import type { NodeChange, NodeSpec } from '#src/config/index.ts';
import type { LoadScrape } from './load-reading.ts';

export interface LoadScraperOptions {
  readonly clock: Clock;
  readonly intervalMs: number;
  /** Undefined: the node has nothing to scrape (its kind exports no load metrics). */
  readonly scrape: (node: NodeSpec, signal: AbortSignal) => Promise<LoadScrape | undefined>;
  readonly onScrape: (node: NodeSpec, scrape: LoadScrape) => void;
}

interface Watched {
  spec: NodeSpec;
  timer: Timer | undefined;
  inFlight: AbortController | undefined;
}

export class LoadScraper implements Service {
  readonly name = 'load-scraper';
  readonly #options: LoadScraperOptions;
  readonly #watched = new Map<string, Watched>();
  #intervalMs: number;
  #running = false;

  constructor(options: LoadScraperOptions) {
    this.#options = options;
    this.#intervalMs = options.intervalMs;
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#running = true;
    signal.addEventListener('abort', () => void this.stop(), { once: true });
    // The first scrape at once, so least-loaded has figures within a scrape's time of start.
    for (const watched of this.#watched.values()) this.#tick(watched);
  }

  async stop(): Promise<void> {
    this.#running = false;
    for (const watched of this.#watched.values()) this.#forget(watched);
  }

  setIntervalMs(intervalMs: number): void {
    if (intervalMs === this.#intervalMs) return;
    this.#intervalMs = intervalMs;
    if (!this.#running) return;
    for (const watched of this.#watched.values()) {
      watched.timer?.cancel();
      watched.timer = this.#options.clock.setTimeout(() => this.#tick(watched), intervalMs);
    }
  }

  /** Kept and relisted nodes keep their cadence (new spec); added and replaced ones are scraped at once. */
  applyChange(change: NodeChange): void {
    for (const spec of change.nodesRemoved) {
      const watched = this.#watched.get(spec.name);
      if (watched === undefined) continue;
      this.#forget(watched);
      this.#watched.delete(spec.name);
    }
    const carriedOn = new Set([...change.nodesKept, ...change.nodesRelisted].map((pair) => pair.next.name));
    for (const spec of change.nodes) {
      const existing = this.#watched.get(spec.name);
      if (existing !== undefined && carriedOn.has(spec.name)) {
        existing.spec = spec;
        continue;
      }
      if (existing !== undefined) this.#forget(existing);
      const watched: Watched = { spec, timer: undefined, inFlight: undefined };
      this.#watched.set(spec.name, watched);
      if (this.#running) this.#tick(watched);
    }
  }

  #tick(watched: Watched): void {
    watched.timer?.cancel();
    watched.timer = this.#options.clock.setTimeout(() => this.#tick(watched), this.#intervalMs);
    if (watched.inFlight !== undefined) return;
    const controller = new AbortController();
    watched.inFlight = controller;
    const spec = watched.spec;
    this.#options
      .scrape(spec, controller.signal)
      .catch((error: unknown): LoadScrape => ({ ok: false, error: String(error) }))
      .then((scrape) => {
        if (watched.inFlight !== controller) return;
        watched.inFlight = undefined;
        if (scrape !== undefined && this.#watched.get(spec.name) === watched && this.#running) this.#options.onScrape(spec, scrape);
      });
  }

  #forget(watched: Watched): void {
    watched.timer?.cancel();
    watched.timer = undefined;
    watched.inFlight?.abort();
    watched.inFlight = undefined;
  }
}

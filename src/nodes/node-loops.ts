// The control plane's loops over the nodes: health probes, model discovery (each listing followed
// by its capacity poll: node-round.ts) and load scraping, each with its own agent, timers and
// in-flight set, so a node whose /v1/models hangs cannot delay its probes or any other node's
// listing. They only report to the registry; their reactions to its events are reactions.ts. One
// ConfigChange (the reload's) reaches all three.

import type { Clock } from '#src/core/clock.ts';
import { detach } from '#src/core/detach.ts';
import type { EventBus } from '#src/core/events.ts';
import type { GatewayConfig, NodeChange } from '#src/config/index.ts';
import { Discoverer, ListingCache, type StreamState } from '#src/discovery/index.ts';
import { CapacityPoller } from '#src/capacity/index.ts';
import { HealthChecker } from './health/checker.ts';
import { probeNode } from './health/probe.ts';
import { LoadScraper } from './load/load-scraper.ts';
import { fetchLoad } from './load/fetch-load.ts';
import { nodeRound } from './node-round.ts';
import { ModelPush } from './model-push.ts';
import { pollingAgents } from './polling-agents.ts';
import { nodeReactions, wakeProbeIntervalMs } from './reactions.ts';
import type { NodeRegistry } from './registry.ts';
import type { RegistryEvents } from './registry-events.ts';

export interface NodeLoopsDeps {
  readonly clock: Clock;
  /** The config in force (timeouts and limits are read from it on each round). */
  readonly config: () => GatewayConfig;
  readonly registry: NodeRegistry;
  readonly events: EventBus<RegistryEvents>;
  /** Background work that failed (never an unhandled rejection). */
  readonly onError: (error: unknown, fields: Readonly<Record<string, unknown>>, what: string) => void;
}

export class NodeLoops {
  readonly #deps: NodeLoopsDeps;
  /** One agent per control loop, one connection per node each (polling-agents.ts). */
  readonly #agents = pollingAgents();
  /** Each node's last listing answer: an unchanged one is not parsed again. */
  readonly #listings = new ListingCache();
  readonly #capacityPoller: CapacityPoller;
  readonly #checker: HealthChecker;
  readonly #discoverer: Discoverer;
  /** The third loop: each node's own load figures, for least-loaded. */
  readonly #loadScraper: LoadScraper;
  /** Pushed model state: a stream per router node (model-push.ts), the listing poll its check. */
  readonly #push: ModelPush;

  constructor(deps: NodeLoopsDeps) {
    this.#deps = deps;
    const { clock, config, registry } = deps;
    const first = config();
    this.#capacityPoller = new CapacityPoller(() => ({
      dispatcher: this.#agents.capacity,
      timeoutMs: config().discovery.timeoutMs,
      maxBytes: config().discovery.maxBodyBytes,
      requestsPerPoll: config().discovery.capacityRequestsPerPoll,
    }));
    this.#checker = new HealthChecker({
      clock,
      intervalMs: first.health.intervalMs,
      probe: (node, signal) =>
        probeNode(node, {
          dispatcher: this.#agents.health,
          timeoutMs: config().health.timeoutMs,
          monotonicMs: () => clock.monotonicMs(),
          signal,
        }),
      onProbe: (name, outcome) => registry.observeHealth(name, outcome),
    });
    const round = {
      dispatcher: this.#agents.discovery,
      listings: this.#listings,
      clock,
      discovery: () => config().discovery,
      capacity: this.#capacityPoller,
      registry,
    };
    this.#discoverer = new Discoverer({
      clock,
      intervalMs: first.discovery.intervalMs,
      minRefreshIntervalMs: first.discovery.missCooldownMs,
      fetch: (node, signal) => nodeRound(round, node, signal),
      onResult: (name, result, askedAtMs) => registry.observeDiscovery(name, result, askedAtMs),
      onError: (name, error) => deps.onError(error, { node: name }, 'applying a discovery result'),
    });
    this.#loadScraper = new LoadScraper({
      clock,
      intervalMs: first.load.intervalMs,
      scrape: (node, signal) =>
        fetchLoad(node, registry.view(node.name), {
          dispatcher: this.#agents.load,
          timeoutMs: config().load.timeoutMs,
          maxBytes: config().load.maxBodyBytes,
          signal,
        }),
      onScrape: (node, scrape) => registry.observeLoad(node.name, node.url, scrape),
    });
    this.#push = new ModelPush({
      clock,
      registry,
      events: deps.events,
      dispatcher: this.#agents.events,
      relist: (node, fresh) => this.#detach(this.refresh([node], { fresh }), 'model refresh after a pushed model event'),
    });
    nodeReactions({
      events: deps.events,
      checker: this.#checker,
      relist: (nodes) => this.#detach(this.refresh(nodes), 'model refresh after recovery'),
    });
  }

  /** Lists these nodes' models now; settles when their listings have been applied. `fresh`: asked after this call, no cool-down. */
  refresh(nodes: readonly string[], options: { readonly fresh?: boolean } = {}): Promise<unknown> {
    return this.#discoverer.refresh(nodes, options);
  }

  /** While a node wakes: probe it at the wake cadence for `durationMs`. */
  probeFaster(node: string, durationMs: number): void {
    this.#checker.probeFaster(node, wakeProbeIntervalMs(this.#deps.config().health.intervalMs), durationMs);
  }

  /** The node set changed (at start: every node added). */
  applyChange(change: NodeChange): void {
    for (const loop of [this.#checker, this.#discoverer, this.#loadScraper]) loop.applyChange(change);
    this.#push.applyChange(change);
  }

  /** Each router node's model event stream state (the hosts view). */
  modelEventStreams(): ReadonlyMap<string, StreamState> {
    return this.#push.states();
  }

  /** A reload: the new timings, then the one change. */
  reconfigure(next: GatewayConfig, change: NodeChange): void {
    this.#checker.setIntervalMs(next.health.intervalMs);
    this.#discoverer.setTiming({ intervalMs: next.discovery.intervalMs, minRefreshIntervalMs: next.discovery.missCooldownMs });
    this.#loadScraper.setIntervalMs(next.load.intervalMs);
    this.applyChange(change);
    this.#capacityPoller.setNodes(next.nodes);
    this.#listings.setNodes(next.nodes);
  }

  start(signal: AbortSignal): void {
    this.#detach(this.#checker.start(signal), 'health loop');
    this.#detach(this.#discoverer.start(signal), 'discovery loop');
    this.#detach(this.#loadScraper.start(signal), 'load loop');
    this.#push.start();
  }

  async stop(): Promise<void> {
    this.#push.stop();
    await Promise.all([this.#checker.stop(), this.#discoverer.stop(), this.#loadScraper.stop()]);
    await this.#agents.destroy();
  }

  #detach(work: Promise<unknown>, what: string): void {
    detach(work, (error) => this.#deps.onError(error, {}, what));
  }
}

// The owner's side of `[server] workers = N`: it starts N worker threads on the one listen address
// (the first one binds, the others join its port), answers their admissions through the single
// Scheduler (lease-desk.ts), re-emits their events, applies what they learn to the registry, and
// keeps their fleet mirror and config current: the fleet is pushed when its views change (checked
// before every admission answer and every 100 ms), the config when a reload swaps it, and what
// each feature's crossing says changed (every 100 ms: with [mesh], the remote sites' views and the
// site key once loaded; core/cross-thread.ts). A worker that ends unexpectedly has its leases
// returned and is started again, within a restart budget.

import type { Logger } from 'pino';
import type { Clock, Timer } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { Scheduler } from '#src/scheduler/index.ts';
import type { FleetReports } from '#src/ports/index.ts';
import type { OwnerSide } from '#src/core/cross-thread.ts';
import type { OwnerMessage, RelayTarget, WorkerFigures, WorkerInit } from './protocol.ts';
import { FleetSync } from './fleet-sync.ts';
import { guardListenAddress, type ListenGuard } from './listen-guard.ts';
import { ConfigAcks } from './config-acks.ts';
import { spawnWorkerThread, startLink, type Link, type LinkDeps, type WorkerThread } from './worker-link.ts';

const SYNC_EVERY_MS = 100;
/** Longest a reload waits for every worker to apply its config before the ledger takes the new limits anyway. */
export const CONFIG_ACK_BOUND_MS = 5_000;
/** More restarts than this within RESTART_WINDOW_MS: a worker that keeps dying is left down (and said so). */
export const MAX_RESTARTS = 5;
export const RESTART_WINDOW_MS = 60_000;

export interface WorkerStatus extends Readonly<Record<string, unknown>> {
  readonly worker: number;
  readonly admitted: number;
  readonly leases_held: number;
  readonly active_requests: number;
  /** Inference requests this worker finished. */
  readonly requests: number;
}

export interface RequestWorkersOptions {
  readonly count: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: () => GatewayConfig;
  readonly registry: Pick<NodeRegistry, 'views'>;
  /** Where the workers' reports go: the in-thread fleet-reports port (each applied once, here). */
  readonly reports: FleetReports;
  /** The one memory of owners, read for the workers (gateway/parts.ts); absent = none. */
  readonly answerOwner?: ((tenant: string, answerId: string) => string | undefined | Promise<string | undefined>) | undefined;
  readonly scheduler: Pick<Scheduler, 'admit' | 'routerRooms'>;
  /** The owner's side of each feature's crossing to the workers (gateway/features.ts); none for an absent feature. */
  readonly features: readonly OwnerSide[];
  readonly events: EventBus<ProxyEvents>;
  /** The bounded metrics label of a requested model. */
  readonly modelLabel: (model: string) => string;
  readonly relay: RelayTarget;
  readonly relayed: WorkerInit['relayed'];
  /** What the features add to a worker's row in /admin/runtime, from its figures' (gateway/features.ts); absent = nothing. */
  readonly featureStatus?: ((features: WorkerFigures['features']) => Readonly<Record<string, unknown>>) | undefined;
  /** Starts one thread; absent = a real worker thread (tests pass a stand-in). */
  readonly spawn?: (init: WorkerInit) => WorkerThread;
  /** Claims the listen address for this gateway alone; absent = listen-guard.ts (tests pass a stand-in). */
  readonly guard?: (host: string, port: number) => Promise<ListenGuard>;
}

export class RequestWorkers {
  readonly #options: RequestWorkersOptions;
  readonly #links: Link[] = [];
  #port = 0;
  readonly #fleet: FleetSync;
  #config: GatewayConfig;
  /** Pushed configs, numbered; each worker says when it applied one. */
  #generation = 0;
  readonly #acks: ConfigAcks<Link>;
  #timer: Timer | undefined;
  #guard: ListenGuard | undefined;
  #started = false;
  #closing = false;
  /** When workers were restarted (monotonic ms), within the last RESTART_WINDOW_MS. */
  #restarts: number[] = [];

  private constructor(options: RequestWorkersOptions) {
    this.#options = options;
    this.#fleet = new FleetSync({
      views: () => options.registry.views(),
      connectionLimit: () => options.config().upstream.maxConnections,
      rooms: () => options.scheduler.routerRooms(),
    });
    this.#config = options.config();
    this.#acks = new ConfigAcks(options.clock);
  }

  /** Starts every worker; resolves once all of them listen (rejects, with none left running, if one cannot). */
  static async start(options: RequestWorkersOptions): Promise<RequestWorkers> {
    const workers = new RequestWorkers(options);
    const { host, port } = options.config().server.listen;
    const guard = options.guard ?? guardListenAddress;
    try {
      // A fixed port is claimed before anything binds it; port 0 as soon as the kernel has picked one.
      if (port !== 0) workers.#guard = await guard(host, port);
      workers.#port = await workers.#startOne(0, port);
      workers.#guard ??= await guard(host, workers.#port);
      await Promise.all(Array.from({ length: options.count - 1 }, (_, i) => workers.#startOne(i + 1, workers.#port)));
    } catch (error) {
      workers.#closing = true;
      await Promise.all(workers.#links.map((l) => l.worker.terminate()));
      await workers.#guard?.close();
      throw error;
    }
    workers.#started = true;
    workers.#schedule();
    return workers;
  }

  /** The port every worker listens on. */
  get port(): number {
    return this.#port;
  }

  /** Pushes the fleet to every worker if its views changed since the last push. */
  syncFleet(): void {
    const next = this.#fleet.next();
    if (next !== undefined) this.#broadcast(next);
  }

  /**
   * Pushes the config to every worker if a reload replaced it; resolves once every worker applied
   * it (config-acks.ts: the reload's new limits wait for that), or ended, or CONFIG_ACK_BOUND_MS passed.
   */
  syncConfig(): Promise<void> {
    const config = this.#options.config();
    if (config === this.#config) return Promise.resolve();
    this.#config = config;
    this.#generation += 1;
    const generation = this.#generation;
    this.#broadcast({ t: 'config', config, generation });
    // Sent now, not at the end of the turn: the reload's answer must not overtake it.
    for (const link of this.#links) link.outbox.flush();
    return this.#acks.expect(generation, [...this.#links], CONFIG_ACK_BOUND_MS, (late) =>
      this.#options.logger.warn(
        { workers: late.map((l) => l.index), waitedMs: CONFIG_ACK_BOUND_MS },
        'request workers did not confirm the reloaded config in time; its tenant limits apply now',
      ),
    );
  }

  /** Pushes what each feature's crossing says changed since the last push (with [mesh]: the site key once loaded, the remote sites' views). */
  syncFeatures(): void {
    for (const side of this.#options.features)
      for (const message of side.changes?.() ?? []) this.#broadcast({ t: 'feature', name: side.name, message });
  }

  /** The workers' last reported figures. */
  figures(): readonly WorkerFigures[] {
    return this.#links.flatMap((l) => (l.figures === undefined ? [] : [l.figures]));
  }

  /** Per worker, for /admin/runtime: admissions so far, leases held and requests in progress now. */
  status(): WorkerStatus[] {
    const featureStatus = this.#options.featureStatus;
    return this.#links.map((l) => ({
      worker: l.index,
      admitted: l.desk.admitted(),
      leases_held: l.desk.held(),
      active_requests: l.figures?.activeRequests ?? 0,
      requests: l.figures?.requests ?? 0,
      ...featureStatus?.(l.figures?.features ?? {}),
    }));
  }

  /** SIGTERM: every worker stops taking connections and finishes its requests; then the threads end. */
  async drain(): Promise<void> {
    this.#closing = true;
    this.#timer?.cancel();
    this.#broadcast({ t: 'drain' });
    await Promise.all(this.#links.map((l) => l.drained));
    await Promise.all(this.#links.map((l) => l.worker.terminate()));
    await this.#guard?.close();
  }

  /** Starts worker `index` on `port` (0: the kernel picks); resolves with the port it listens on. */
  #startOne(index: number, port: number): Promise<number> {
    const options = this.#options;
    const init: WorkerInit = {
      index,
      count: options.count,
      config: this.#config,
      fleet: this.#fleet.current(),
      port,
      relay: options.relay,
      relayed: options.relayed,
      features: Object.fromEntries(options.features.map((side) => [side.name, side.init()])),
    };
    const deps: LinkDeps = {
      ...options,
      syncFleet: () => this.syncFleet(),
      onConfigApplied: (link, generation) => this.#acks.applied(link, generation),
      onExit: (link, code) => {
        this.#acks.gone(link);
        this.#exited(link, code);
      },
    };
    const { link, listening } = startLink((options.spawn ?? spawnWorkerThread)(init), init, deps);
    const at = this.#links.findIndex((l) => l.index === index);
    if (at >= 0) this.#links[at] = link;
    else this.#links.push(link);
    return listening;
  }

  #exited(link: Link, code: number): void {
    // Before start-up completes the start itself fails with the reason; while draining, exits are expected.
    if (!this.#started || this.#closing || !this.#links.includes(link)) return;
    const log = this.#options.logger;
    const now = this.#options.clock.monotonicMs();
    this.#restarts = this.#restarts.filter((at) => now - at < RESTART_WINDOW_MS);
    if (this.#restarts.length >= MAX_RESTARTS) {
      log.error(
        { worker: link.index, code, restarts: this.#restarts.length },
        'a request worker exited again; its leases were returned; too many restarts, it stays down',
      );
      return;
    }
    this.#restarts.push(now);
    log.error({ worker: link.index, code }, 'a request worker exited; its leases were returned; starting it again');
    this.#startOne(link.index, this.#port).catch((error: unknown) =>
      log.error({ err: error, worker: link.index }, 'a request worker could not be started again'),
    );
  }

  #broadcast(message: OwnerMessage): void {
    for (const link of this.#links) link.outbox.send(message);
  }

  #schedule(): void {
    this.#timer = this.#options.clock.setTimeout(() => {
      void this.syncConfig();
      this.syncFleet();
      this.syncFeatures();
      if (!this.#closing) this.#schedule();
    }, SYNC_EVERY_MS);
  }
}

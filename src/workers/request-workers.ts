// The owner's side of `[server] workers = N`: it starts N worker threads on the one listen address
// (the first one binds, the others join its port), answers their admissions through the single
// Scheduler (lease-desk.ts), re-emits their events, applies what they learn to the registry, and
// keeps their fleet mirror and config current: the fleet is pushed when its views change (checked
// before every admission answer and every 100 ms), the config when a reload swaps it.

import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock, Timer } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { NodeRegistry, NodeView } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { Scheduler } from '#src/scheduler/index.ts';
import { replayEvents } from './event-bridge.ts';
import { LeaseDesk } from './lease-desk.ts';
import { Outbox } from './outbox.ts';
import type { OwnerMessage, RelayTarget, ViewsUpdate, WorkerFigures, WorkerInit, WorkerMessage } from './protocol.ts';

const SYNC_EVERY_MS = 100;

export interface WorkerStatus {
  readonly worker: number;
  readonly admitted: number;
  readonly leases_held: number;
  readonly active_requests: number;
}

export interface RequestWorkersOptions {
  readonly count: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: () => GatewayConfig;
  readonly registry: Pick<NodeRegistry, 'views' | 'learnContext'>;
  readonly scheduler: Pick<Scheduler, 'admit'>;
  readonly events: EventBus<ProxyEvents>;
  /** The bounded metrics label of a requested model. */
  readonly modelLabel: (model: string) => string;
  readonly onModelVanished: (node: string) => void;
  readonly relay: RelayTarget;
  readonly relayed: WorkerInit['relayed'];
}

interface Link {
  readonly index: number;
  readonly worker: Worker;
  readonly outbox: Outbox<OwnerMessage>;
  readonly desk: LeaseDesk;
  figures: WorkerFigures | undefined;
  /** Settles once the worker has drained (or is gone). */
  readonly drained: Promise<void>;
}

export class RequestWorkers {
  readonly port: number;
  readonly #options: RequestWorkersOptions;
  readonly #links: Link[];
  #fleet: ViewsUpdate;
  #config: GatewayConfig;
  #timer: Timer | undefined;
  #closing = false;

  private constructor(options: RequestWorkersOptions, port: number, links: Link[], fleet: ViewsUpdate) {
    this.#options = options;
    this.port = port;
    this.#links = links;
    this.#fleet = fleet;
    this.#config = options.config();
    this.#schedule();
  }

  /** Starts every worker; resolves once all of them listen (rejects, with none left running, if one cannot). */
  static async start(options: RequestWorkersOptions): Promise<RequestWorkers> {
    const fleet = fleetOf(options);
    const links: Link[] = [];
    const holder: { workers: RequestWorkers | undefined } = { workers: undefined };
    const startOne = (index: number, port: number): Promise<number> => {
      const config = options.config();
      const init: WorkerInit = { index, count: options.count, config, fleet, port, relay: options.relay, relayed: options.relayed };
      const { link, listening } = startLink(options, init, () => holder.workers);
      links.push(link);
      return listening;
    };
    try {
      const port = await startOne(0, options.config().server.listen.port);
      await Promise.all(Array.from({ length: options.count - 1 }, (_, i) => startOne(i + 1, port)));
      holder.workers = new RequestWorkers(options, port, links, fleet);
      return holder.workers;
    } catch (error) {
      await Promise.all(links.map((l) => l.worker.terminate()));
      throw error;
    }
  }

  /** Pushes the fleet to every worker if its views changed since the last push. */
  syncFleet(): void {
    const next = fleetOf(this.#options);
    if (next.views === this.#fleet.views && next.connectionLimit === this.#fleet.connectionLimit) return;
    this.#fleet = next;
    this.#broadcast({ t: 'fleet', fleet: next });
  }

  /** Pushes the config to every worker if a reload replaced it. */
  syncConfig(): void {
    const config = this.#options.config();
    if (config === this.#config) return;
    this.#config = config;
    this.#broadcast({ t: 'config', config });
  }

  /** The workers' last reported figures. */
  figures(): readonly WorkerFigures[] {
    return this.#links.flatMap((l) => (l.figures === undefined ? [] : [l.figures]));
  }

  /** Per worker, for /admin/runtime: admissions so far, leases held and requests in progress now. */
  status(): WorkerStatus[] {
    return this.#links.map((l) => ({ worker: l.index, admitted: l.desk.admitted(), leases_held: l.desk.held(), active_requests: l.figures?.activeRequests ?? 0 }));
  }

  /** SIGTERM: every worker stops taking connections and finishes its requests; then the threads end. */
  async drain(): Promise<void> {
    this.#closing = true;
    this.#timer?.cancel();
    this.#broadcast({ t: 'drain' });
    await Promise.all(this.#links.map((l) => l.drained));
    await Promise.all(this.#links.map((l) => l.worker.terminate()));
  }

  closing(): boolean {
    return this.#closing;
  }

  #broadcast(message: OwnerMessage): void {
    for (const link of this.#links) link.outbox.send(message);
  }

  #schedule(): void {
    this.#timer = this.#options.clock.setTimeout(() => {
      this.syncConfig();
      this.syncFleet();
      if (!this.#closing) this.#schedule();
    }, SYNC_EVERY_MS);
  }
}

function fleetOf(options: RequestWorkersOptions): ViewsUpdate {
  const views: readonly NodeView[] = options.registry.views();
  return { views, connectionLimit: options.config().upstream.maxConnections };
}

/** One worker thread and the owner's handling of its messages. */
function startLink(
  options: RequestWorkersOptions,
  init: WorkerInit,
  workers: () => RequestWorkers | undefined,
): { link: Link; listening: Promise<number> } {
  const worker = new Worker(new URL('./worker-main.ts', import.meta.url), { workerData: init, name: `switchyard-worker-${init.index}` });
  const outbox = new Outbox<OwnerMessage>((batch) => worker.postMessage(batch));
  const post = (message: OwnerMessage): void => outbox.send(message);
  const desk = new LeaseDesk({
    scheduler: options.scheduler,
    send: post,
    beforeAdmitted: () => workers()?.syncFleet(),
    onError: (error) => options.logger.error({ err: error, worker: init.index }, 'an admission failed'),
  });
  let listened: { resolve: (port: number) => void; reject: (error: Error) => void } | undefined;
  const listening = new Promise<number>((resolve, reject) => {
    listened = { resolve, reject };
  });
  let drainedNow: () => void = () => {};
  const drained = new Promise<void>((resolve) => {
    drainedNow = resolve;
  });
  const link: Link = { index: init.index, worker, outbox, desk, figures: undefined, drained };
  const onMessage = (message: WorkerMessage): void => {
    switch (message.t) {
      case 'admit':
        return desk.admit(message.id, message.req, message.settings, message.firstAttempt);
      case 'abort':
        return desk.abort(message.id);
      case 'release':
        return desk.release(message.id);
      case 'settle':
        return desk.settle(message.id, message.outcome);
      case 'events':
        return replayEvents(options.events, message.events, options.modelLabel);
      case 'learn':
        return options.registry.learnContext(message.node, message.url, message.model, message.nCtx);
      case 'vanished':
        return options.onModelVanished(message.node);
      case 'log':
        return void options.logger[message.level]({ ...message.fields }, message.message);
      case 'figures':
        link.figures = message.figures;
        return;
      case 'listening':
        return listened?.resolve(message.port);
      case 'listen-failed':
        return listened?.reject(new Error(`request worker ${init.index} could not listen: ${message.error}`));
      case 'drained':
        return drainedNow();
    }
  };
  worker.on('message', (batch: readonly WorkerMessage[]) => {
    for (const message of batch) onMessage(message);
  });
  worker.on('error', (error) => {
    options.logger.error({ err: error, worker: init.index }, 'a request worker failed');
    listened?.reject(error);
  });
  worker.on('exit', (code) => {
    // Whatever it held comes back: a lost worker never leaks a lease or a queue place.
    desk.close();
    drainedNow();
    listened?.reject(new Error(`request worker ${init.index} exited (code ${code}) before it listened`));
    // Before start-up completes the start itself fails with the reason; while draining, exits are expected.
    const running = workers();
    if (running !== undefined && !running.closing()) options.logger.error({ worker: init.index, code }, 'a request worker exited; its leases were returned');
  });
  return { link, listening };
}

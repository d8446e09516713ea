// One request worker as the owner sees it: the thread, the batched messages to it, its lease
// desk, each feature's end of its crossing (core/cross-thread.ts: their messages are handed over
// by name, unread), and the owner's handling of everything it sends.

import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { EventBus } from '#src/core/events.ts';
import type { OwnerSide, OwnerSideLink } from '#src/core/cross-thread.ts';
import type { FleetReports } from '#src/ports/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { Scheduler } from '#src/scheduler/index.ts';
import { replayEvents } from './event-bridge.ts';
import { LeaseDesk } from './lease-desk.ts';
import { Outbox } from './outbox.ts';
import type { OwnerMessage, WorkerFigures, WorkerInit, WorkerMessage } from './protocol.ts';

/** What the owner uses of a worker thread (a real `Worker`, or a test's stand-in). */
export type WorkerThread = Pick<Worker, 'postMessage' | 'on' | 'terminate'>;

export function spawnWorkerThread(init: WorkerInit): WorkerThread {
  return new Worker(new URL('./worker-main.ts', import.meta.url), { workerData: init, name: `switchyard-worker-${init.index}` });
}

export interface LinkDeps {
  readonly logger: Logger;
  /** The owner's fleet-reports port: each report a worker sends is applied once, here. */
  readonly reports: FleetReports;
  /** The one memory of owners (the policies' table), read for a worker's `ask-owner`; absent = none. */
  readonly answerOwner?: ((tenant: string, answerId: string) => string | undefined | Promise<string | undefined>) | undefined;
  readonly scheduler: Pick<Scheduler, 'admit'>;
  /** The owner's side of each feature's crossing (gateway/features.ts gives them). */
  readonly features: readonly OwnerSide[];
  readonly events: EventBus<ProxyEvents>;
  readonly modelLabel: (model: string) => string;
  /** Brings every worker's fleet up to date (before an admission is answered). */
  readonly syncFleet: () => void;
  /** The worker applied the pushed config of `generation`. */
  readonly onConfigApplied: (link: Link, generation: number) => void;
  /** The thread ended (its leases are already back). */
  readonly onExit: (link: Link, code: number) => void;
}

export interface Link {
  readonly index: number;
  readonly worker: WorkerThread;
  readonly outbox: Outbox<OwnerMessage>;
  readonly desk: LeaseDesk;
  figures: WorkerFigures | undefined;
  /** Settles once the worker has drained (or is gone). */
  readonly drained: Promise<void>;
}

/** One worker thread and the owner's handling of its messages. */
export function startLink(
  worker: WorkerThread,
  init: Pick<WorkerInit, 'index'>,
  options: LinkDeps,
): { link: Link; listening: Promise<number> } {
  const outbox = new Outbox<OwnerMessage>((batch) => worker.postMessage(batch));
  const post = (message: OwnerMessage): void => outbox.send(message);
  const desk = new LeaseDesk({
    scheduler: options.scheduler,
    send: post,
    beforeAdmitted: options.syncFleet,
    onError: (error) => options.logger.error({ err: error, worker: init.index }, 'an admission failed'),
  });
  // Each feature's end of the crossing to this worker, by name.
  const features = new Map<string, OwnerSideLink>(
    options.features.map((side) => [
      side.name,
      side.link(
        (message) => post({ t: 'feature', name: side.name, message }),
        (error, what) => options.logger.error({ err: error, worker: init.index }, what),
      ),
    ]),
  );
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
        desk.release(message.id);
        // A router's busy models may have changed: the workers judge failovers by them.
        return options.syncFleet();
      case 'settle':
        desk.settle(message.id, message.outcome);
        return options.syncFleet();
      case 'feature':
        return features.get(message.name)?.receive(message.message);
      case 'events':
        return replayEvents(options.events, message.events, options.modelLabel);
      case 'learn':
        return options.reports.learnContext(message.node, message.url, message.model, message.nCtx);
      case 'learn-ratio':
        return options.reports.learnTokenRatio(message.node, message.url, message.model, message.sample);
      case 'learn-decode':
        return options.reports.learnDecodeRate(message.node, message.url, message.model, message.sample);
      case 'vanished':
        return options.reports.modelVanished(message.node);
      case 'learn-endpoint':
        return options.reports.learnLackingEndpoint(message.node, message.url, message.endpoint, message.said);
      case 'learn-answer':
        return options.reports.learnAnswerNode?.(message.tenant, message.answerId, message.node);
      case 'ask-owner':
        // [cluster]: an owner not held here is read from the store first (a promise; a failure reads as none).
        return void Promise.resolve(options.answerOwner?.(message.tenant, message.answerId)).then(
          (node) => post({ t: 'answer-owner', id: message.id, node }),
          () => post({ t: 'answer-owner', id: message.id, node: undefined }),
        );
      case 'log':
        return void options.logger[message.level]({ ...message.fields }, message.message);
      case 'figures':
        link.figures = message.figures;
        return;
      case 'listening':
        return listened?.resolve(message.port);
      case 'config-applied':
        return options.onConfigApplied(link, message.generation);
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
    for (const feature of features.values()) feature.close();
    drainedNow();
    listened?.reject(new Error(`request worker ${init.index} exited (code ${code}) before it listened`));
    options.onExit(link, code);
  });
  return { link, listening };
}

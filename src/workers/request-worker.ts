// One request worker: the request plane (src/plane/) over ports that speak to the owner through
// this thread's MessagePort, its public listener shared with the other workers (SO_REUSEPORT), and
// the relay of the paths only the owner answers. This file is wiring: it routes the owner's
// messages to the ports, the plane and the features' sides (feature-sides.ts). On `drain` the
// plane stops taking connections and lets its requests finish (up to server.drain_timeout); then
// it says so and the owner ends the thread.

import type { MessagePort } from 'node:worker_threads';
import { systemClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { buildRequestPlane, hostTracer, WORKER_SIDES, type PlaneLog } from '#src/plane/index.ts';
import { forwardEvents } from './event-bridge.ts';
import type { OwnerMessage, WorkerInit, WorkerMessage } from './protocol.ts';
import { Outbox } from './outbox.ts';
import { ownerPorts } from './owner-ports.ts';
import { relayedTable, relayTo } from './relay.ts';
import { WorkerFeatureSides } from './feature-sides.ts';

const FIGURES_EVERY_MS = 1_000;

type OwnerPort = Pick<MessagePort, 'postMessage' | 'on'>;

export async function runRequestWorker(init: WorkerInit, owner: OwnerPort): Promise<void> {
  const clock = systemClock;
  const outbox = new Outbox<WorkerMessage>((batch) => owner.postMessage(batch));
  const send = (message: WorkerMessage): void => outbox.send(message);
  const log: PlaneLog = (level, fields, message) =>
    send({ t: 'log', level, fields: { ...plainFields(fields), worker: init.index }, message });
  const events = new EventBus<ProxyEvents>((error) => log('error', { err: error }, 'event listener failed'));
  forwardEvents(events, send);
  const ports = ownerPorts(init.fleet, send, () => clock.now());
  const configNow = { config: init.config };
  const features = await WorkerFeatureSides.start(init.features, WORKER_SIDES, { config: () => configNow.config, clock, send });
  // Each worker exports its own spans (its own provider, batch queue and exporter): a span never
  // crosses to the owner, and a slow collector costs the owner nothing.
  const tracer = await hostTracer(init.config, {
    plane: `worker-${init.index}`,
    warn: (fields, message) => log('warn', fields, message),
  });
  const plane = await buildRequestPlane(
    {
      admission: ports.admission,
      fleet: ports.fleet,
      reports: ports.reports,
      features: features.ports(),
      answerOwner: ports.answerOwner,
    },
    // The owner bounds model labels when it re-emits the events (one label set for the gateway).
    { clock, config: init.config, events, log, modelLabel: (model) => model, hosts: init.count, tracer },
  );
  // No relay when the owner serves the admin paths on its own listener ([admin] listen).
  const relay = init.relayed.length === 0 ? undefined : relayTo(init.relay, init.config.server.requestTimeoutMs);
  const report = (): void => send({ t: 'figures', figures: plane.figures() });
  const figuresTimer = setInterval(report, FIGURES_EVERY_MS);
  figuresTimer.unref();

  const drain = async (): Promise<void> => {
    clearInterval(figuresTimer);
    await plane.drain(clock.monotonicMs() + configNow.config.server.drainTimeoutMs);
    features.close();
    relay?.close();
    report();
    send({ t: 'drained' });
  };

  const onMessage = (message: OwnerMessage): void => {
    if (ports.receive(message)) return;
    switch (message.t) {
      case 'config':
        plane.reconfigure(message.config);
        configNow.config = message.config;
        send({ t: 'config-applied', generation: message.generation });
        return;
      case 'feature':
        return features.receive(message);
      case 'drain':
        drain().catch((error: unknown) => {
          log('error', { err: error }, 'worker drain failed');
          send({ t: 'drained' });
        });
        return;
      default:
        return;
    }
  };
  owner.on('message', (batch: readonly OwnerMessage[]) => {
    for (const message of batch) onMessage(message);
  });

  try {
    const address = await plane.listen(
      { host: init.config.server.listen.host, port: init.port },
      relayedTable(relay, init.relayed),
      true,
    );
    send({ t: 'listening', port: address.port });
  } catch (error) {
    send({ t: 'listen-failed', error: error instanceof Error ? error.message : String(error) });
  }
}

/** Errors cross as their stack text (the owner's logger prints it as it is). */
function plainFields(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, value instanceof Error ? value.stack : value]));
}

// One request worker: the public listener (shared with the other workers through SO_REUSEPORT) and
// the whole request path, reading the fleet from its mirror and asking the owner for every
// admission. Paths the owner answers are relayed to it. On `drain` it stops taking connections,
// lets its requests finish (up to server.drain_timeout), says so, and the owner ends the thread.

import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MessagePort } from 'node:worker_threads';
import { sleep, systemClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { diffConfig, type GatewayConfig } from '#src/config/index.ts';
import {
  ActiveRequests,
  createHttpServer,
  HeldBytesBudget,
  mergeTables,
  publicEndpoints,
  requestSettings,
  UpstreamPools,
  type InferenceDeps,
  type ProxyEvents,
} from '#src/proxy/index.ts';
import { forwardEvents } from './event-bridge.ts';
import type { OwnerMessage, WorkerInit, WorkerMessage } from './protocol.ts';
import { Outbox } from './outbox.ts';
import { ownerPorts } from './owner-ports.ts';
import { relayTo } from './relay.ts';
import { WorkerMesh } from './worker-mesh.ts';

const FIGURES_EVERY_MS = 1_000;

type OwnerPort = Pick<MessagePort, 'postMessage' | 'on'>;

export async function runRequestWorker(init: WorkerInit, owner: OwnerPort): Promise<void> {
  const clock = systemClock;
  const outbox = new Outbox<WorkerMessage>((batch) => owner.postMessage(batch));
  const send = (message: WorkerMessage): void => outbox.send(message);
  const log = (level: 'warn' | 'error', fields: Record<string, unknown>, message: string): void =>
    send({ t: 'log', level, fields: { ...fields, worker: init.index }, message });
  let config: GatewayConfig = init.config;
  let settings = requestSettings(config);
  const ports = ownerPorts(init.fleet, send, () => clock.now());
  const pools = new UpstreamPools(config.upstream, {
    clock,
    onConnectionWaitTimeout: (node, figures) =>
      log('warn', { node, ...figures, waitedMs: config.upstream.connectionWaitMs }, 'no free upstream connection in time; failing over'),
  });
  // Each worker holds its share of the answer-bytes budget (a shared counter would cost a lock per chunk).
  const heldBudget = new HeldBytesBudget(() => Math.floor(config.upstream.maxHeldBytesTotal / init.count));
  const events = new EventBus<ProxyEvents>((error) => log('error', { err: String(error) }, 'event listener failed'));
  forwardEvents(events, send);
  const mesh = WorkerMesh.start(init.mesh, { config: () => config, clock, events, heldBudget, send });
  const counted = { requests: 0, forwarded: 0, forwardedIn: 0 };
  events.on('proxy:request-finished', () => void counted.requests++);
  events.on('mesh:forwarded', () => void counted.forwarded++);
  events.on('mesh:forwarded-in', () => void counted.forwardedIn++);
  const inference: InferenceDeps = {
    clock,
    registry: {
      views: () => ports.fleet.views(),
      snapshot: () => ports.fleet.snapshot(),
      learnContext: ports.reports.learnContext,
      learnTokenRatio: ports.reports.learnTokenRatio,
    },
    pools,
    scheduler: ports.admission,
    events,
    settings: () => settings,
    heldBudget,
    // The owner bounds the label when it re-emits the event (one label set for the gateway).
    modelLabel: (model) => model,
    onModelVanished: ports.reports.modelVanished,
    newRequestId: () => randomUUID(),
    remote: mesh?.remote,
  };
  const publicTable = publicEndpoints({
    clock,
    registry: ports.fleet,
    clientKeys: () => config.server.apiKeys,
    configuredModels: () => config.models.available,
    corsOrigins: () => config.server.corsOrigins,
    inference,
    mesh: mesh?.link,
  });
  // No relay when the owner serves the admin paths on its own listener ([admin] listen).
  const relay = init.relayed.length === 0 ? undefined : relayTo(init.relay, config.server.requestTimeoutMs);
  const relayed = new Map(relay === undefined ? [] : init.relayed.map(([path, methods]) => [path, new Map(methods.map((method) => [method, relay.handler]))]));
  const table = mergeTables(publicTable, relayed);
  const activeRequests = new ActiveRequests();
  const limits = config.server;
  const server = createHttpServer({
    endpoints: () => table,
    activeRequests,
    onHandlerError: (error, req) => log('error', { err: error instanceof Error ? error.stack : String(error), path: req.url }, 'request handler failed'),
    requestTimeoutMs: limits.requestTimeoutMs,
    headersTimeoutMs: limits.headerTimeoutMs,
    keepAliveTimeoutMs: 65_000,
    maxHeaderBytes: limits.maxHeaderBytes,
  });
  const report = (): void =>
    send({ t: 'figures', figures: { activeRequests: activeRequests.count(), upstream: pools.stats(), heldBytes: heldBudget.held(), upstreamSites: mesh?.pools.stats() ?? {}, ...counted } });
  const figuresTimer = setInterval(report, FIGURES_EVERY_MS);
  figuresTimer.unref();

  const drain = async (): Promise<void> => {
    clearInterval(figuresTimer);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const deadline = clock.monotonicMs() + config.server.drainTimeoutMs;
    while (activeRequests.count() > 0 && clock.monotonicMs() < deadline) {
      server.closeIdleConnections();
      await sleep(clock, 25);
    }
    if (activeRequests.count() > 0) log('warn', { active: activeRequests.count() }, 'drain timeout: closing requests still in flight');
    server.closeAllConnections();
    await closed;
    relay?.close();
    await Promise.all([pools.close(), mesh?.pools.close()]);
    report();
    send({ t: 'drained' });
  };

  const onMessage = (message: OwnerMessage): void => {
    if (ports.receive(message)) return;
    switch (message.t) {
      case 'config': {
        const change = diffConfig(config, message.config);
        pools.applyChange(change, message.config.upstream);
        mesh?.pools.applyChange(change, message.config.upstream);
        config = message.config;
        settings = requestSettings(config);
        return;
      }
      case 'sites':
        mesh?.mirror.update(message.sites);
        return;
      case 'site-key':
        mesh?.setKey(message.pem);
        return;
      case 'claimed':
        mesh?.replay.answered(message.id, message.verdict);
        return;
      case 'drain':
        drain().catch((error: unknown) => {
          log('error', { err: String(error) }, 'worker drain failed');
          send({ t: 'drained' });
        });
        return;
    }
  };
  owner.on('message', (batch: readonly OwnerMessage[]) => {
    for (const message of batch) onMessage(message);
  });

  try {
    const port = await listenShared(server, limits.listen.host, init.port);
    send({ t: 'listening', port });
  } catch (error) {
    send({ t: 'listen-failed', error: error instanceof Error ? error.message : String(error) });
  }
}

/** Listens with SO_REUSEPORT: every worker binds the same address and the kernel spreads connections. */
function listenShared(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, reusePort: true }, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

// The two hosts of the request-plane ports, for the contract suite: one owner (a Scheduler over a
// recording fleet of leases, a recording registry for reports, a ManualClock) reached either in
// its own thread (src/ports/) or as a worker reaches it, over a real MessageChannel to a LeaseDesk
// (src/workers/) — the tenants' port over their own side of that link (src/tenants/tenants-crossing.ts). Nothing here sleeps: messages cross on event-loop turns.

import { EventEmitter } from 'node:events';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import pino from 'pino';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { DecodeSample, RatioSample, Usage } from '#src/capacity/index.ts';
import type { Lease, NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { defaultFilters, leastInFlight } from '#src/routing/index.ts';
import { Scheduler, type SchedulerEffects } from '#src/scheduler/index.ts';
import { inThreadPorts, type AdmissionPort, type FleetReports, type FleetView } from '#src/ports/index.ts';
import { partsOf } from '#src/core/part-key.ts';
import { FleetSync } from '#src/workers/fleet-sync.ts';
import { ownerPorts } from '#src/workers/owner-ports.ts';
import { Outbox } from '#src/workers/outbox.ts';
import type { OwnerMessage, WorkerMessage } from '#src/workers/protocol.ts';
import { startLink, type WorkerThread } from '#src/workers/worker-link.ts';
import {
  ledgerTenantAdmission,
  TENANT_ADMISSION,
  TenantLedger,
  tenantsOwnerSide,
  tenantsWorkerSide,
  type TenantAdmissionPort,
} from '#src/tenants/index.ts';
import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { snapshotOf } from '#test/fixtures/builders.ts';

/** The one owner of every lease: what both hosts' ports reach. */
export interface Owner {
  readonly clock: ManualClock;
  readonly scheduler: Scheduler;
  /** The one limits ledger (on the owner's clock). */
  readonly ledger: TenantLedger;
  /** Leases taken and not yet returned. */
  held(): number;
  /** Lease returns that freed something (a second release of one lease frees nothing). */
  readonly returned: string[];
  /** Listings asked for (a loaded switch asks for one). */
  readonly refreshes: string[];
  /** Reports the owner's registry applied. */
  readonly learned: string[];
  readonly relisted: string[];
  /** The nodes as the owner's registry shows them now. */
  views(): readonly NodeView[];
  /** The owner's routing snapshot (live usage). */
  snapshot(): RoutingSnapshot;
}

export function owner(nodes: readonly NodeView[], tenants: readonly TenantSpec[] = []): Owner {
  const clock = new ManualClock();
  const ledger = new TenantLedger(() => clock.now(), tenants);
  const usage = new Map<string, Usage>();
  const inFlight = new Map<string, number>();
  const returned: string[] = [];
  const refreshes: string[] = [];
  let held = 0;
  const effects: SchedulerEffects = {
    snapshot: () => snapshotOf(nodes, Object.fromEntries(inFlight), Object.fromEntries(usage)),
    claim: (name, model, tokens) => {
      if (!nodes.some((n) => n.spec.name === name)) return undefined;
      const key = `${name}/${model}`;
      const before = usage.get(key) ?? { requests: 0, tokens: 0 };
      usage.set(key, { requests: before.requests + 1, tokens: before.tokens + tokens });
      inFlight.set(name, (inFlight.get(name) ?? 0) + 1);
      held += 1;
      let released = false;
      const lease: Lease = {
        node: name,
        model,
        tokens,
        release: () => {
          if (released) return;
          released = true;
          held -= 1;
          returned.push(key);
          const now = usage.get(key) ?? { requests: 1, tokens };
          usage.set(key, { requests: now.requests - 1, tokens: now.tokens - tokens });
          inFlight.set(name, (inFlight.get(name) ?? 1) - 1);
          scheduler.leaseReturned({ node: name, model, connectionFreed: false });
        },
      };
      return lease;
    },
    refreshListings: (names) => {
      refreshes.push(names.join(','));
      return Promise.resolve();
    },
    wake: () => {},
    notify: () => {},
  };
  const scheduler = new Scheduler({ clock, filters: defaultFilters(), policy: leastInFlight(), effects });
  const fleetViews = Object.freeze([...nodes]);
  return {
    clock,
    scheduler,
    ledger,
    held: () => held,
    returned,
    refreshes,
    learned: [],
    relisted: [],
    views: () => fleetViews,
    snapshot: () => effects.snapshot(),
  };
}

/** One host's ports, as the request plane holds them. */
export interface Host {
  readonly admission: AdmissionPort;
  readonly fleet: FleetView;
  readonly reports: FleetReports;
  readonly tenants: TenantAdmissionPort;
  /** Lets every message in flight between host and owner arrive. */
  settle(): Promise<void>;
  /** The host's thread ends (cross-thread only; in-thread the owner is the host). */
  readonly die: (() => void) | undefined;
  close(): void;
}

export interface HostKind {
  readonly name: string;
  host(owner: Owner): Host;
}

function ownerRegistry(o: Owner) {
  return {
    views: () => o.views(),
    freshViews: () => o.views(),
    snapshot: () => o.snapshot(),
    view: (name: string) => o.views().find((v) => v.spec.name === name),
    learnContext: (node: string, url: string, model: string, nCtx: number) =>
      void o.learned.push(`ctx ${node} ${url} ${model} ${nCtx}`),
    learnTokenRatio: (node: string, url: string, model: string, sample: RatioSample) =>
      void o.learned.push(`ratio ${node} ${url} ${model} ${JSON.stringify(sample)}`),
    learnDecodeRate: (node: string, url: string, model: string, sample: DecodeSample) =>
      void o.learned.push(`decode ${node} ${url} ${model} ${JSON.stringify(sample)}`),
    learnLackingEndpoint: (node: string, url: string, endpoint: string, said: string) =>
      void o.learned.push(`lacks ${node} ${url} ${endpoint} ${said}`),
    // The registry re-lists a node whose model vanished (its owner's onModelVanished).
    modelVanished: (node: string) => void o.relisted.push(node),
  };
}

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

export const IN_THREAD: HostKind = {
  name: 'in-thread (src/ports)',
  host(o) {
    const ports = inThreadPorts({
      scheduler: o.scheduler,
      registry: ownerRegistry(o),
      // The tenants' port, as the feature list gives it in-thread (gateway/features.ts).
      features: partsOf(TENANT_ADMISSION, ledgerTenantAdmission(o.ledger)),
    });
    const tenants = ports.features.get(TENANT_ADMISSION) as TenantAdmissionPort;
    return { ...ports, tenants, settle: () => turns(2), die: undefined, close: () => {} };
  },
};

/** The owner's end of the channel, as a worker thread looks to RequestWorkers. */
class PortThread extends EventEmitter {
  readonly #port: MessagePort;
  constructor(port: MessagePort) {
    super();
    this.#port = port;
    port.on('message', (batch: readonly WorkerMessage[]) => this.emit('message', batch));
  }
  postMessage(batch: readonly OwnerMessage[]): void {
    this.#port.postMessage(batch);
  }
  terminate(): Promise<number> {
    this.emit('exit', 1);
    return Promise.resolve(1);
  }
}

export const CROSS_THREAD: HostKind = {
  name: 'cross-thread (src/workers over a MessageChannel)',
  host(o) {
    const { port1: workerEnd, port2: ownerEnd } = new MessageChannel();
    const sync = new FleetSync({
      views: () => o.views(),
      connectionLimit: () => undefined,
      rooms: () => o.scheduler.routerRooms(),
    });
    const thread = new PortThread(ownerEnd);
    const holder: { push?: (m: OwnerMessage) => void } = {};
    const { link, listening } = startLink(
      thread as unknown as WorkerThread,
      { index: 0 },
      {
        logger: pino({ level: 'silent' }),
        // The owner applies a worker's reports through its own in-thread port.
        reports: ownerRegistry(o),
        scheduler: o.scheduler,
        // The tenants' side of the crossing, as the feature list gives it (gateway/features.ts).
        features: [tenantsOwnerSide(o.ledger)],
        events: new EventBus<ProxyEvents>(() => {}),
        modelLabel: (m) => m,
        syncFleet: () => {
          const next = sync.next();
          if (next !== undefined) holder.push?.(next);
        },
        onConfigApplied: () => {},
        onExit: () => {},
      },
    );
    holder.push = (m) => link.outbox.send(m);
    // The host has no listener: a thread that dies is reported by the link's exit, not by a start-up failure.
    listening.catch(() => {});
    const outbox = new Outbox<WorkerMessage>((batch) => workerEnd.postMessage(batch));
    const ports = ownerPorts(
      sync.current(),
      (m) => outbox.send(m),
      () => o.clock.now(),
    );
    // The tenants' worker side, as the request plane's feature list starts it (plane/request-features.ts).
    const tenantSide = tenantsWorkerSide((message) => outbox.send({ t: 'feature', name: 'tenants', message }));
    workerEnd.on('message', (batch: readonly OwnerMessage[]) => {
      for (const m of batch) if (!ports.receive(m) && m.t === 'feature' && m.name === 'tenants') tenantSide.receive(m.message);
    });
    return {
      admission: ports.admission,
      tenants: tenantSide.port?.[1] as TenantAdmissionPort,
      fleet: ports.fleet,
      reports: ports.reports,
      settle: () => turns(20),
      die: () => void thread.terminate(),
      close: () => {
        workerEnd.close();
        ownerEnd.close();
      },
    };
  },
};

export const HOSTS: readonly HostKind[] = [IN_THREAD, CROSS_THREAD];

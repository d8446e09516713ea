// A recording fake of the scheduler's effects: a fleet of node views whose slots are taken and
// returned through the fake's own leases, and a log of every effect the scheduler asked for.
// Refreshes stay pending until the test settles them; nothing here sleeps or opens a socket.

import { ManualClock } from '#src/core/clock.ts';
import type { Usage } from '#src/capacity/index.ts';
import type { Lease, NodeView } from '#src/nodes/index.ts';
import { defaultFilters, leastInFlight, type RouteRequest } from '#src/routing/index.ts';
import {
  Scheduler,
  type Admission,
  type QueueSettings,
  type SchedulerEffects,
  type SchedulerNotice,
  type SchedulerOptions,
} from '#src/scheduler/index.ts';
import { node, request, snapshotOf, type NodeOptions } from '#test/fixtures/builders.ts';

export const SETTINGS: QueueSettings = {
  queueTimeoutMs: 1_000,
  maxQueue: 10,
  missWaitMs: 500,
  swapAfterMs: 300,
  loadTimeoutMs: 2_000,
};

/** A node serving `models` with one slot each (llama.cpp-like, so the slot count is enforced). */
export function oneSlotNode(name: string, models: readonly string[], options: NodeOptions = {}): NodeView {
  const figures = Object.fromEntries(models.map((m) => [m, { nCtx: 4_096, slots: 1 }]));
  return node(name, { models, kind: 'llamacpp', capacity: { role: 'router', models: figures }, ...options });
}

export interface Rig {
  readonly clock: ManualClock;
  readonly scheduler: Scheduler;
  /** Every effect asked for, in order, as short strings: "claim a/m", "wake a", "refresh a,b". */
  readonly calls: string[];
  readonly notices: SchedulerNotice[];
  readonly leases: Lease[];
  /** How many fleet snapshots the scheduler has taken so far. */
  snapshots(): number;
  /** Replaces the fleet (a node waking, a listing arriving); tell the scheduler yourself. */
  setNodes(nodes: readonly NodeView[]): void;
  /** Settles the oldest pending refresh (`ok` false: it fails). */
  settleRefresh(ok?: boolean): void;
}

/** `extra`: the scheduler's optional collaborators (a shared switch book, pins, an eviction effect). */
export function rig(
  initial: readonly NodeView[],
  extra: Pick<SchedulerOptions, 'book' | 'protectedModels' | 'switchQueue'> & Pick<SchedulerEffects, 'evict'> = {},
): Rig {
  const clock = new ManualClock();
  let nodes = initial;
  const usage = new Map<string, Usage>();
  const inFlight = new Map<string, number>();
  const calls: string[] = [];
  const notices: SchedulerNotice[] = [];
  const leases: Lease[] = [];
  const pendingRefreshes: { resolve: () => void; reject: (error: Error) => void }[] = [];
  let snapshots = 0;
  const effects: SchedulerEffects = {
    snapshot: () => {
      snapshots += 1;
      return snapshotOf(nodes, Object.fromEntries(inFlight), Object.fromEntries(usage));
    },
    claim: (name, model, tokens) => {
      if (!nodes.some((n) => n.spec.name === name)) return undefined;
      calls.push(`claim ${name}/${model}`);
      const key = `${name}/${model}`;
      const before = usage.get(key) ?? { requests: 0, tokens: 0 };
      usage.set(key, { requests: before.requests + 1, tokens: before.tokens + tokens });
      inFlight.set(name, (inFlight.get(name) ?? 0) + 1);
      let released = false;
      const lease: Lease = {
        node: name,
        model,
        tokens,
        release: () => {
          if (released) return;
          released = true;
          const now = usage.get(key) ?? { requests: 1, tokens };
          usage.set(key, { requests: now.requests - 1, tokens: now.tokens - tokens });
          inFlight.set(name, (inFlight.get(name) ?? 1) - 1);
          scheduler.leaseReturned({ node: name, model, connectionFreed: false });
        },
      };
      leases.push(lease);
      return lease;
    },
    refreshListings: (names) => {
      calls.push(`refresh ${names.join(',')}`);
      return new Promise<void>((resolve, reject) => pendingRefreshes.push({ resolve, reject }));
    },
    wake: (name, reason) => calls.push(`wake ${name} (${reason})`),
    notify: (notice) => notices.push(notice),
    ...(extra.evict === undefined ? {} : { evict: extra.evict }),
  };
  const scheduler = new Scheduler({
    clock,
    filters: defaultFilters(),
    policy: leastInFlight(),
    effects,
    book: extra.book,
    protectedModels: extra.protectedModels,
    switchQueue: extra.switchQueue,
  });
  return {
    clock,
    scheduler,
    calls,
    notices,
    leases,
    snapshots: () => snapshots,
    setNodes: (next) => {
      nodes = next;
    },
    settleRefresh: (ok = true) => {
      const pending = pendingRefreshes.shift();
      if (ok) pending?.resolve();
      else pending?.reject(new Error('listing failed'));
    },
  };
}

/** A promise whose outcome a test can look at without awaiting it. */
export interface Tracked {
  readonly promise: Promise<Admission>;
  outcome(): Admission | undefined;
}

export function track(promise: Promise<Admission>): Tracked {
  let outcome: Admission | undefined;
  void promise.then((a) => {
    outcome = a;
  });
  return { promise, outcome: () => outcome };
}

/** Lets settled promises run their callbacks (no time passes on any clock). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

const never = new AbortController().signal;

/** Admits a first attempt for `model` with the default settings. */
export function ask(
  r: Rig,
  model: string,
  options: { settings?: Partial<QueueSettings>; signal?: AbortSignal; firstAttempt?: boolean; req?: Partial<RouteRequest> } = {},
): Tracked {
  const settings = { ...SETTINGS, ...options.settings };
  // An admission decided at once comes without a promise: tracked alike.
  return track(
    Promise.resolve(
      r.scheduler.admit(request(model, options.req), settings, options.signal ?? never, options.firstAttempt ?? true),
    ),
  );
}

/** Short description of an outcome for table-like assertions. */
export function describe(admission: Admission | undefined): string {
  if (admission === undefined) return 'waiting';
  if (admission.kind === 'admitted') return `admitted ${admission.node.spec.name} after ${admission.waitedMs}ms`;
  return `${admission.reason} after ${admission.waitedMs}ms`;
}

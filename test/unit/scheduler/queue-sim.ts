// A deterministic queueing scenario at the Scheduler: requests of given tenants arrive at given
// times on a ManualClock, each admitted one holds its lease for a fixed service time, and each
// request's queue wait is recorded. No sockets, no real time; the same file runs against any
// Scheduler with today's admit() (the before/after figures of docs/tenants.md).

import type { QueueSettings } from '#src/scheduler/index.ts';
import type { QueueTenant } from '#src/routing/index.ts';
import { request } from '#test/fixtures/builders.ts';
import { oneSlotNode, rig, settle, SETTINGS } from './fake-fleet.ts';

export interface Arrival {
  readonly tenant: QueueTenant;
  readonly atMs: number;
}

export interface SimResult {
  /** Queue waits in ms per tenant, in the order the tenant's requests were admitted. */
  readonly waits: Readonly<Record<string, number[]>>;
  /** When each tenant's requests were admitted, in ms from the start. */
  readonly admittedAtMs: Readonly<Record<string, number[]>>;
  /** Refusal reasons per tenant. */
  readonly refused: Readonly<Record<string, string[]>>;
}

const STEP_MS = 100;
const never = new AbortController().signal;

/** Runs the arrivals against one node with one slot for `model` until every request is settled or `untilMs`. */
export async function simulate(
  arrivals: readonly Arrival[],
  serviceMs: number,
  settings: Partial<QueueSettings>,
  untilMs: number,
): Promise<SimResult> {
  const r = rig([oneSlotNode('a', ['m'])]);
  const startMs = r.clock.monotonicMs();
  const waits: Record<string, number[]> = {};
  const admittedAtMs: Record<string, number[]> = {};
  const refused: Record<string, string[]> = {};
  let open = arrivals.length;
  const submit = (arrival: Arrival): void => {
    const name = arrival.tenant.name;
    const req = request('m', { tenant: arrival.tenant, promptTokens: 100, maxTokens: 100 });
    void Promise.resolve(r.scheduler.admit(req, { ...SETTINGS, ...settings }, never, true)).then((admission) => {
      open -= 1;
      if (admission.kind === 'refused') {
        (refused[name] ??= []).push(admission.reason);
        return;
      }
      const admittedMs = arrival.atMs + admission.waitedMs;
      (waits[name] ??= []).push(admission.waitedMs);
      (admittedAtMs[name] ??= []).push(admittedMs);
      r.clock.setTimeout(() => admission.release(), startMs + admittedMs + serviceMs - r.clock.monotonicMs());
    });
  };
  for (const arrival of arrivals) {
    if (arrival.atMs % STEP_MS !== 0 || serviceMs % STEP_MS !== 0) throw new Error(`times must be multiples of ${STEP_MS}ms`);
    if (arrival.atMs === 0) submit(arrival);
    else r.clock.setTimeout(() => submit(arrival), arrival.atMs);
  }
  await settle();
  while (open > 0 && r.clock.monotonicMs() - startMs < untilMs) {
    r.clock.advance(STEP_MS);
    await settle();
  }
  return { waits, admittedAtMs, refused };
}

/** Nearest-rank percentile (p in 0..100) of `values`; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** `count` arrivals of `tenant`, the first at `firstMs`, then every `everyMs`. */
export function arrivalsOf(tenant: QueueTenant, count: number, firstMs: number, everyMs: number): Arrival[] {
  return Array.from({ length: count }, (_, i) => ({ tenant, atMs: firstMs + i * everyMs }));
}

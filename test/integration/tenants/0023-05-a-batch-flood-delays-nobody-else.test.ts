// Issue 23, item 5 (priority and fair queueing): one model's queue was a FIFO, so a `batch` tenant
// that flooded it with 300 requests made an `interactive` tenant's and a second tenant's requests
// wait behind all of them (minutes). Now each model's queue serves interactive before standard
// before batch, shares a class by weight, and ages a starved tenant's oldest request. The scenario
// is deterministic (ManualClock, one slot, each request holds it 1 s); its figures are printed and
// quoted in docs/tenants.md ("Priorities and fair queueing").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { arrivalsOf, percentile, simulate, type Arrival } from '#test/unit/scheduler/queue-sim.ts';

const SERVICE_MS = 1_000;
const AGING_MS = 10_000;
const BULK = { name: 'bulk', priority: 'batch', weight: 1 } as const;
const CHAT = { name: 'chat', priority: 'interactive', weight: 1 } as const;
const APP = { name: 'app', priority: 'standard', weight: 1 } as const;

function rowOf(all: Readonly<Record<string, number[]>>): (name: string) => string {
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;
  return (name) => {
    const waits = all[name] ?? [];
    return `${name.padEnd(5)} n=${waits.length} p50=${s(percentile(waits, 50))} p95=${s(percentile(waits, 95))} max=${s(Math.max(...waits))} first=${s(waits[0] ?? NaN)}`;
  };
}

test('a batch tenant with 300 queued requests delays an interactive and a standard tenant by about one service time', async (t) => {
  const arrivals: Arrival[] = [
    // 301 at once: one takes the slot, 300 queue.
    ...arrivalsOf(BULK, 301, 0, 0),
    // While it is flooded: 20 interactive and 20 standard requests, one every 3 s each.
    ...arrivalsOf(CHAT, 20, 1_500, 3_000),
    ...arrivalsOf(APP, 20, 1_200, 3_000),
  ];
  // Nothing times out or is shed: the figures are waits, not refusals.
  const settings = { maxQueue: 1_000, queueTimeoutMs: 3_600_000, queueAgingMs: AGING_MS };
  const result = await simulate(arrivals, SERVICE_MS, settings, 1_000_000);
  const row = rowOf(result.waits);
  for (const name of ['chat', 'app', 'bulk']) t.diagnostic(row(name));
  console.log(['priority classes, queue waits (service time 1 s, one slot):', ...['chat', 'app', 'bulk'].map(row)].join('\n  '));

  assert.deepEqual(result.refused, {}, 'nothing refused');
  assert.deepEqual(
    ['chat', 'app', 'bulk'].map((n) => result.waits[n]?.length),
    [20, 20, 301],
    'everyone served',
  );
  const chat = result.waits.chat ?? [];
  const app = result.waits.app ?? [];
  assert.ok(percentile(chat, 95) <= 2 * SERVICE_MS, `interactive p95 within two service times: ${row('chat')}`);
  assert.ok(
    (app[0] ?? Infinity) <= 2 * SERVICE_MS,
    `the standard tenant's first request waits about one service time: ${row('app')}`,
  );
  assert.ok(percentile(app, 95) <= 3 * SERVICE_MS, `standard p95 within three service times: ${row('app')}`);
  const bulkAt = result.admittedAtMs.bulk ?? [];
  const longestGap = Math.max(...bulkAt.slice(1).map((at, i) => at - (bulkAt[i] ?? at)));
  assert.ok(
    longestGap <= 2 * AGING_MS + SERVICE_MS,
    `batch never waits past the aging bound between two of its requests: ${longestGap}ms`,
  );
});

test('within one class, a tenant with 300 queued requests delays another by about one service time per weight share', async (t) => {
  const flood = { name: 'flood', priority: 'standard', weight: 1 } as const;
  const heavy = { name: 'heavy', priority: 'standard', weight: 3 } as const;
  // app asks for 1/6 of the slot, below its 1/5 share while heavy (weight 3) is queued too.
  const arrivals: Arrival[] = [
    ...arrivalsOf(flood, 301, 0, 0),
    ...arrivalsOf(APP, 20, 1_200, 6_000),
    ...arrivalsOf(heavy, 30, 10_100, 0),
  ];
  const result = await simulate(
    arrivals,
    SERVICE_MS,
    { maxQueue: 1_000, queueTimeoutMs: 3_600_000, queueAgingMs: AGING_MS },
    1_000_000,
  );
  const row = rowOf(result.waits);
  for (const name of ['app', 'heavy', 'flood']) t.diagnostic(row(name));
  console.log(['one class, queue waits (service time 1 s, one slot):', ...['app', 'heavy', 'flood'].map(row)].join('\n  '));
  assert.deepEqual(result.refused, {});
  const app = result.waits.app ?? [];
  assert.ok(percentile(app, 95) <= 2 * SERVICE_MS, `app (weight 1) p95 within two service times: ${row('app')}`);
  // heavy (weight 3) queues 30 at once beside the flood and app (weight 1 each): about 3 of every 5 turns are its.
  const heavyAt = result.admittedAtMs.heavy ?? [];
  assert.ok(
    (heavyAt.at(-1) ?? Infinity) - 10_100 <= 30 * SERVICE_MS * (5 / 3) + 2 * SERVICE_MS,
    `heavy's 30 served at its weight share: ${row('heavy')}`,
  );
  assert.ok(
    (result.waits.heavy?.[0] ?? Infinity) <= SERVICE_MS,
    `heavy's first request waits at most one service time: ${row('heavy')}`,
  );
});

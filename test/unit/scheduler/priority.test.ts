// Priority classes and fair queueing through the Scheduler: who a returned lease lets in, who a
// full queue sheds, when aging raises a request, and what the queue report shows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TenantPriority } from '#src/core/tenant-class.ts';
import type { Admission } from '#src/scheduler/index.ts';
import { ask, describe, oneSlotNode, rig, settle, type Tracked } from './fake-fleet.ts';
import { arrivalsOf, simulate } from './queue-sim.ts';

const as = (name: string, priority: TenantPriority, weight = 1) => ({ req: { tenant: { name, priority, weight } } });

/** Releases the lease of whoever holds the one slot, `times` times, and says who got it each time. */
async function serveInTurn(first: Admission, waiting: Readonly<Record<string, Tracked>>, times: number): Promise<string[]> {
  const order: string[] = [];
  let holder = first;
  for (let i = 0; i < times; i += 1) {
    assert.ok(holder.kind === 'admitted');
    holder.release();
    await settle();
    const next = Object.entries(waiting).find(([name, t]) => !order.includes(name) && t.outcome()?.kind === 'admitted');
    if (next === undefined) break;
    order.push(next[0]);
    holder = next[1].outcome() ?? holder;
  }
  return order;
}

test('a returned lease goes to interactive before standard before batch, and tenants of a class take turns', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  const first = await ask(r, 'm').promise;
  const waiting = {
    z1: ask(r, 'm', as('Z', 'batch')),
    a1: ask(r, 'm', as('A', 'standard')),
    a2: ask(r, 'm', as('A', 'standard')),
    b1: ask(r, 'm', as('B', 'standard')),
    i1: ask(r, 'm', as('I', 'interactive')),
  };
  await settle();
  assert.deepEqual(r.scheduler.queueReport(), {
    m: { byClass: { interactive: 1, standard: 3, batch: 1 }, byTenant: { Z: 1, A: 2, B: 1, I: 1 } },
  });
  assert.deepEqual(await serveInTurn(first, waiting, 5), ['i1', 'a1', 'b1', 'a2', 'z1']);
  assert.deepEqual(r.scheduler.queueReport(), {});
});

test('a request without a tenant queues as the open default tenant: standard, weight 1', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  const first = await ask(r, 'm').promise;
  const waiting = { z: ask(r, 'm', as('Z', 'batch')), d: ask(r, 'm'), i: ask(r, 'm', as('I', 'interactive')) };
  await settle();
  assert.deepEqual(r.scheduler.queueReport().m?.byTenant, { Z: 1, default: 1, I: 1 });
  assert.deepEqual(await serveInTurn(first, waiting, 3), ['i', 'd', 'z']);
});

test('a full queue sheds batch first: a higher newcomer displaces the newest of the lowest class; a batch newcomer is refused', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  await ask(r, 'm').promise;
  const full = { settings: { maxQueue: 2 } };
  const z1 = ask(r, 'm', { ...full, ...as('Z', 'batch') });
  r.clock.advance(10);
  const z2 = ask(r, 'm', { ...full, ...as('Z', 'batch') });
  r.clock.advance(10);
  const s1 = ask(r, 'm', { ...full, ...as('S', 'standard') });
  await settle();
  assert.deepEqual(
    [describe(z1.outcome()), describe(z2.outcome()), describe(s1.outcome())],
    ['waiting', 'queue_full after 10ms', 'waiting'],
  );
  assert.equal(
    describe(await ask(r, 'm', { ...full, ...as('Z', 'batch') }).promise),
    'queue_full after 0ms',
    'batch newcomer refused',
  );
  const i1 = ask(r, 'm', { ...full, ...as('I', 'interactive') });
  await settle();
  assert.deepEqual(
    [describe(z1.outcome()), describe(i1.outcome())],
    ['queue_full after 20ms', 'waiting'],
    'the last batch request goes',
  );
  assert.equal(
    describe(await ask(r, 'm', { ...full, ...as('S2', 'standard') }).promise),
    'queue_full after 0ms',
    'nothing lower than standard waits',
  );
  r.clock.advance(5);
  const i2 = ask(r, 'm', { ...full, ...as('I', 'interactive') });
  await settle();
  assert.deepEqual(
    [describe(s1.outcome()), describe(i2.outcome())],
    ['queue_full after 5ms', 'waiting'],
    'then standard, for interactive',
  );
  assert.deepEqual(r.scheduler.queueDepths(), { m: 2 });
  assert.equal(
    describe(await ask(r, 'm', { ...full, ...as('I', 'interactive') }).promise),
    'queue_full after 0ms',
    'interactive displaces no equal',
  );
  assert.equal(
    describe(await ask(r, 'm', { settings: { maxQueue: 0 }, ...as('I', 'interactive') }).promise),
    'queue_full after 0ms',
    'max_queue 0: nobody waits',
  );
});

test('aging: a batch request waiting queue_aging unserved is raised to standard, after as long again to interactive, where it takes its turn', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  let holder = await ask(r, 'm').promise;
  const aging = { settings: { queueAgingMs: 100, queueTimeoutMs: 10_000 } };
  const z = ask(r, 'm', { ...aging, ...as('Z', 'batch') });
  const i1 = ask(r, 'm', { ...aging, ...as('I', 'interactive') });
  const i2 = ask(r, 'm', { ...aging, ...as('I', 'interactive') });
  const i3 = ask(r, 'm', { ...aging, ...as('I', 'interactive') });
  const release = async (atMs: number): Promise<void> => {
    r.clock.advance(atMs - (r.clock.monotonicMs() - 1_700_000_000_000));
    assert.ok(holder.kind === 'admitted');
    holder.release();
    await settle();
  };
  await release(150);
  assert.deepEqual(
    [z, i1, i2, i3].map((t) => describe(t.outcome())),
    ['waiting', 'admitted a after 150ms', 'waiting', 'waiting'],
    'standard at 150ms: still behind interactive',
  );
  holder = i1.outcome() ?? holder;
  await release(200);
  assert.deepEqual(
    [z, i2].map((t) => describe(t.outcome())),
    ['admitted a after 200ms', 'waiting'],
    'interactive at 200ms, the older on a tie',
  );
  holder = z.outcome() ?? holder;
  await release(210);
  assert.equal(describe(i2.outcome()), 'admitted a after 210ms');
});

test('aging off (queue_aging 0): batch waits while interactive requests keep coming', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  let holder = await ask(r, 'm').promise;
  const off = { settings: { queueAgingMs: 0, queueTimeoutMs: 10_000 } };
  const z = ask(r, 'm', { ...off, ...as('Z', 'batch') });
  for (let i = 0; i < 5; i += 1) {
    const next = ask(r, 'm', { ...off, ...as('I', 'interactive') });
    r.clock.advance(1_000);
    assert.ok(holder.kind === 'admitted');
    holder.release();
    await settle();
    holder = next.outcome() ?? holder;
    assert.equal(describe(z.outcome()), 'waiting');
  }
});

test('a waiting tenant request that times out or whose client leaves leaves the queue and its report', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  await ask(r, 'm').promise;
  const gone = new AbortController();
  const left = ask(r, 'm', { signal: gone.signal, ...as('I', 'interactive') });
  const late = ask(r, 'm', as('Z', 'batch'));
  gone.abort();
  assert.equal(describe(await left.promise), 'aborted after 0ms');
  assert.deepEqual(r.scheduler.queueReport(), { m: { byClass: { interactive: 0, standard: 0, batch: 1 }, byTenant: { Z: 1 } } });
  r.clock.advance(1_000);
  assert.equal(describe(await late.promise), 'queue_timeout after 1000ms');
  assert.deepEqual(r.scheduler.queueReport(), {});
});

test('aging bound: with interactive requests saturating the slot, a batch tenant still gets one served about every 2 x queue_aging', async () => {
  const chat = { name: 'chat', priority: 'interactive', weight: 1 } as const;
  const bulk = { name: 'bulk', priority: 'batch', weight: 1 } as const;
  // Twice what the slot serves, for 120 s; 10 batch requests queued behind from the start.
  const arrivals = [...arrivalsOf(chat, 1, 0, 0), ...arrivalsOf(bulk, 10, 0, 0), ...arrivalsOf(chat, 240, 500, 500)];
  const table: readonly (readonly [number, number])[] = [
    [10_000, 5],
    [5_000, 10],
    [0, 0],
  ];
  for (const [agingMs, atLeast] of table) {
    const result = await simulate(
      arrivals,
      1_000,
      { maxQueue: 1_000, queueTimeoutMs: 3_600_000, queueAgingMs: agingMs },
      120_000,
    );
    const served = (result.admittedAtMs.bulk ?? []).filter((at) => at <= 120_000);
    assert.ok(
      served.length >= atLeast,
      `queue_aging ${agingMs}ms: ${served.length} batch requests served in 120 s (at ${served.join(', ')})`,
    );
    if (agingMs === 0) assert.equal(served.length, 0, 'no aging: strict priority');
    const gaps = served.slice(1).map((at, i) => at - (served[i] ?? at));
    if (agingMs > 0) assert.ok(Math.max(...gaps) <= 2 * agingMs + 1_000, `gaps ${gaps.join(', ')}`);
  }
});

test('a request that overtakes one held for a waking node waits for the same wake, not a 503 on the next fleet change', async () => {
  const asleep = oneSlotNode('a', ['m'], { health: 'asleep' });
  const r = rig([asleep]);
  const held = ask(r, 'm', as('Z', 'batch'));
  await settle();
  r.setNodes([{ ...asleep, wake: { lastSentAt: r.clock.now(), wakingUntil: r.clock.now() + 60_000 } }]);
  const chat = ask(r, 'm', as('I', 'interactive'));
  r.clock.advance(100);
  r.scheduler.fleetChanged();
  await settle();
  assert.deepEqual([describe(held.outcome()), describe(chat.outcome())], ['waiting', 'waiting'], 'both wait for the wake');
  r.clock.advance(400);
  r.setNodes([oneSlotNode('a', ['m'])]);
  r.scheduler.fleetChanged();
  await settle();
  assert.deepEqual(
    [describe(held.outcome()), describe(chat.outcome())],
    ['waiting', 'admitted a after 500ms'],
    'interactive first',
  );
  r.leases[0]?.release();
  await settle();
  assert.equal(describe(held.outcome()), 'admitted a after 500ms');
});

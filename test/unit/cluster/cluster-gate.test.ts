// The gate over a fake store (the scripts' semantics, in memory): leases under the limit, the
// global queue woken by an announcement, fallback to the replica's share when a call fails
// (logged once), and the rejoin that registers every lease held, fallback ones included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { ClusterGate, type AcquireAnswer, type ClusterStore, type Pair, type PairHeld } from '#src/cluster/index.ts';

class FakeStore implements ClusterStore {
  down = false;
  live = 1;
  readonly leases = new Set<string>();
  readonly queue: string[] = [];
  readonly renewed: PairHeld[][] = [];
  #listeners: ((pair: Pair) => void)[] = [];
  #check(): void {
    if (this.down) throw new Error('connect ECONNREFUSED');
  }
  async acquire(_pair: Pair, leaseId: string, waiterId: string, limit: number): Promise<AcquireAnswer> {
    this.#check();
    const rank = this.queue.indexOf(waiterId);
    const ahead = rank < 0 ? this.queue.length : rank;
    const free = limit - this.leases.size;
    if (free > 0 && ahead < free) {
      this.leases.add(leaseId);
      if (rank >= 0) this.queue.splice(rank, 1);
      return { granted: true, used: this.leases.size, ahead: 0 };
    }
    if (rank < 0) this.queue.push(waiterId);
    return { granted: false, used: this.leases.size, ahead };
  }
  async release(pair: Pair, leaseId: string): Promise<void> {
    this.#check();
    this.leases.delete(leaseId);
    for (const l of this.#listeners) l(pair);
  }
  async leave(_pair: Pair, waiterId: string): Promise<void> {
    this.#check();
    const at = this.queue.indexOf(waiterId);
    if (at >= 0) this.queue.splice(at, 1);
  }
  async renew(held: readonly PairHeld[]): Promise<number> {
    this.#check();
    this.renewed.push([...held]);
    for (const h of held) for (const id of h.leases) this.leases.add(id);
    return this.live;
  }
  readonly once = new Set<string>();
  async claimOnce(key: string): Promise<boolean> {
    this.#check();
    if (this.once.has(key)) return false;
    this.once.add(key);
    return true;
  }
  onFreed(listener: (pair: Pair) => void): void {
    this.#listeners.push(listener);
  }
  async close(): Promise<void> {}
}

const PAIR = { node: 'n', model: 'm' };
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup(): { store: FakeStore; gate: ClusterGate; clock: ManualClock; warnings: string[] } {
  const store = new FakeStore();
  const clock = new ManualClock();
  const warnings: string[] = [];
  const logger = { warn: (_o: object, msg: string) => void warnings.push(msg), info: () => {} };
  const gate = new ClusterGate({ store, replica: 'r1', leaseTtlMs: 3_000, clock, logger });
  return { store, gate, clock, warnings };
}

test('leases are granted under the limit; a waiter is woken by the announcement of a freed slot', async () => {
  const { store, gate, clock } = setup();
  await gate.start();
  const never = new AbortController().signal;
  const held = await Promise.all([1, 2].map(() => gate.acquire(PAIR, 2, clock.monotonicMs() + 10_000, never)));
  assert.deepEqual(
    held.map((h) => h.kind),
    ['granted', 'granted'],
  );
  let third: string | undefined;
  void gate.acquire(PAIR, 2, clock.monotonicMs() + 10_000, never).then((o) => (third = o.kind));
  await flush();
  assert.equal(third, undefined, 'the third waits');
  assert.equal(gate.status().waiters, 1);
  const first = held[0];
  if (first?.kind === 'granted') first.release();
  await flush();
  await flush();
  assert.equal(third, 'granted', 'woken by the announcement, no poll needed');
  assert.equal(store.leases.size, 2);
  gate.stop();
});

test('a waiter past its deadline leaves the queue; an aborted one too', async () => {
  const { store, gate, clock } = setup();
  await gate.start();
  const never = new AbortController().signal;
  await gate.acquire(PAIR, 1, clock.monotonicMs() + 10_000, never);
  const late = gate.acquire(PAIR, 1, clock.monotonicMs() + 1_000, never);
  await flush();
  assert.equal(store.queue.length, 1);
  for (let i = 0; i < 5; i += 1) {
    clock.advance(300);
    await flush();
  }
  assert.equal((await late).kind, 'timed_out');
  await flush();
  assert.equal(store.queue.length, 0, 'it left the global queue');
  const aborter = new AbortController();
  const aborted = gate.acquire(PAIR, 1, clock.monotonicMs() + 10_000, aborter.signal);
  await flush();
  aborter.abort();
  assert.equal((await aborted).kind, 'aborted');
  gate.stop();
});

test('the store lost: fallback to the share (slots / live replicas), logged once; the rejoin registers every lease held', async () => {
  const { store, gate, clock, warnings } = setup();
  store.live = 2;
  await gate.start();
  assert.equal(gate.status().liveReplicas, 2);
  const never = new AbortController().signal;
  const before = await gate.acquire(PAIR, 4, clock.monotonicMs() + 10_000, never);
  assert.equal(before.kind, 'granted');
  store.down = true;
  // The share of 4 slots between 2 replicas is 2: one more (beside the one held) is granted locally.
  const second = await gate.acquire(PAIR, 4, clock.monotonicMs() + 10_000, never);
  assert.equal(second.kind, 'granted');
  assert.equal(gate.status().mode, 'fallback');
  let third: string | undefined;
  void gate.acquire(PAIR, 4, clock.monotonicMs() + 60_000, never).then((o) => (third = o.kind));
  clock.advance(200);
  await flush();
  assert.equal(third, undefined, 'the share is used up');
  assert.deepEqual(warnings.filter((w) => w.startsWith('cluster store lost')).length, 1, 'logged once');
  store.leases.clear(); // the store restarted empty
  store.down = false;
  for (let i = 0; i < 10 && gate.status().mode === 'fallback'; i += 1) {
    clock.advance(300);
    await flush();
  }
  assert.equal(gate.status().mode, 'shared');
  const registered = store.renewed.at(-1)?.flatMap((h) => h.leases) ?? [];
  assert.equal(registered.length, 2, 'both leases held (the one from before and the fallback one) registered again');
  await flush();
  await flush();
  assert.equal(third, 'granted', 'the waiter goes on through the store: 3 of 4 slots');
  assert.equal(store.leases.size, 3);
  gate.stop();
});

test('onRejoin: told each time the store answers again after a fallback (not at the first join); every mode listener told', async () => {
  const { store, gate, clock } = setup();
  const modes: string[] = [];
  const more: string[] = [];
  let rejoins = 0;
  gate.onModeChange((m) => modes.push(m));
  gate.onModeChange((m) => more.push(m));
  gate.onRejoin(() => {
    rejoins += 1;
    assert.equal(gate.shared(), true, 'shared by the time the hook runs');
  });
  await gate.start();
  assert.equal(rejoins, 0, 'the first join is no rejoin');
  for (let loss = 1; loss <= 2; loss += 1) {
    store.down = true;
    gate.storeFailed(new Error('gone'));
    store.down = false;
    for (let i = 0; i < 10 && !gate.shared(); i += 1) {
      clock.advance(300);
      await flush();
    }
    assert.equal(rejoins, loss, `rejoin ${loss}`);
  }
  assert.deepEqual(modes, ['shared', 'fallback', 'shared', 'fallback', 'shared']);
  assert.deepEqual(more, modes);
  gate.stop();
});

test('onRejoin: a replica that started while the store was down is told when it first joins', async () => {
  const { store, gate, clock } = setup();
  let rejoins = 0;
  gate.onRejoin(() => (rejoins += 1));
  store.down = true;
  await gate.start();
  assert.equal(gate.shared(), false);
  store.down = false;
  for (let i = 0; i < 10 && !gate.shared(); i += 1) {
    clock.advance(300);
    await flush();
  }
  assert.equal(rejoins, 1, 'what it admitted alone meanwhile is to be added');
  gate.stop();
});

test('a live count that is not one (a store port answering NaN or a string) is a lost store: the last good count stays, the share admits', async () => {
  for (const nonsense of [Number.NaN, 'abc' as unknown as number, 0, -1, 1.5]) {
    const { store, gate, clock, warnings } = setup();
    store.live = 2;
    await gate.start();
    assert.equal(gate.status().liveReplicas, 2);
    store.live = nonsense;
    for (let i = 0; i < 10 && gate.shared(); i += 1) {
      clock.advance(1_000);
      await flush();
    }
    const status = gate.status();
    assert.equal(status.mode, 'fallback', `${String(nonsense)}: taken as lost`);
    assert.equal(status.liveReplicas, 2, 'the last good count stays');
    assert.match(status.reason ?? '', /^store answered .* to renew: expected an integer count of live replicas/);
    assert.equal(warnings.filter((w) => w.startsWith('cluster store lost')).length, 1, 'logged once, as a lost store');
    // The store now fails every call: the share of 4 slots between 2 replicas is 2, granted locally.
    store.down = true;
    const never = new AbortController().signal;
    const granted = await Promise.all([1, 2].map(() => gate.acquire(PAIR, 4, clock.monotonicMs() + 10_000, never)));
    assert.deepEqual(
      granted.map((g) => g.kind),
      ['granted', 'granted'],
      String(nonsense),
    );
    gate.stop();
  }
});

test('a store that answers nonsense from its start: fallback with the reason, this replica alone (its share every slot)', async () => {
  const { store, gate, clock, warnings } = setup();
  store.live = Number.NaN;
  await gate.start();
  assert.equal(gate.shared(), false);
  assert.equal(gate.status().liveReplicas, 1);
  assert.match(gate.status().reason ?? '', /^store answered NaN to renew/);
  assert.equal(warnings.filter((w) => w.startsWith('cluster store lost at start')).length, 1);
  const never = new AbortController().signal;
  const all = await Promise.all([1, 2, 3].map(() => gate.acquire(PAIR, 3, clock.monotonicMs() + 10_000, never)));
  assert.deepEqual(
    all.map((g) => g.kind),
    ['granted', 'granted', 'granted'],
  );
  gate.stop();
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { LeaderLease, leaderTimings, type LeaderStore } from '#src/cluster/index.ts';

/** One lease key, expiring on the manual clock; `down` makes every call fail. */
class FakeLeaderStore implements LeaderStore {
  holder: string | undefined;
  until = 0;
  down = false;
  readonly clock: ManualClock;
  constructor(clock: ManualClock) {
    this.clock = clock;
  }
  async holdLease(_key: string, holder: string, ttlMs: number): Promise<boolean> {
    if (this.down) throw new Error('store down');
    const now = this.clock.monotonicMs();
    if (this.holder !== undefined && this.holder !== holder && now < this.until) return false;
    this.holder = holder;
    this.until = now + ttlMs;
    return true;
  }
  async dropLease(_key: string, holder: string): Promise<void> {
    if (this.holder === holder) this.holder = undefined;
  }
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

test('leaderTimings: the key lives two thirds of lease_ttl and every replica asks every third', () => {
  assert.deepEqual(leaderTimings(3_000), { keyTtlMs: 2_000, everyMs: 1_000 });
  assert.deepEqual(leaderTimings(30), { keyTtlMs: 30, everyMs: 10 });
});

test('one leads; the other takes over when the leader stops, leads alone on store loss, and a stop gives it up', async () => {
  const clock = new ManualClock();
  const store = new FakeLeaderStore(clock);
  const changes: string[] = [];
  const lost: unknown[] = [];
  const lease = (name: string): LeaderLease =>
    new LeaderLease({
      store,
      name: 'mesh',
      replica: name,
      leaseTtlMs: 3_000,
      clock,
      onChange: (l) => changes.push(`${name}:${l}`),
      lost: (e) => lost.push(e),
    });
  const a = lease('a');
  const b = lease('b');
  await a.start();
  await b.start();
  assert.deepEqual([a.leading(), b.leading()], [true, false]);
  assert.deepEqual(changes, ['a:true', 'b:false']);
  // a stops (and gives it up): b holds it at its next ask, a third of lease_ttl later.
  await a.stop();
  assert.equal(b.leading(), false);
  for (let ms = 0; ms < 3_000 && !b.leading(); ms += 1_000) {
    clock.advance(1_000);
    await flush();
  }
  assert.equal(b.leading(), true);
  store.down = true;
  const c = lease('c');
  await c.start();
  assert.equal(c.leading(), true, 'without the store every replica leads (a duplicate record over none)');
  assert.equal(lost.length, 1);
  store.down = false;
  await b.stop();
  await c.stop();
  assert.equal(store.holder, undefined, 'a stopped holder gives the lease up');
});

test('a lease that must not run twice (the batch runner) is not held while the store cannot be reached, and before the key expires', async () => {
  const clock = new ManualClock();
  const store = new FakeLeaderStore(clock);
  const changes: string[] = [];
  const lease = (name: string): LeaderLease =>
    new LeaderLease({
      store,
      name: 'batch',
      replica: name,
      leaseTtlMs: 3_000,
      clock,
      onChange: (l) => changes.push(`${name}:${l}`),
      lost: () => {},
      leadsWhileUnreachable: false,
    });
  const a = lease('a');
  await a.start();
  assert.equal(a.leading(), true);
  // The store stops answering a: at its next ask (a third of lease_ttl) it lets go, while its key
  // (two thirds) still keeps every other replica out.
  store.down = true;
  clock.advance(1_000);
  await flush();
  assert.equal(a.leading(), false);
  assert.ok(clock.monotonicMs() < store.until, 'a let go before its key expired');
  const b = lease('b');
  await b.start();
  assert.equal(b.leading(), false, 'without the store no replica holds it');
  store.down = false;
  await a.stop();
  await b.stop();
  assert.deepEqual(changes, ['a:true', 'a:false', 'b:false']);
});

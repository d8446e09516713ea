// The Lua scripts on a real redis-server, through RedisStore: a lease only under the limit, the
// global queue's order across replicas (first to ask is first served, whichever replica asks
// next), the announcement of a freed slot, a lease not renewed gone after lease_ttl, a renewal
// that registers a held lease again after the store lost it, and scripts reloaded after a flush.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redisStoresForFile } from '#test/fixtures/redis-stores.ts';
import { eventually } from '#test/fixtures/http.ts';
import { on, untilEvent } from '#test/fixtures/events.ts';
import { EventBus } from '#src/core/events.ts';

const { server, storeFor } = redisStoresForFile();
const PAIR = { node: 'n', model: 'm' };

test('a lease only under the limit; the queue serves the first to ask first, across replicas; a release is announced', async () => {
  const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((r) => storeFor(r, 'q:')));
  assert.ok(a && b && c);
  const freed: string[] = [];
  const announced = new EventBus<{ freed: undefined }>();
  c.onFreed((pair) => {
    freed.push(`${pair.node}/${pair.model}`);
    announced.emit('freed', undefined);
  });
  assert.equal((await a.acquire(PAIR, 'a/1', 'a/1', 1)).granted, true);
  // b asks first, then c: both queue, b ahead.
  assert.deepEqual(await b.acquire(PAIR, 'b/1', 'b/1', 1), { granted: false, used: 1, ahead: 0 });
  assert.deepEqual(await c.acquire(PAIR, 'c/1', 'c/1', 1), { granted: false, used: 1, ahead: 1 });
  await a.release(PAIR, 'a/1');
  // c asks again first (its announcement came first): it must not overtake b.
  assert.equal((await c.acquire(PAIR, 'c/1', 'c/1', 1)).granted, false);
  assert.equal((await b.acquire(PAIR, 'b/1', 'b/1', 1)).granted, true);
  await b.release(PAIR, 'b/1');
  assert.equal((await c.acquire(PAIR, 'c/1', 'c/1', 1)).granted, true);
  await untilEvent(() => freed.length >= 2, [on(announced, 'freed')], 'the releases were announced');
  assert.equal(freed[0], 'n/m');
});

test('a waiter that leaves lets the next one up; one of a dead replica is forgotten after lease_ttl', async () => {
  const [a, b] = await Promise.all(['a', 'b'].map((r) => storeFor(r, 'w:', 1_000)));
  assert.ok(a && b);
  await a.acquire(PAIR, 'a/1', 'a/1', 1);
  await a.acquire(PAIR, 'a/2', 'a/2', 1);
  assert.equal((await b.acquire(PAIR, 'b/1', 'b/1', 1)).ahead, 1);
  await a.leave(PAIR, 'a/2');
  await a.release(PAIR, 'a/1');
  assert.equal((await b.acquire(PAIR, 'b/1', 'b/1', 1)).granted, true);
  // b dies holding it (no renewal): the lease expires after lease_ttl, by the server's clock.
  await eventually(async () => (await a.acquire(PAIR, 'a/3', 'a/3', 1)).granted, 5_000, "b's lease expired");
});

test('a renewal registers a held lease again after the store lost it (restart); scripts are loaded again', async () => {
  const a = await storeFor('a', 'r:');
  const b = await storeFor('b', 'r:');
  assert.equal((await a.acquire(PAIR, 'a/1', 'a/1', 1)).granted, true);
  await server().restart();
  // Both clients reconnect by themselves; the server has no lease and no script.
  await eventually(
    async () => (await a.renew([{ pair: PAIR, leases: ['a/1'], waiters: [] }]).catch(() => 0)) === 1,
    10_000,
    'a renews after the restart',
  );
  // b's client reconnects on its own schedule (no offline queue: a call while down fails at once).
  await eventually(
    async () =>
      await b.renew([]).then(
        () => true,
        () => false,
      ),
    10_000,
    'b reconnected after the restart',
  );
  const answer = await b.acquire(PAIR, 'b/1', 'b/1', 1).catch(() => undefined);
  assert.equal(answer?.granted, false, "a's registered lease counts: b waits");
  assert.equal(answer?.used, 1);
});

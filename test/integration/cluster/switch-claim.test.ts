// Issue 26 (a router's one switch at a time across replicas): the switch claim's Lua scripts on a
// real redis-server through RedisStore: one holder per node, the other told who holds it, an
// update (loaded) and a renewal by the holder only, a release only by the holder and announced on
// the gate's channel, a claim not renewed gone after lease_ttl, and one registered again after a
// restart of the store.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { RedisStore, type SwitchClaimFields } from '#src/cluster/index.ts';
import { startRedisServer, type RedisServer } from '#test/fixtures/redis-server.ts';
import { eventually } from '#test/fixtures/http.ts';

let redis: RedisServer | undefined;
const stores: RedisStore[] = [];

before(async () => {
  redis = await startRedisServer();
});
after(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await redis?.stop();
});

async function storeFor(replica: string, prefix: string, leaseTtlMs = 5_000): Promise<RedisStore> {
  const store = new RedisStore({ url: redis?.url ?? '', password: undefined, replica, leaseTtlMs, callTimeoutMs: 1_000, prefix });
  stores.push(store);
  await store.connect();
  return store;
}

const claim = (holder: string, replica: string, model: string, extra: Partial<SwitchClaimFields> = {}): SwitchClaimFields => ({ holder, replica, model, action: 'load', by: 'request', loaded: false, victim: undefined, ...extra });

test('one holder per node; the other is told who holds it; only the holder updates, renews and releases; each change is announced', async () => {
  const [a, b] = await Promise.all([storeFor('r0', 's:'), storeFor('r1', 's:')]);
  assert.ok(a && b);
  const heard: string[] = [];
  b.onSwitch((node) => heard.push(node));
  await eventually(async () => (await a.takeSwitch('probe', claim('r0/p', 'r0', 'x'))) === undefined && (await a.releaseSwitch('probe', 'r0/p'), heard.includes('probe')), 5_000, 'the subscriber hears announcements');
  assert.equal(await a.takeSwitch('router', claim('r0/1', 'r0', 'm1', { victim: 'm0' })), undefined, 'free: taken');
  assert.deepEqual(await b.takeSwitch('router', claim('r1/1', 'r1', 'm2')), claim('r0/1', 'r0', 'm1', { victim: 'm0' }), 'taken: the holder is named');
  assert.equal(await b.takeSwitch('other', claim('r1/2', 'r1', 'm2', { action: 'unload', by: 'admin' })), undefined, 'another node is free');
  assert.equal(await a.takeSwitch('router', claim('r0/1', 'r0', 'm1', { victim: 'm0', loaded: true })), undefined, 'the holder updates its own');
  assert.equal((await b.peekSwitch('router'))?.loaded, true);
  assert.equal(await b.renewSwitch('router', claim('r1/1', 'r1', 'm2')), false, 'not the holder: no renewal');
  assert.equal(await a.renewSwitch('router', claim('r0/1', 'r0', 'm1', { loaded: true })), true);
  await b.releaseSwitch('router', 'r1/1');
  assert.equal((await a.peekSwitch('router'))?.holder, 'r0/1', 'only the holder releases');
  await a.releaseSwitch('router', 'r0/1');
  assert.equal(await b.peekSwitch('router'), undefined);
  await eventually(() => heard.filter((n) => n === 'router').length >= 3, 5_000, 'take, update and release announced');
  assert.equal(await b.takeSwitch('router', claim('r1/1', 'r1', 'm2')), undefined, 'released: the next takes it');
});

test('a claim not renewed is gone after lease_ttl; one the store lost is registered again by its renewal', async () => {
  const [a, b] = await Promise.all([storeFor('r0', 'e:', 600), storeFor('r1', 'e:', 600)]);
  assert.ok(a && b);
  assert.equal(await a.takeSwitch('router', claim('r0/1', 'r0', 'm1')), undefined);
  assert.ok((await b.takeSwitch('router', claim('r1/1', 'r1', 'm2'))) !== undefined);
  // r0 dies (no renewal): its claim expires by the server's clock.
  await eventually(async () => (await b.takeSwitch('router', claim('r1/1', 'r1', 'm2'))) === undefined, 5_000, 'the dead holder\'s claim expired');
  await redis?.restart();
  await eventually(async () => (await b.renewSwitch('router', claim('r1/1', 'r1', 'm2')).catch(() => false)), 10_000, 'renewed after the restart');
  await eventually(async () => (await a.takeSwitch('router', claim('r0/2', 'r0', 'm3')).catch(() => undefined))?.holder === 'r1/1', 10_000, 'the registered claim holds');
});

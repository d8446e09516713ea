// Issue 26 (a router's one switch at a time across replicas): the switch claim's Lua scripts on a
// real redis-server through RedisStore: one holder per node, the other told who holds it, an
// update (loaded) and a renewal by the holder only, a release only by the holder and announced on
// the gate's channel, a claim not renewed gone after lease_ttl, and one registered again after a
// restart of the store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RedisStore, SwitchClaimFields } from '#src/cluster/index.ts';
import { redisStoresForFile } from '#test/fixtures/redis-stores.ts';
import { eventually } from '#test/fixtures/http.ts';
import { EventBus } from '#src/core/events.ts';
import { on, untilEvent } from '#test/fixtures/events.ts';

const { server, storeFor } = redisStoresForFile();

const heldBy = (answer: Awaited<ReturnType<RedisStore['takeSwitch']>> | undefined): string | undefined =>
  answer?.kind === 'held' ? answer.claim.holder : undefined;
const claim = (holder: string, replica: string, model: string, extra: Partial<SwitchClaimFields> = {}): SwitchClaimFields => ({
  holder,
  replica,
  model,
  action: 'load',
  by: 'request',
  loaded: false,
  victim: undefined,
  ...extra,
});

test('one holder per node; the other is told who holds it; only the holder updates, renews and releases; each change is announced', async () => {
  const [a, b] = await Promise.all([storeFor('r0', 's:'), storeFor('r1', 's:')]);
  assert.ok(a && b);
  const heard: string[] = [];
  const announcements = new EventBus<{ switch: string }>();
  b.onSwitch((node) => {
    heard.push(node);
    announcements.emit('switch', node);
  });
  await eventually(
    async () =>
      (await a.takeSwitch('probe', claim('r0/p', 'r0', 'x'))) === undefined &&
      (await a.releaseSwitch('probe', 'r0/p'), heard.includes('probe')),
    5_000,
    'the subscriber hears announcements',
  );
  assert.equal(await a.takeSwitch('router', claim('r0/1', 'r0', 'm1', { victim: 'm0' })), undefined, 'free: taken');
  assert.deepEqual(
    await b.takeSwitch('router', claim('r1/1', 'r1', 'm2')),
    { kind: 'held', claim: claim('r0/1', 'r0', 'm1', { victim: 'm0' }) },
    'taken: the holder is named',
  );
  assert.equal(
    await b.takeSwitch('other', claim('r1/2', 'r1', 'm2', { action: 'unload', by: 'admin' })),
    undefined,
    'another node is free',
  );
  assert.equal(
    await a.takeSwitch('router', claim('r0/1', 'r0', 'm1', { victim: 'm0', loaded: true })),
    undefined,
    'the holder updates its own',
  );
  assert.equal((await b.peekSwitch('router'))?.loaded, true);
  assert.equal(await b.renewSwitch('router', claim('r1/1', 'r1', 'm2')), false, 'not the holder: no renewal');
  assert.equal(await a.renewSwitch('router', claim('r0/1', 'r0', 'm1', { loaded: true })), true);
  await b.releaseSwitch('router', 'r1/1');
  assert.equal((await a.peekSwitch('router'))?.holder, 'r0/1', 'only the holder releases');
  await a.releaseSwitch('router', 'r0/1');
  assert.deepEqual(
    await b.peekSwitch('router'),
    { ...claim('r0/1', 'r0', 'm1', { loaded: true }), settled: true },
    "released: the switch's record stays, held by no one",
  );
  await untilEvent(
    () => heard.filter((n) => n === 'router').length >= 3,
    [on(announcements, 'switch')],
    'take, update and release announced',
  );
  assert.equal(await b.takeSwitch('router', claim('r1/1', 'r1', 'm2')), undefined, 'released: the next takes it');
});

test('a claim not renewed is gone after lease_ttl; one the store lost is registered again by its renewal', async () => {
  const [a, b] = await Promise.all([storeFor('r0', 'e:', 600), storeFor('r1', 'e:', 600)]);
  assert.ok(a && b);
  assert.equal(await a.takeSwitch('router', claim('r0/1', 'r0', 'm1')), undefined);
  assert.ok((await b.takeSwitch('router', claim('r1/1', 'r1', 'm2'))) !== undefined);
  // r0 dies (no renewal): its claim expires by the server's clock.
  await eventually(
    async () => (await b.takeSwitch('router', claim('r1/1', 'r1', 'm2'))) === undefined,
    5_000,
    "the dead holder's claim expired",
  );
  await server().restart();
  await eventually(
    async () => await b.renewSwitch('router', claim('r1/1', 'r1', 'm2')).catch(() => false),
    10_000,
    'renewed after the restart',
  );
  await eventually(
    async () => heldBy(await a.takeSwitch('router', claim('r0/2', 'r0', 'm3')).catch(() => undefined)) === 'r1/1',
    10_000,
    'the registered claim holds',
  );
});

test("the switch guard: a claim waits while other replicas use its victim; another replica's request that would make the router load is refused, its own and followers are not", async () => {
  const [a, b] = await Promise.all([storeFor('r0', 'g:'), storeFor('r1', 'g:')]);
  assert.ok(a && b);
  const inUse = await b.acquire({ node: 'router', model: 'm0' }, 'r1/x/1', 'r1/x/1', 4, 1);
  assert.equal(inUse.granted, true, 'r1 serves m0');
  assert.deepEqual(
    await a.takeSwitch('router', claim('r0/1', 'r0', 'm1', { victim: 'm0' })),
    { kind: 'victim_busy', victim: 'm0', replicas: ['r1'] },
    'm0 in use on r1: not unloaded',
  );
  await b.release({ node: 'router', model: 'm0' }, 'r1/x/1');
  assert.equal(await a.takeSwitch('router', claim('r0/1', 'r0', 'm1', { victim: 'm0' })), undefined, 'm0 idle everywhere: taken');
  assert.equal(
    (await b.acquire({ node: 'router', model: 'm0' }, 'r1/x/2', 'r1/x/2', 4, 1)).switching,
    true,
    'the victim: refused on r1',
  );
  assert.equal(
    (await b.acquire({ node: 'router', model: 'm2' }, 'r1/x/3', 'r1/x/3', 4, 1)).switching,
    true,
    'another model on a one-model router: refused',
  );
  assert.equal(
    (await b.acquire({ node: 'router', model: 'm1' }, 'r1/x/4', 'r1/x/4', 4, 1)).granted,
    true,
    'a follower of the switch: granted',
  );
  assert.equal(
    (await a.acquire({ node: 'router', model: 'm1' }, 'r0/x/5', 'r0/x/5', 4, 1)).granted,
    true,
    "the holder's own request: granted",
  );
  assert.equal(
    (await b.acquire({ node: 'router', model: 'm2' }, 'r1/x/6', 'r1/x/6', 4, 2)).granted,
    true,
    'two models at a time: another one (not the victim) goes',
  );
  assert.equal(
    (await b.acquire({ node: 'other', model: 'm0' }, 'r1/x/7', 'r1/x/7', 4, 1)).granted,
    true,
    'another node: no guard',
  );
  await a.releaseSwitch('router', 'r0/1');
  assert.equal(
    (await b.acquire({ node: 'router', model: 'm0' }, 'r1/x/8', 'r1/x/8', 4, 1)).switching,
    true,
    "released, the record stays: a stale listing's request for the victim is still refused",
  );
  assert.equal(
    (await b.acquire({ node: 'router', model: 'm1' }, 'r1/x/9', 'r1/x/9', 4, 1)).granted,
    true,
    'the model switched to goes',
  );
  assert.deepEqual(
    await b.takeSwitch('router', claim('r1/2', 'r1', 'm0', { victim: 'm1' })),
    { kind: 'victim_busy', victim: 'm1', replicas: ['r0'] },
    "its own leases on the victim do not count, r0's do",
  );
  await a.release({ node: 'router', model: 'm1' }, 'r0/x/5');
  assert.equal(
    await b.takeSwitch('router', claim('r1/2', 'r1', 'm0', { victim: 'm1' })),
    undefined,
    'the record is replaced by the next switch',
  );
  assert.equal(
    (await a.acquire({ node: 'router', model: 'm0' }, 'r0/x/10', 'r0/x/10', 4, 1)).granted,
    true,
    'now m0 is the one switched to',
  );
  assert.equal((await b.acquire({ node: 'two', model: 'm5' }, 'r1/x/11', 'r1/x/11', 4, 2)).granted, true);
  assert.deepEqual(
    await a.takeSwitch('two', claim('r0/3', 'r0', 'm5', { action: 'unload', by: 'admin' })),
    { kind: 'victim_busy', victim: 'm5', replicas: ['r1'] },
    'an unload of a model in use on r1: refused',
  );
});

// Issue 26, the mesh leader lease: two replicas of one site ([cluster] with [mesh]) on a real
// redis-server. Only the replica holding the lease publishes the site's record; when it dies
// (its store calls never answer again: no renewal) the other holds the lease within lease_ttl
// and publishes in full at once; a replica that stops gives the lease up for the next at once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ManualClock, systemClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { LeaderLease, RedisStore, type LeaderStore } from '#src/cluster/index.ts';
import { MemoryBus, MeshService, type MeshEvents } from '#src/mesh/index.ts';
import type { PublishGate } from '#src/mesh/publish-gate.ts';
import { siteCodec } from '#src/mesh/site-codec.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { startRedisServer, type RedisServer } from '#test/fixtures/redis-server.ts';
import { untilEvent, type Trigger } from '#test/fixtures/events.ts';
import { HEARTBEAT_MS, meshConfig, settle } from '#test/unit/mesh/mesh-harness.ts';

const TTL_MS = 1_500;
/**
 * A bound, not a measure: how long a takeover may take on a very busy machine. What "within
 * lease_ttl" means is judged by counting the taker's asks, which a slow machine only spaces out.
 */
const WAIT_MS = 60_000;

let redis: RedisServer;
const stores: RedisStore[] = [];
const leases: LeaderLease[] = [];
const services: MeshService[] = [];
const prefix = `t${randomBytes(4).toString('hex')}:`;
const key = newSiteKey();
const meshClock = new ManualClock();
const bus = new MemoryBus();

before(async () => {
  redis = await startRedisServer();
});
after(async () => {
  for (const service of services) await service.stop();
  for (const lease of leases) await lease.stop();
  for (const store of stores) await store.close();
  await redis?.stop();
});

async function store(replica: string): Promise<RedisStore> {
  const s = new RedisStore({ url: redis.url, password: undefined, replica, leaseTtlMs: TTL_MS, callTimeoutMs: 300, prefix });
  stores.push(s);
  await s.connect();
  return s;
}

/** A store that counts the asks for the lease (holdLease calls). */
function counting(inner: LeaderStore): { store: LeaderStore; asks(): number } {
  let asks = 0;
  return {
    store: {
      holdLease: (k, h, ttl) => {
        asks += 1;
        return inner.holdLease(k, h, ttl);
      },
      dropLease: (k, h) => inner.dropLease(k, h),
    },
    asks: () => asks,
  };
}

/** A store that can be made to die: from `kill` on, no call ever answers (a SIGKILLed replica renews nothing). */
function mortal(inner: LeaderStore): { store: LeaderStore; kill(): void } {
  let dead = false;
  const never = new Promise<never>(() => {});
  return {
    store: {
      holdLease: (k, h, ttl) => (dead ? never : inner.holdLease(k, h, ttl)),
      dropLease: (k, h) => (dead ? never : inner.dropLease(k, h)),
    },
    kill: () => {
      dead = true;
    },
  };
}

interface Replica {
  readonly lease: LeaderLease;
  readonly published: MeshEvents['mesh:published'][];
  readonly leading: () => boolean;
  /** The lease taken or lost by this replica (its onChange, after `leading()` says so). */
  readonly changes: Trigger;
}

async function replica(name: string, leaderStore: LeaderStore): Promise<Replica> {
  const listeners = new Set<() => void>();
  const lease = new LeaderLease({
    store: leaderStore,
    name: 'mesh',
    replica: name,
    leaseTtlMs: TTL_MS,
    clock: systemClock,
    onChange: () => listeners.forEach((l) => l()),
    lost: () => {},
  });
  const gate: PublishGate = { mayPublish: () => lease.leading(), onChange: (l) => (listeners.add(l), () => listeners.delete(l)) };
  const events = new EventBus<MeshEvents>((e) => {
    throw e;
  });
  const published: MeshEvents['mesh:published'][] = [];
  events.on('mesh:published', (p) => published.push(p));
  const service = new MeshService({
    config: meshConfig('site', [{ id: 'site', publicKey: key.publicKey }]),
    clock: meshClock,
    transport: bus.transport(`peer-${name}`, key.peerId),
    codec: siteCodec(key),
    sources: [{ name: 'test', models: () => ({ kind: 'list', models: [{ id: 'm', ctx: 4096 }] }) }],
    load: () => ({ in_flight: 0, queued: 0, slots: 4 }),
    events,
    publishGate: gate,
  });
  services.push(service);
  leases.push(lease);
  // As the gateway does: the mesh starts, then the cluster (the lease's first answer decides).
  await service.start();
  await lease.start();
  await settle();
  const changes: Trigger = {
    label: `${name}'s lease changes`,
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return { lease, published, leading: () => lease.leading(), changes };
}

async function heartbeats(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    meshClock.advance(HEARTBEAT_MS);
    await settle();
  }
}

test('one replica publishes; the other takes over within lease_ttl when it dies, and at once when it stops', async () => {
  const first = mortal(await store('r1'));
  const a = await replica('r1', first.store);
  const bStore = counting(await store('r2'));
  const b = await replica('r2', bStore.store);
  assert.equal(a.leading(), true, 'the first replica holds the lease');
  assert.equal(b.leading(), false);
  await heartbeats(3);
  assert.ok(a.published.length >= 2, `the holder publishes (${a.published.length})`);
  assert.equal(a.published[0]?.kind, 'full');
  assert.equal(b.published.length, 0, 'the other replica publishes nothing');

  first.kill();
  const asksAtKill = bStore.asks();
  // A dead replica is not stopped (its calls would never answer).
  leases.splice(leases.indexOf(a.lease), 1);
  await untilEvent(() => b.leading(), [b.changes], 'the second replica holds the lease', { timeoutMs: WAIT_MS });
  // The dead holder's key lives two thirds of lease_ttl past its last renewal and b asks every
  // third: b holds it by its third ask after the kill (one more for an ask already in flight). A
  // busy machine spaces the asks out and so needs fewer, never more.
  const asks = bStore.asks() - asksAtKill;
  assert.ok(asks >= 1 && asks <= 4, `taken over at b's ask ${asks} after the kill (lease_ttl ${TTL_MS} ms, an ask every third)`);
  await settle();
  assert.equal(b.published[0]?.kind, 'full', 'the new publisher sends its record in full at once');
  await heartbeats(2);
  assert.ok(b.published.length >= 2);

  const c = await replica('r3', await store('r3'));
  assert.equal(c.leading(), false, 'a third replica waits while the second holds the lease');
  await b.lease.stop();
  // Given up at once: right after the stop the key is free (a probe can hold it, then lets go),
  // where an expiry would leave it held for up to two thirds of lease_ttl.
  const probe = await store('probe');
  assert.equal(await probe.holdLease('mesh', 'probe', 60_000), true, 'a replica that stops gives the lease up');
  await probe.dropLease('mesh', 'probe');
  await untilEvent(() => c.leading(), [c.changes], 'the next replica takes the lease at its next ask', { timeoutMs: WAIT_MS });
  const before = b.published.length;
  await heartbeats(2);
  assert.equal(b.published.length, before, 'the stopped holder publishes no more');
  assert.ok(c.published.length >= 1);
});

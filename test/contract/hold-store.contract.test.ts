// One contract for the HoldStore port (nodes/models/hold-store.ts), run against both
// implementations: MemoryHoldStore (a single gateway, its clock injected) and RedisStore on a real
// redis-server ([cluster]: a key per hold, PX its length, the store's clock). A hold is listed with
// what is left of it (never more than its length, always > 0) and who made it; a second put
// replaces the first, a `released` record too (listed as long as it was written for); the store
// ends a record after its length; another client of the same store (another replica) reads and
// writes them alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryHoldStore, type HoldStore } from '#src/nodes/index.ts';
import { redisStoresForFile } from '#test/fixtures/redis-stores.ts';
import { eventually } from '#test/fixtures/http.ts';

const { storeFor } = redisStoresForFile();

interface Rig {
  /** Two clients of one store (two replicas; for memory, the same one). */
  readonly a: HoldStore;
  readonly b: HoldStore;
  readonly scope: 'cluster' | 'gateway';
  /** Lets `ms` pass on the store's clock and waits until it has (memory: the injected clock; Redis: until its TTLs ran). */
  readonly pass: (ms: number, gone: () => Promise<boolean>) => Promise<void>;
}

const rigs: Record<string, () => Promise<Rig>> = {
  memory: async () => {
    const clock = { now: 1_000 };
    const store = new MemoryHoldStore(() => clock.now);
    return {
      a: store,
      b: store,
      scope: 'gateway',
      pass: async (ms) => {
        clock.now += ms;
      },
    };
  },
  redis: async () => {
    const prefix = `holds${Math.random().toString(36).slice(2, 8)}:`;
    const [a, b] = await Promise.all([storeFor('r0', prefix), storeFor('r1', prefix)]);
    assert.ok(a && b);
    return { a, b, scope: 'cluster', pass: (_ms, gone) => eventually(gone, 30_000, 'the store ended the hold') };
  },
};

for (const [name, make] of Object.entries(rigs)) {
  test(`${name}: a hold is listed with what is left of it and its replica; a put replaces it, a release too, from any client`, async () => {
    const { a, b, scope } = await make();
    assert.equal(a.holdsScope, scope);
    assert.deepEqual(await a.listHolds(), []);
    await a.putHold({ node: 'router', model: 'extra', kind: 'loaded', replica: 'r0', forMs: 600_000 });
    await a.putHold({ node: 'a-node', model: 'x:y/z', kind: 'unloaded', replica: 'r0', forMs: 300_000 });
    const listed = await b.listHolds();
    assert.deepEqual(
      listed.map((h) => [h.node, h.model, h.kind, h.replica, h.forMs]),
      [
        ['a-node', 'x:y/z', 'unloaded', 'r0', 300_000],
        ['router', 'extra', 'loaded', 'r0', 600_000],
      ],
      'by node and model',
    );
    for (const h of listed) assert.ok(h.leftMs > 0 && h.leftMs <= h.forMs, `left ${h.leftMs} of ${h.forMs}`);
    await b.putHold({ node: 'router', model: 'extra', kind: 'unloaded', replica: 'r1', forMs: 60_000 });
    assert.deepEqual(
      (await a.listHolds()).filter((h) => h.node === 'router').map((h) => [h.kind, h.replica, h.forMs]),
      [['unloaded', 'r1', 60_000]],
      'replaced',
    );
    await b.putHold({ node: 'router', model: 'extra', kind: 'released', replica: 'r1', forMs: 600_000 });
    await b.putHold({ node: 'router', model: 'never-held', kind: 'released', replica: 'r1', forMs: 600_000 });
    assert.deepEqual(
      (await a.listHolds()).map((h) => [h.model, h.kind]),
      [
        ['x:y/z', 'unloaded'],
        ['extra', 'released'],
        ['never-held', 'released'],
      ],
    );
  });

  test(`${name}: the store ends a hold after its length`, async () => {
    const { a, b, pass } = await make();
    // 5 s, not less: on a busy machine a shorter hold can run out (Redis's real TTL) before the first listing.
    await a.putHold({ node: 'router', model: 'short', kind: 'loaded', replica: 'r0', forMs: 5_000 });
    await a.putHold({ node: 'router', model: 'long', kind: 'loaded', replica: 'r0', forMs: 600_000 });
    assert.deepEqual(
      (await b.listHolds()).map((h) => h.model),
      ['long', 'short'],
    );
    await pass(5_000, async () => !(await b.listHolds()).some((h) => h.model === 'short'));
    assert.deepEqual(
      (await b.listHolds()).map((h) => h.model),
      ['long'],
    );
  });
}

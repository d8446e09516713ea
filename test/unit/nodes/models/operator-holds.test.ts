// OperatorHolds over a HoldStore (operator-holds.ts): reads are this replica's word at once and the
// store's listing once per round; a listing older than this replica's write never undoes it; a
// store that fails leaves the holds this replica knows (its own and the others' as last read, to
// their end), says why, and is written again on the next round; the holds made before [cluster]
// joined are written to its store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryHoldStore, OperatorHolds, type HoldRecord, type HoldStore, type StoredHold } from '#src/nodes/index.ts';

/** A cluster store of fake replicas: `down` fails every call; `gate` holds a listing until released. */
class FakeStore implements HoldStore {
  readonly holdsScope = 'cluster';
  readonly holds = new Map<string, StoredHold>();
  down: string | undefined;
  gate: Promise<void> | undefined;
  async putHold(hold: HoldRecord): Promise<void> {
    if (this.down !== undefined) throw new Error(this.down);
    this.holds.set(`${hold.node}/${hold.model}`, { ...hold, leftMs: hold.forMs });
  }
  async listHolds(): Promise<StoredHold[]> {
    if (this.down !== undefined) throw new Error(this.down);
    const snapshot = [...this.holds.values()];
    await this.gate;
    return snapshot;
  }
}

const now = (): number => 10_000;

test("another replica's hold is read at the round, with its end and replica; a release through any replica ends it here at the next round", async () => {
  const store = new FakeStore();
  const holds = new OperatorHolds(store, 'r1');
  store.holds.set('router/extra', {
    node: 'router',
    model: 'extra',
    kind: 'loaded',
    replica: 'r0',
    forMs: 600_000,
    leftMs: 500_000,
  });
  assert.equal(holds.held('router', 'extra', 10_000), undefined, 'not read before a round');
  await holds.sync(now);
  assert.equal(holds.held('router', 'extra', 10_000), 'loaded');
  assert.deepEqual(holds.list(10_000), [
    { node: 'router', model: 'extra', kind: 'loaded', replica: 'r0', sinceMs: -90_000, untilMs: 510_000 },
  ]);
  assert.deepEqual(holds.state(), { scope: 'cluster', lost: null });
  store.holds.delete('router/extra');
  await holds.sync(now);
  assert.equal(holds.held('router', 'extra', 10_000), 'loaded', 'a record the store lost is no release: kept to its end');
  store.holds.set('router/extra', {
    node: 'router',
    model: 'extra',
    kind: 'released',
    replica: 'r2',
    forMs: 600_000,
    leftMs: 600_000,
  });
  await holds.sync(now);
  assert.equal(holds.held('router', 'extra', 10_000), undefined, 'released through r2');
  holds.hold('router', 'mine', 'unloaded', 10_000, 600_000);
  await holds.written();
  assert.equal(store.holds.get('router/mine')?.kind, 'unloaded');
  holds.release('router', 'mine', 20_000, 60_000);
  await holds.written();
  assert.deepEqual(
    [store.holds.get('router/mine')?.kind, store.holds.get('router/mine')?.forMs],
    ['released', 590_000],
    'kept as long as the hold had left',
  );
});

test('a hold of this replica the store lost (restarted empty) is written again; one near its end is let end', async () => {
  const store = new FakeStore();
  const holds = new OperatorHolds(store, 'r0');
  holds.hold('router', 'extra', 'loaded', 0, 600_000);
  holds.hold('router', 'ending', 'loaded', 0, 10_500);
  await holds.written();
  store.holds.clear();
  await holds.sync(now);
  await holds.written();
  assert.deepEqual(
    [...store.holds.values()].map((h) => [h.model, h.replica, h.forMs]),
    [['extra', 'r0', 590_000]],
  );
  assert.equal(holds.held('router', 'extra', 10_000), 'loaded');
});

test("a listing asked before this replica's hold (or release) was written does not undo it", async () => {
  const store = new FakeStore();
  const holds = new OperatorHolds(store, 'r0');
  let open: () => void = () => undefined;
  store.gate = new Promise((resolve) => (open = resolve));
  const round = holds.sync(now);
  await new Promise((resolve) => setImmediate(resolve));
  holds.hold('router', 'extra', 'loaded', 10_000, 600_000);
  open();
  await round;
  assert.equal(holds.held('router', 'extra', 10_000), 'loaded', "the stale listing lacked it; this replica's word stands");
  store.gate = undefined;
  await holds.sync(now);
  assert.equal(holds.held('router', 'extra', 10_000), 'loaded', 'and the store has it now');
  assert.equal(store.holds.get('router/extra')?.replica, 'r0');
  store.gate = new Promise((resolve) => (open = resolve));
  const again = holds.sync(now);
  await new Promise((resolve) => setImmediate(resolve));
  holds.release('router', 'extra', 10_000, 600_000);
  open();
  await again;
  assert.equal(holds.held('router', 'extra', 10_000), undefined, 'a release after the listing was asked stands too');
  assert.equal(store.holds.get('router/extra')?.kind, 'released');
});

test('a lost store: the holds this replica knows stand (with the reason); its own are written again once the store answers', async () => {
  const store = new FakeStore();
  const holds = new OperatorHolds(store, 'r0');
  store.holds.set('router/other', {
    node: 'router',
    model: 'other',
    kind: 'unloaded',
    replica: 'r1',
    forMs: 600_000,
    leftMs: 600_000,
  });
  await holds.sync(now);
  store.down = 'connect ECONNREFUSED 127.0.0.1:16379';
  holds.hold('router', 'extra', 'loaded', 10_000, 600_000);
  await holds.written();
  assert.equal(holds.unwritten('router', 'extra'), true);
  await holds.sync(now);
  assert.deepEqual(holds.state(), { scope: 'cluster', lost: 'connect ECONNREFUSED 127.0.0.1:16379' });
  assert.equal(holds.held('router', 'extra', 10_000), 'loaded', 'its own hold stands');
  assert.equal(holds.held('router', 'other', 10_000), 'unloaded', "the other replica's, as last read, stands to its end");
  assert.equal(holds.held('router', 'other', 610_000), undefined);
  store.down = undefined;
  await holds.sync(now);
  assert.deepEqual(holds.state(), { scope: 'cluster', lost: null });
  assert.equal(holds.unwritten('router', 'extra'), false);
  assert.equal(store.holds.get('router/extra')?.kind, 'loaded', 'written again');
  assert.equal(holds.held('router', 'extra', 10_000), 'loaded');
});

test("holds made before [cluster] joined are written to its store under this replica's name", async () => {
  let clock = 0;
  const holds = new OperatorHolds(new MemoryHoldStore(() => clock));
  const hold = holds.hold('router', 'extra', 'loaded', 0, 600_000);
  assert.equal(hold.replica, null);
  assert.deepEqual(holds.state(), { scope: 'gateway', lost: null });
  clock = 100_000;
  const store = new FakeStore();
  holds.share(store, 'r0', 100_000);
  await holds.written();
  assert.deepEqual(
    [...store.holds.values()].map((h) => [h.model, h.replica, h.forMs]),
    [['extra', 'r0', 500_000]],
  );
  await holds.sync(() => clock);
  assert.equal(holds.held('router', 'extra', clock), 'loaded');
  assert.equal(holds.list(clock)[0]?.replica, 'r0');
});

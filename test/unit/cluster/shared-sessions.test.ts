// [cluster] sessions shared through the store (cluster/shared-sessions.ts over the routing's
// session table): placed, moved and refreshed entries are written, a session's entry is read before
// routing (an answer's only on a miss), what the store holds replaces the local entry, and a store
// that fails — or answers nonsense — leaves the local table as it is, logged once, never thrown.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SharedSessions, type SessionStore } from '#src/cluster/index.ts';
import { sessionTargetAnswer } from '#src/cluster/store-answers.ts';
import { SessionTable } from '#src/routing/index.ts';

const TTL = 1000;

class FakeStore implements SessionStore {
  readonly held = new Map<number, string>();
  readonly writes: string[] = [];
  reads = 0;
  failing = false;
  async putSession(key: number, target: string, ttlMs: number): Promise<void> {
    if (this.failing) throw new Error('store down');
    this.writes.push(`${key}=${target}/${ttlMs}`);
    this.held.set(key, target);
  }
  async getSession(key: number): Promise<string | undefined> {
    this.reads += 1;
    if (this.failing) throw new Error('store down');
    return this.held.get(key);
  }
}

function logger(): { warned: string[]; infos: string[]; warn: (o: object, m: string) => void; info: (m: string) => void } {
  const warned: string[] = [];
  const infos: string[] = [];
  return { warned, infos, warn: (_o, m) => void warned.push(m), info: (m) => void infos.push(m) };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('placed, moved and refreshed past half the TTL are written; kept turns are not', async () => {
  const store = new FakeStore();
  const table = new SessionTable();
  table.share(new SharedSessions(store, logger()), () => TTL);
  table.set(1, 'n0', 0); // placed
  table.set(1, 'n0', 100); // kept
  table.set(1, 'n1', 200); // moved
  table.set(1, 'n1', 600); // kept, 400 ms after its last write
  table.set(1, 'n1', 701); // kept, 501 ms after: refreshed
  await settle();
  assert.deepEqual(store.writes, ['1=n0/1000', '1=n1/1000', '1=n1/1000']);
});

test("a session's entry is read before routing and replaces the local one; an answer's only on a miss", async () => {
  const store = new FakeStore();
  const table = new SessionTable();
  table.share(new SharedSessions(store, logger()), () => TTL);
  table.set(1, 'n0', 0);
  table.set(2, 'n2', 0);
  await settle();
  store.writes.length = 0;
  store.held.set(1, 'n1'); // another replica moved the session
  store.held.set(2, 'n0'); // never differs for a real answer: proves the local one is not read again
  await table.readIn([1], [2], 10);
  assert.equal(table.get(1, 10, TTL), 'n1');
  assert.equal(table.get(2, 10, TTL), 'n2');
  assert.equal(store.reads, 1);
  assert.equal(table.readIn([], [2], 10), undefined, 'nothing to read: no promise');
  await table.readIn([], [3], 10);
  assert.equal(table.get(3, 10, TTL), undefined, 'none in the store: still none');
  await settle();
  assert.deepEqual(store.writes, [], 'what was read is not written back');
});

test('a store that fails keeps the local table: nothing thrown, logged once until it answers again', async () => {
  const store = new FakeStore();
  const log = logger();
  const table = new SessionTable();
  table.share(new SharedSessions(store, log), () => TTL);
  store.failing = true;
  table.set(1, 'n0', 0);
  await table.readIn([1], [], 10);
  await table.readIn([1], [], 20);
  await settle();
  assert.equal(table.get(1, 20, TTL), 'n0');
  assert.equal(log.warned.length, 1, log.warned.join('\n'));
  store.failing = false;
  await table.readIn([1], [], 30);
  assert.equal(log.infos.length, 1);
});

test("a session read answers a node's name, `site <id>` or nil; anything else is a store error naming it", () => {
  assert.equal(sessionTargetAnswer('gpu-1'), 'gpu-1');
  assert.equal(sessionTargetAnswer('site c'), 'site c');
  assert.equal(sessionTargetAnswer(null), undefined);
  for (const bad of ['', 'a b c', 42, 'x'.repeat(80), 'site \nc'])
    assert.throws(() => sessionTargetAnswer(bad), /session read \(GET\)/, String(bad));
});

test('without a share the table reads nothing and writes nothing', () => {
  const table = new SessionTable();
  table.set(1, 'n0', 0);
  assert.equal(table.readIn([1], [2], 0), undefined);
});

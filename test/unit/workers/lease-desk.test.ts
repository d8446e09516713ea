// The owner's desk for one worker: admissions go through the one scheduler, leases come back by id
// exactly once, and a worker that goes away returns everything it held.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView } from '#src/nodes/index.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import type { Admission, LoadOutcome, QueueSettings } from '#src/scheduler/index.ts';
import { LeaseDesk } from '#src/workers/lease-desk.ts';
import type { OwnerMessage } from '#src/workers/protocol.ts';
import { request } from '#test/fixtures/builders.ts';

const SETTINGS: QueueSettings = { queueTimeoutMs: 1_000, maxQueue: 10, missWaitMs: 0, swapAfterMs: 0, loadTimeoutMs: 5_000 };
const REQ: RouteRequest = request('m', { promptTokens: 10, maxTokens: 5, completionReserveTokens: 0 });
const NODE = { spec: { name: 'n1' } } as unknown as NodeView;

/** A scheduler whose admissions the test settles by hand, recording releases, settles and aborts. */
function fakeScheduler() {
  const asked: { signal: AbortSignal; resolve: (a: Admission) => void }[] = [];
  const released: number[] = [];
  const settled: LoadOutcome[] = [];
  let leases = 0;
  const admitted = (withLoad: boolean): Admission => {
    leases += 1;
    const lease = leases;
    return {
      kind: 'admitted',
      node: NODE,
      route: { policy: 'p', reason: 'r' },
      waitedMs: 3,
      load: withLoad ? { timeoutMs: 777, settle: (o) => settled.push(o) } : undefined,
      release: () => released.push(lease),
    };
  };
  const scheduler = {
    admit: (_req: RouteRequest, _s: QueueSettings, signal: AbortSignal): Promise<Admission> =>
      new Promise((resolve) => asked.push({ signal, resolve })),
  };
  return { scheduler, asked, released, settled, admitted };
}

function deskWith(fake: ReturnType<typeof fakeScheduler>) {
  const sent: OwnerMessage[] = [];
  let synced = 0;
  const desk = new LeaseDesk({
    scheduler: fake.scheduler,
    send: (m) => sent.push(m),
    beforeAdmitted: () => (synced += 1),
    onError: () => {},
  });
  return { desk, sent, synced: () => synced };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('an admission is answered after the fleet is synced, and its lease returns once, by id', async () => {
  const fake = fakeScheduler();
  const { desk, sent, synced } = deskWith(fake);
  desk.admit(1, REQ, SETTINGS, true);
  fake.asked[0]?.resolve(fake.admitted(true));
  await tick();
  assert.equal(synced(), 1);
  assert.deepEqual(sent, [
    { t: 'admitted', id: 1, node: 'n1', route: { policy: 'p', reason: 'r' }, waitedMs: 3, loadTimeoutMs: 777 },
  ]);
  assert.equal(desk.held(), 1);
  desk.release(1);
  desk.release(1);
  desk.settle(1, 'loaded');
  desk.settle(1, 'failed');
  assert.deepEqual(fake.released, [1]);
  assert.deepEqual(fake.settled, ['loaded']);
  assert.equal(desk.held(), 0);
  assert.equal(desk.admitted(), 1);
});

test('a refusal passes through with its reason and exclusions', async () => {
  const fake = fakeScheduler();
  const { desk, sent } = deskWith(fake);
  desk.admit(7, REQ, SETTINGS, true);
  const excluded = [{ node: 'n1', filter: 'has-capacity', code: 'no_slot' as const }];
  fake.asked[0]?.resolve({ kind: 'refused', reason: 'queue_full', excluded, waitedMs: 0 });
  await tick();
  assert.deepEqual(sent, [{ t: 'refused', id: 7, reason: 'queue_full', excluded, waitedMs: 0 }]);
});

test('an abort reaches the scheduler only while the admission is being decided', async () => {
  const fake = fakeScheduler();
  const { desk } = deskWith(fake);
  desk.admit(1, REQ, SETTINGS, true);
  desk.abort(1);
  assert.equal(fake.asked[0]?.signal.aborted, true);
  desk.admit(2, REQ, SETTINGS, true);
  fake.asked[1]?.resolve(fake.admitted(false));
  await tick();
  desk.abort(2);
  assert.equal(fake.asked[1]?.signal.aborted, false);
});

test('a worker that goes away returns every lease and load it held, and aborts what it waited for', async () => {
  const fake = fakeScheduler();
  const { desk, sent } = deskWith(fake);
  desk.admit(1, REQ, SETTINGS, true);
  desk.admit(2, REQ, SETTINGS, true);
  desk.admit(3, REQ, SETTINGS, true);
  fake.asked[0]?.resolve(fake.admitted(true));
  fake.asked[1]?.resolve(fake.admitted(false));
  await tick();
  desk.close();
  assert.deepEqual(fake.released.sort(), [1, 2]);
  assert.deepEqual(fake.settled, ['failed']);
  assert.equal(fake.asked[2]?.signal.aborted, true);
  // Admitted after the worker left (the scheduler was already deciding): given straight back, never sent.
  const before = sent.length;
  fake.asked[2]?.resolve(fake.admitted(true));
  await tick();
  assert.deepEqual(fake.released.sort(), [1, 2, 3]);
  assert.deepEqual(fake.settled, ['failed', 'failed']);
  assert.equal(sent.length, before);
  desk.admit(4, REQ, SETTINGS, true);
  assert.equal(fake.asked.length, 3, 'a closed desk takes no more admissions');
});
